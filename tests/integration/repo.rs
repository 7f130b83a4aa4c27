//! Repository discovery, alternates, loose objects (probe and cache).
use std::path::{Path, PathBuf};

use odb_index::repo::{self, AlternateProblem, Repository};
use odb_index::testing::{LooseCache, LooseDb};
use odb_index::{Error, HashKind, ObjectId};
use odb_index_testkit::{
    absent_ids, all_objects, fast_import_blobs, git, git_cmd, git_stdin, init_repo, objects_dir,
};

fn allocations_on_this_thread() -> u64 {
    odb_index_testkit::alloc::thread_allocs()
}

// ---------------------------------------------------------------------------------------------------------
// Helpers.

fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("canonicalize {}: {e}", p.display()))
}

fn id(hex: &str) -> ObjectId {
    hex.trim().parse().unwrap()
}

/// `git hash-object -w --stdin` in `repo`.
fn write_blob(repo: &Path, data: &str) -> ObjectId {
    id(&git_stdin(
        repo,
        &["hash-object", "-w", "--stdin"],
        data.as_bytes(),
    ))
}

/// `git hash-object --stdin` (compute only) in `repo`.
fn hash_blob(repo: &Path, data: &str) -> ObjectId {
    id(&git_stdin(
        repo,
        &["hash-object", "--stdin"],
        data.as_bytes(),
    ))
}

/// Whether `git cat-file -e <id>` in `repo` succeeds.
fn git_has(repo: &Path, oid: &ObjectId) -> bool {
    git_cmd(repo)
        .args(["cat-file", "-e", &oid.to_string()])
        .output()
        .expect("run git")
        .status
        .success()
}

fn expect_not_a_repo(path: &Path) {
    match repo::discover(path) {
        Err(Error::NotARepository { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(!reason.is_empty());
            let msg = Error::NotARepository { path: p, reason }.to_string();
            assert!(msg.contains(&path.display().to_string()), "{msg}");
        }
        other => panic!("{}: expected NotARepository, got {other:?}", path.display()),
    }
}

mod alternates;
mod discover;
mod loose;
