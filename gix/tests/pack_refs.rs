//! Issue 47, item 6: a ref that exists the whole time is found while `git pack-refs --all` moves it from loose to
//! `packed-refs` in the middle of the lookup, in every form a name takes it (direct, through a symbolic ref, git's
//! short forms, `name~0`), as git finds it; and when the new `packed-refs` has the old one's modification time.
//! The move is made at the exact point by the hook of the feature `test-hooks` (between the lookup's
//! `packed-refs` snapshot and its loose reads), so each run is deterministic. Control: `git rev-parse`.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use odb_index_gix::Repository;
use odb_index_testkit::{fast_import_history, git, init_repo};

/// Branches `b1` (packed, so that `packed-refs` exists) and `b3` (loose, at `b1~1`), and the symbolic ref
/// `refs/heads/sym` to `b3` (loose; `pack-refs` never packs a symbolic ref).
fn repo(format: &str) -> tempfile::TempDir {
    let repo = init_repo(format, false);
    let r = repo.path();
    fast_import_history(r, 4, 1, "b1");
    git(r, &["pack-refs", "--all"]);
    git(r, &["branch", "b3", "b1~1"]);
    git(r, &["symbolic-ref", "refs/heads/sym", "refs/heads/b3"]);
    repo
}

fn loose_b3(r: &Path) -> PathBuf {
    r.join(".git/refs/heads/b3")
}

/// The forms of issue 47's item 6 that the adapter resolves (`--batch` and `--threads 2 --buffer` are the
/// command's: cli/tests/cli/pack_refs.rs).
/// Each with the hook's point: 1 before the name's loose reads, 2 before the symbolic ref's target is read.
const FORMS: &[(&str, usize)] = &[
    ("b3", 1),
    ("sym", 1),
    ("sym", 2),
    ("heads/b3", 1),
    ("b3~0", 1),
    ("refs/heads/b3", 1),
    ("sym^{tree}", 2),
];

/// Each form twice: `b3` only loose (git's answer: the ref; the old code's: `missing`), and `b3` loose over an
/// older value in `packed-refs` (git's answer: the loose value; the old code's: the older value).
#[test]
fn a_ref_packed_during_its_lookup_is_found() {
    for format in ["sha1", "sha256"] {
        let repo = repo(format);
        let r = repo.path();
        for &(form, point) in FORMS {
            for older_packed in [false, true] {
                git(r, &["update-ref", "-d", "refs/heads/b3"]);
                if older_packed {
                    git(r, &["update-ref", "refs/heads/b3", "b1~2"]);
                    git(r, &["pack-refs", "--all"]);
                }
                git(r, &["update-ref", "refs/heads/b3", "b1~1"]);
                git(r, &["symbolic-ref", "refs/heads/sym", "refs/heads/b3"]);
                assert!(loose_b3(r).is_file(), "{format} {form}: b3 is loose");
                let want = git(r, &["rev-parse", "--verify", form]);
                let case =
                    format!("{format} {form} at {point}, older value packed: {older_packed}");

                let odb = Repository::discover(r).unwrap();
                let ran = Arc::new(AtomicBool::new(false));
                let (dir, flag) = (r.to_owned(), Arc::clone(&ran));
                odb.refs().before_loose_refs_once(point, move || {
                    git(&dir, &["pack-refs", "--all"]);
                    flag.store(true, Ordering::Relaxed);
                });
                let got = odb.resolve(form).unwrap();
                assert!(ran.load(Ordering::Relaxed), "{case}: the hook ran");
                assert!(!loose_b3(r).exists(), "{case}: b3 was packed");
                assert_eq!(
                    got.map(|id| id.to_string()),
                    Some(want.trim().to_owned()),
                    "{case}: found while git pack-refs moved it"
                );
            }
        }
    }
}

/// gix-ref's own cache of `packed-refs` compares the modification time only: a `packed-refs` rewritten in the
/// same clock tick (a file system with coarse timestamps) was not read again, and the refs it took from loose
/// files answered `missing` for as long as the `Refs` lived. The stamp now has the inode, size and ctime too.
#[test]
fn packed_refs_rewritten_with_the_same_mtime_is_read_again() {
    let repo = repo("sha1");
    let r = repo.path();
    let want = git(r, &["rev-parse", "b3"]);
    let odb = Repository::discover(r).unwrap();
    assert!(odb.resolve("b1").unwrap().is_some()); // packed-refs read once
    let packed = r.join(".git/packed-refs");
    let mtime = std::fs::metadata(&packed).unwrap().modified().unwrap();
    git(r, &["pack-refs", "--all"]);
    assert!(!loose_b3(r).exists());
    let file = std::fs::File::options().write(true).open(&packed).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    assert_eq!(
        std::fs::metadata(&packed).unwrap().modified().unwrap(),
        mtime
    );
    for form in ["b3", "sym", "b3~0"] {
        assert_eq!(
            odb.resolve(form).unwrap().map(|id| id.to_string()),
            Some(want.trim().to_owned()),
            "{form}: found in the rewritten packed-refs"
        );
    }
}
