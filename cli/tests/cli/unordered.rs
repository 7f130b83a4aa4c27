//! Issue 38, item 11: `--batch-all-objects --unordered` prints the objects in git's order of packs, line for line
//! (`Handle::packs_in_git_order`): git sorts its packs by the `.pack`'s modification time in whole seconds,
//! newest first, and packs of the same second keep the order of its list (the last read from the directory
//! first); the packs of a multi-pack-index come before them all. The mtimes are set by the test (to tie within a
//! second and to differ), each case compared with `git cat-file` itself.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use odb_index_testkit::{fast_import_blobs, git, init_repo};

use super::as_git::git_run;
use super::odb;

const UNORDERED: [&str; 3] = [
    "--batch-all-objects",
    "--unordered",
    "--batch-check=%(objectname) %(objecttype)",
];

/// The `.idx` files of `repo`'s pack directory in the order the directory lists them (`readdir`).
fn idx_in_listing_order(repo: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(repo.join("objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .collect()
}

/// Set the modification time of the `.pack` of `idx` to `secs` seconds and `millis` ms after a fixed time.
fn set_mtime(idx: &Path, secs: u64, millis: u64) {
    let t = SystemTime::UNIX_EPOCH
        + Duration::from_secs(1_700_000_000 + secs)
        + Duration::from_millis(millis);
    let f = std::fs::File::options()
        .write(true)
        .open(idx.with_extension("pack"))
        .unwrap();
    f.set_modified(t).unwrap();
}

/// `odb-index batch-check --batch-all-objects --unordered` and git's, both exit 0: (ours, git's).
fn both_unordered(repo: &Path) -> (String, String) {
    let (git_out, git_err, git_code) = git_run(repo, &UNORDERED, b"");
    assert_eq!(git_code, Some(0), "{}", git_err);
    let mut args = vec![std::ffi::OsStr::new("batch-check")];
    args.extend(UNORDERED.iter().map(std::ffi::OsStr::new));
    args.push(repo.as_os_str());
    let out = odb(&args, b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(git_out).unwrap(),
    )
}

/// A bare repository with `n` packs of 3 blobs each (with their trees and commit), no object in two.
fn packs(n: u64) -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    for seed in 0..n {
        fast_import_blobs(repo.path(), 3, seed, &format!("b{seed}"));
    }
    repo
}

/// Four packs modified in the same second, the first the directory lists the newest to the nanosecond: the
/// command printed them newest first to the nanosecond (the directory's order here), git in the reverse of the
/// directory's order. Then one older by a second and one newer by a second around a tie of two. Each time git's
/// lines, in git's order.
#[test]
fn unordered_orders_packs_as_git_by_whole_seconds_keeping_ties() {
    let repo = packs(4);
    let r = repo.path();
    let listed = idx_in_listing_order(r);
    assert_eq!(listed.len(), 4);
    for (i, idx) in listed.iter().enumerate() {
        set_mtime(idx, 10, 900 - 200 * i as u64);
    }
    let (out, git_out) = both_unordered(r);
    assert_eq!(out, git_out, "four packs of the same second");
    set_mtime(&listed[0], 9, 500);
    set_mtime(&listed[1], 10, 100);
    set_mtime(&listed[2], 10, 800);
    set_mtime(&listed[3], 11, 0);
    let (out, git_out) = both_unordered(r);
    assert_eq!(out, git_out, "older, a tie of two, newer");
}

/// With a multi-pack-index over three packs and two packs written after it: git lists the multi-pack-index's
/// packs first (its last pack first), then the others newest first.
#[test]
fn unordered_orders_packs_as_git_with_a_multi_pack_index() {
    let repo = packs(3);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    fast_import_blobs(r, 3, 10, "c");
    fast_import_blobs(r, 3, 11, "d");
    for (i, idx) in idx_in_listing_order(r).iter().enumerate() {
        set_mtime(idx, 10 + (i as u64 % 2), 100 * i as u64);
    }
    let (out, git_out) = both_unordered(r);
    assert_eq!(out, git_out);
}
