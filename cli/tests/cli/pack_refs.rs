//! Issue 47, item 6, through the command: a ref that exists the whole time answers as git's while
//! `git pack-refs --all` moves it from loose to `packed-refs` in the middle of its lookup, in the default mode,
//! `--batch`, `--buffer` and `--threads 2 --buffer`. The move is made at the exact point by the adapter's hook
//! (feature `test-hooks`, `ODB_INDEX_TEST_PACK_REFS=<point>:<dir>`, gix/src/names.rs); gix/tests/pack_refs.rs
//! has the forms in process.

use std::ffi::OsStr;
use std::process::Command;

use odb_index_testkit::{fast_import_history, git, init_repo};

use super::as_git::git_run;
use super::{BIN, run_with_stdin};

/// `b1` packed, `b3` loose only, `refs/heads/sym` a symbolic ref to `b3`.
fn repo() -> tempfile::TempDir {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 4, 1, "b1");
    git(r, &["pack-refs", "--all"]);
    git(r, &["branch", "b3", "b1~1"]);
    git(r, &["symbolic-ref", "refs/heads/sym", "refs/heads/b3"]);
    repo
}

#[test]
fn a_ref_packed_during_its_lookup_answers_as_git() {
    let cases: &[(&str, usize)] = &[("b3", 1), ("sym", 2), ("heads/b3", 1), ("b3~0", 1)];
    let modes: &[&[&str]] = &[
        &[],
        &["--batch"],
        &["--buffer"],
        &["--threads", "2", "--buffer"],
    ];
    for &(name, point) in cases {
        for mode in modes {
            let repo = repo();
            let r = repo.path();
            // With threads the first name is not surely the first looked up: the name alone.
            let input = if mode.contains(&"--threads") {
                format!("{name}\n")
            } else {
                format!("{name}\nb1\nsym\n")
            };
            let git_mode = if mode.contains(&"--batch") {
                "--batch"
            } else {
                "--batch-check"
            };
            let (want, _, code) = git_run(r, &[git_mode], input.as_bytes());
            assert_eq!(code, Some(0));
            assert!(!String::from_utf8_lossy(&want).contains("missing"));

            let mut c = Command::new(BIN);
            c.env(
                "ODB_INDEX_TEST_PACK_REFS",
                format!("{point}:{}", r.display()),
            )
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .arg("batch-check")
            .args(mode.iter().map(OsStr::new))
            .arg(r);
            let out = run_with_stdin(c, input.as_bytes());
            let case = format!("{name} at {point}, {mode:?}");
            assert!(
                out.status.success(),
                "{case}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!r.join(".git/refs/heads/b3").exists(), "{case}: b3 packed");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&want),
                "{case}: answers as git's"
            );
        }
    }
}
