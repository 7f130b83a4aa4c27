//! Names as git reads them through the adapter (`Repository::resolve`, `Refs::resolve_bytes`), each
//! compared with git run on the same repository: a full-length hex name before a ref, `rev:path` read literally
//! and relative to the directory discovery started from.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use odb_index_gix::{Error, Repository};
use odb_index_testkit::{git, git_cmd, init_repo};

/// A SHA-1 and a SHA-256 repository of one commit: `a.txt`, `dir/b.txt`, `dir/sub/c.txt`, `\u{e9}t\u{e9}.txt`.
fn repos() -> Vec<(tempfile::TempDir, (), &'static str)> {
    ["sha1", "sha256"]
        .into_iter()
        .map(|format| {
            let repo = init_repo(format, false);
            let r = repo.path();
            std::fs::create_dir_all(r.join("dir/sub")).unwrap();
            for (file, text) in [
                ("a.txt", "a\n"),
                ("dir/b.txt", "b\n"),
                ("dir/sub/c.txt", "c\n"),
                ("\u{e9}t\u{e9}.txt", "e\n"),
            ] {
                std::fs::write(r.join(file), text).unwrap();
            }
            git(r, &["add", "."]);
            git(r, &["commit", "-qm", "one"]);
            (repo, (), format)
        })
        .collect()
}

/// git's stdout for `args` with `input`, as bytes.
fn git_bytes(r: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = git_cmd(r)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut si = c.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || si.write_all(&input));
    let out = c.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// `Refs::resolve` takes a full-length hex name as an id before a ref spelled like it, as git
/// does, object or not: a blob's id answers the blob, an absent id (`~0`, `^{commit}`, `:a` after it too) nothing,
/// where a ref of that name names a commit.
#[test]
fn a_full_length_hex_name_is_an_id_before_a_ref_as_git() {
    for (repo, _alt, format) in repos() {
        let r = repo.path();
        let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
        let blob = git(r, &["rev-parse", "HEAD:a.txt"]).trim().to_owned();
        let absent = "0123456789abcdef".repeat(4)[..blob.len()].to_owned();
        for name in [&blob, &absent] {
            std::fs::write(r.join(".git/refs/heads").join(name), format!("{head}\n")).unwrap();
        }
        let names = [
            blob.clone(),
            format!("{blob}^{{}}"),
            absent.clone(),
            format!("{absent}~0"),
            format!("{absent}^{{commit}}"),
            format!("{absent}:a.txt"),
            format!("heads/{absent}"),
        ];
        let input: String = names.iter().map(|n| format!("{n}\n")).collect();
        let want = git_bytes(
            r,
            &["cat-file", "--batch-check=%(objectname)"],
            input.as_bytes(),
        );
        let want = String::from_utf8(want).unwrap();
        let found = Repository::discover(r).unwrap();
        for (name, want) in names.iter().zip(want.lines()) {
            let ours = found.resolve(name).unwrap().map(|id| id.to_string());
            let want = (!want.ends_with(" missing")).then(|| want.to_owned());
            assert_eq!(ours, want, "{format}: {name}");
        }
        assert_eq!(found.resolve(&blob).unwrap().unwrap().to_string(), blob);
    }
}

/// `Repository::resolve` reads `rev:path` literally as git does (`dir/sub/` the tree, `a.txt/`,
/// `dir//b.txt` and `.` nothing), a path not UTF-8 through `Refs::resolve_bytes`, and `./`, `../` relative to the
/// work tree's directory it was discovered from, as git run there reads them (`git -C <dir> rev-parse`).
#[test]
fn rev_paths_resolve_as_git_from_a_subdirectory() {
    for (repo, _alt, format) in repos() {
        let r = repo.path();
        for (at, names) in [
            (
                r.to_owned(),
                &[
                    "HEAD:dir/sub/",
                    "HEAD:a.txt/",
                    "HEAD:dir//b.txt",
                    "HEAD:.",
                    "HEAD:./dir/b.txt",
                    "HEAD:./",
                ][..],
            ),
            (
                r.join("dir"),
                &[
                    "HEAD:./b.txt",
                    "HEAD:../a.txt",
                    "HEAD:./sub/c.txt",
                    "HEAD:./",
                    "HEAD:b.txt",
                    "HEAD:..",
                ],
            ),
        ] {
            let found = Repository::discover(&at).unwrap();
            for name in names {
                let ours = found.resolve(name).unwrap().map(|id| id.to_string());
                let want = git_cmd(&at)
                    .args(["rev-parse", "--verify", "-q", name])
                    .output()
                    .unwrap();
                let want = want
                    .status
                    .success()
                    .then(|| String::from_utf8(want.stdout).unwrap().trim().to_owned());
                assert_eq!(ours, want, "{format}: {name} in {}", at.display());
            }
        }
        let found = Repository::discover(r.join("dir")).unwrap();
        assert!(matches!(
            found.resolve("HEAD:../../a.txt"),
            Err(Error::RelativePath {
                work_tree: Some(_),
                ..
            })
        ));
        let bare = Repository::discover(r.join(".git")).unwrap();
        assert!(matches!(
            bare.resolve("HEAD:./a.txt"),
            Err(Error::RelativePath {
                work_tree: None,
                ..
            })
        ));
        let name = b"HEAD:\xc3\xa9t\xc3\xa9.txt";
        let blob = found.refs().resolve_bytes(found.objects(), name).unwrap();
        assert_eq!(blob, found.resolve("HEAD:\u{e9}t\u{e9}.txt").unwrap());
        assert!(blob.is_some());
    }
}

/// A broken loose ref is passed over for the next of git's rules, with git's warning from
/// `Refs::take_warnings`; a symbolic ref chain stops at git's depth.
#[test]
fn broken_refs_are_passed_over_with_gits_warning() {
    for (repo, (), format) in repos() {
        let r = repo.path();
        let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
        std::fs::write(r.join(".git/refs/tags/main"), "").unwrap();
        git(r, &["update-ref", "refs/heads/r0", &head]);
        for i in 1..6 {
            let (this, prev) = (format!("refs/heads/r{i}"), format!("refs/heads/r{}", i - 1));
            git(r, &["symbolic-ref", &this, &prev]);
        }
        let found = Repository::discover(r).unwrap();
        let id = |name: &str| found.resolve(name).unwrap().map(|id| id.to_string());
        assert_eq!(id("main").as_deref(), Some(head.as_str()), "{format}");
        assert_eq!(
            found.refs().take_warnings(),
            ["ignoring broken ref refs/tags/main"]
        );
        assert_eq!(id("r4").as_deref(), Some(head.as_str()), "{format}");
        assert_eq!(id("r5"), None, "{format}");
        assert_eq!(
            found.refs().take_warnings(),
            ["ignoring dangling symref refs/heads/r5"]
        );
        assert!(found.refs().take_warnings().is_empty());
    }
}
