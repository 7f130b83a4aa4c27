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
    lookups_as_git(r);
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

/// What `odb-index verify <repo>` and `git multi-pack-index verify` say: the command's stdout after checking
/// both exit with the same code (0: git reads every file).
fn verify_as_git(repo: &Path) -> String {
    let git = odb_index_testkit::try_git(repo, &["multi-pack-index", "verify"], b"");
    let (out, err, code) = run(&[OsStr::new("verify"), repo.as_os_str()], b"");
    let out = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(
        code == Some(0),
        git.is_ok(),
        "git: {git:?}\nodb-index: {out}{err}"
    );
    out
}

/// Every object as `batch-check` and `git cat-file --batch-check` answer it, by id and with
/// `--batch-all-objects` (sorted and `--unordered`); the command warns of nothing.
fn lookups_as_git(repo: &Path) {
    let ids: String = all_objects(repo).into_iter().map(|id| id + "\n").collect();
    let (out, git_out) = both(repo, &["--batch-check"], ids.as_bytes());
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
        let (out, git_out) = both(repo, &args, b"");
        assert_eq!(sorted(&out), sorted(&git_out), "unordered {unordered}");
    }
    let all = [
        OsStr::new("batch-check"),
        OsStr::new("--batch-check"),
        repo.as_os_str(),
    ];
    let (_, err, code) = run(&all, ids.as_bytes());
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

/// Item 4 with a multi-pack-index: git writes the pack `\xff-pack-<hash>.idx` into `PNAM` as it is (bytes;
/// git's `cmp_idx_or_pack_name` compares them with `strcmp`), reads objects through it and `git
/// multi-pack-index verify` exits 0. The command refused the file ("the name of pack 1 is not UTF-8"): `verify`
/// exited 1 and lookups answered `missing` for the pack's objects. Now both answer as git, through the file.
#[test]
fn a_multi_pack_index_naming_a_pack_whose_name_is_not_utf8_is_read_as_git_reads_it() {
    let repo = two_packs(20);
    let r = repo.path();
    rename_pack(&idx_files(&r.join("objects"))[0], b"\xff-");
    odb_index_testkit::git(r, &["multi-pack-index", "write"]);
    let pnam = std::fs::read(r.join("objects/pack/multi-pack-index")).unwrap();
    assert!(
        pnam.windows(6).any(|w| w == b"\xff-pack"),
        "git wrote the name as it is"
    );
    lookups_as_git(r);
    let out = verify_as_git(r);
    let midx = r.join("objects/pack/multi-pack-index");
    let n = all_objects(r).len();
    assert!(
        out.contains(&format!("ok {} {n} objects", midx.display())),
        "{out}"
    );
    assert!(!out.contains("error"), "{out}");
}

/// The same in an incremental chain: a base layer naming `\xff-pack-<hash>.idx` and a layer above naming
/// `\xfe-pack-<hash>.idx`, each written by `git multi-pack-index write --incremental`.
#[test]
fn an_incremental_chain_naming_packs_whose_names_are_not_utf8_is_read_as_git_reads_it() {
    let repo = two_packs(20);
    let r = repo.path();
    rename_pack(&idx_files(&r.join("objects"))[0], b"\xff-");
    odb_index_testkit::git(r, &["multi-pack-index", "write", "--incremental"]);
    let before = idx_files(&r.join("objects"));
    fast_import_blobs(r, 20, 3, "c");
    let new = idx_files(&r.join("objects"))
        .into_iter()
        .find(|p| !before.contains(p))
        .unwrap();
    rename_pack(&new, b"\xfe-");
    odb_index_testkit::git(r, &["multi-pack-index", "write", "--incremental"]);
    let chain = r.join("objects/pack/multi-pack-index.d/multi-pack-index-chain");
    assert_eq!(std::fs::read_to_string(&chain).unwrap().lines().count(), 2);
    lookups_as_git(r);
    let out = verify_as_git(r);
    assert!(!out.contains("error"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("multi-pack-index-"))
            .count(),
        2,
        "{out}"
    );
}
