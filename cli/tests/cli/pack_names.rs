//! Issue 38, items 4 and 11: packs git reads whatever their names. git's `prepare_packed_git_one` takes every
//! `*.idx` of a pack directory with a `.pack` beside it (it skips only `.` and `..`): a name that is not UTF-8
//! (`pack-\xff<hash>.idx`) and the `.tmp-<pid>-pack-<hash>.idx` that `repack` leaves while writing. Lookups,
//! `--batch-all-objects` and `verify` answer from them as git does, each compared with `git cat-file` itself.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use odb_index_testkit::{
    all_objects, fast_import_blobs, idx_files, init_repo, rename_pack, show_index,
};

use super::as_git::git_run;
use super::odb;

/// A bare repository with two packs of `n` blobs each (and their commits and trees).
fn two_packs(n: usize) -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), n, 1, "a");
    fast_import_blobs(repo.path(), n, 2, "b");
    assert_eq!(idx_files(&repo.path().join("objects")).len(), 2);
    repo
}

/// `odb-index <args...>` on `input`: (stdout, stderr, exit code).
fn run(args: &[&OsStr], input: &[u8]) -> (Vec<u8>, String, Option<i32>) {
    let out = odb(args, input);
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// What `odb-index batch-check <args> <repo>` and `git cat-file <args>` answer for `input`: both, after
/// checking their exit codes are git's.
fn both(repo: &Path, args: &[&str], input: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (git_out, _, git_code) = git_run(repo, args, input);
    let mut all: Vec<&OsStr> = vec![OsStr::new("batch-check")];
    all.extend(args.iter().map(OsStr::new));
    all.push(repo.as_os_str());
    let (out, err, code) = run(&all, input);
    assert_eq!(code, git_code, "{err}");
    (out, git_out)
}

/// Every line of `out`, sorted.
fn sorted(out: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    v.sort_unstable();
    v
}

/// The `%(objectname)` lines of the ids `idx` lists (as `git show-index` reads it).
fn ids_of(idx: &Path) -> String {
    show_index(idx, "sha1")
        .into_iter()
        .map(|(id, _)| id + "\n")
        .collect()
}

/// Item 4: a pack named `pack-\xff<hash>` was ignored (its objects `missing`, `verify` silent about it); git
/// reads it. Now each of its ids is git's answer, `--batch-all-objects` (sorted and `--unordered`) lists what
/// git lists, `%(objectpack)` names the file quoted as git quotes a path, and `verify` checks it.
#[test]
fn a_pack_whose_name_is_not_utf8_is_read_as_git_reads_it() {
    let repo = two_packs(20);
    let r = repo.path();
    let idx = rename_pack(&idx_files(&r.join("objects"))[0], b"\xff-");
    let ids = ids_of(&idx);
    let (out, git_out) = both(r, &["--batch-check"], ids.as_bytes());
    assert!(!git_out.is_empty() && !String::from_utf8_lossy(&git_out).contains("missing"));
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&git_out)
    );
    for unordered in [false, true] {
        let mut args = vec!["--batch-all-objects", "--batch-check"];
        if unordered {
            args.push("--unordered");
        }
        let (out, git_out) = both(r, &args, b"");
        assert_eq!(sorted(&out), sorted(&git_out), "unordered {unordered}");
    }
    let first = ids.lines().next().unwrap();
    let all = [
        OsStr::new("batch-check"),
        OsStr::new("--batch-check=%(objectpack)"),
        r.as_os_str(),
    ];
    let (out, _, _) = run(&all, format!("{first}\n").as_bytes());
    let stem = idx.file_stem().unwrap().to_str().unwrap_or_default();
    assert!(stem.is_empty(), "the name is not UTF-8");
    let hash = &idx.file_stem().unwrap().as_bytes()[2..];
    let want = format!("\"\\377-{}.pack\"\n", String::from_utf8_lossy(hash));
    assert_eq!(String::from_utf8_lossy(&out), want);
    let (out, err, code) = run(&[OsStr::new("verify"), r.as_os_str()], b"");
    assert_eq!(code, Some(0), "{err}");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
    let n = ids.lines().count();
    assert!(
        out.contains(&format!("ok \"{}\" {n} objects", quoted(&idx))),
        "{out}"
    );
}

/// `path` as the command prints it: quoted, octal escapes, without the quotes around it.
fn quoted(path: &Path) -> String {
    let mut s = String::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            0x20..0x7f if b != b'"' && b != b'\\' => s.push(b as char),
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s
}

/// Item 11: `repack` writes its new pack as `.tmp-<pid>-pack-<hash>.{pack,idx}` before renaming it into place;
/// git 2.47 reads such a pack (`git cat-file` answers for an object only it holds), and `verify` checked it
/// while lookups skipped it (`missing`). Now lookups, `--batch-all-objects` and `verify` agree with git.
#[test]
fn a_temporary_pack_of_repack_is_read_as_git_reads_it() {
    let repo = two_packs(20);
    let r = repo.path();
    let idx = rename_pack(&idx_files(&r.join("objects"))[1], b".tmp-4242-");
    let ids = ids_of(&idx);
    let (out, git_out) = both(r, &["--batch-check"], ids.as_bytes());
    assert!(!git_out.is_empty() && !String::from_utf8_lossy(&git_out).contains("missing"));
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&git_out)
    );
    for unordered in [false, true] {
        let mut args = vec!["--batch-all-objects", "--batch-check"];
        if unordered {
            args.push("--unordered");
        }
        let (out, git_out) = both(r, &args, b"");
        assert_eq!(sorted(&out), sorted(&git_out), "unordered {unordered}");
    }
    assert!(ids.lines().all(|id| all_objects(r).iter().any(|a| a == id)));
    let (out, err, code) = run(&[OsStr::new("verify"), r.as_os_str()], b"");
    assert_eq!(code, Some(0), "{err}");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
    let n = ids.lines().count();
    assert!(
        out.contains(&format!("ok {} {n} objects", idx.display())),
        "{out}"
    );
}
