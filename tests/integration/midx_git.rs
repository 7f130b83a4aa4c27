//! The multi-pack-index reader and writer against files and repositories made by the real `git`.
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use odb_index::midx::MultiPackIndex;
use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::testing::{MultiPackIndexExt, read_pack_names};
use odb_index::{HashKind, LoadMode, ObjectId};
use odb_index_testkit::*;

fn kind_of(format: &str) -> HashKind {
    format.parse().unwrap()
}

fn midx_path(repo: &Path) -> PathBuf {
    objects_dir(repo).join("pack/multi-pack-index")
}

fn file_name(p: &Path) -> OsString {
    p.file_name().unwrap().to_owned()
}

/// For every id: the (idx name, offset) pairs of the packs listing it, from `git show-index`.
fn locations(idxs: &[PathBuf], format: &str) -> HashMap<String, Vec<(OsString, u64)>> {
    let mut m: HashMap<String, Vec<(OsString, u64)>> = HashMap::new();
    for idx in idxs {
        for (id, off) in show_index(idx, format) {
            m.entry(id).or_default().push((file_name(idx), off));
        }
    }
    m
}

/// Check `midx` against the packs it should cover (`covered`) and ids that must be absent.
fn check_against_git(midx: &MultiPackIndex, covered: &[PathBuf], format: &str) {
    let names: Vec<OsString> = covered.iter().map(|p| file_name(p)).collect();
    assert_eq!(midx.pack_names(), names.as_slice());
    let kind = kind_of(format);
    let locs = locations(covered, format);
    assert!(!locs.is_empty());
    assert_eq!(midx.len() as usize, locs.len());
    for (hex, places) in &locs {
        let id = ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap();
        let (pack, off) = midx
            .lookup(id.as_bytes())
            .unwrap_or_else(|| panic!("{hex} not found"));
        let name = &midx.pack_names()[pack as usize];
        assert!(
            places.iter().any(|(n, o)| n == name && *o == off),
            "{hex}: midx says {name:?} at {off}, git says {places:?}"
        );
    }
    for hex in absent_ids(3000, kind.hex_len(), 7) {
        if !locs.contains_key(&hex) {
            let id = ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap();
            assert_eq!(midx.lookup(id.as_bytes()), None, "{hex} found");
        }
    }
    // Iteration: sorted, complete, agrees with lookup.
    let all: Vec<_> = midx.iter().collect();
    assert_eq!(all.len(), locs.len());
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    for (id, pack, off) in &all {
        assert_eq!(midx.lookup(id.as_bytes()), Some((*pack, *off)));
        assert!(locs.contains_key(&id.to_string()));
    }
}

/// A repository with `n` packs made by fast-import (distinct objects in each).
fn repo_with_packs(format: &str, n: u64) -> tempfile::TempDir {
    let repo = init_repo(format, true);
    for seed in 0..n {
        fast_import_blobs(
            repo.path(),
            300 + 50 * seed as usize,
            seed,
            &format!("b{seed}"),
        );
    }
    assert_eq!(idx_files(&objects_dir(repo.path())).len(), n as usize);
    repo
}

fn git_midx_write_and_check(format: &str) {
    let repo = repo_with_packs(format, 4);
    let objects = objects_dir(repo.path());
    // One more pack holding copies of b1's objects: duplicates across packs.
    git_stdin(
        repo.path(),
        &[
            "pack-objects",
            "--revs",
            "-q",
            objects.join("pack/pack").to_str().unwrap(),
        ],
        b"refs/heads/b1\n",
    );
    let idxs = idx_files(&objects);
    assert_eq!(idxs.len(), 5);
    git(repo.path(), &["multi-pack-index", "write"]);
    let path = midx_path(repo.path());
    for mode in [LoadMode::Mmap, LoadMode::Read] {
        let midx = MultiPackIndex::open_with(&path, kind_of(format), mode).unwrap();
        assert_eq!(midx.version(), 1);
        assert_eq!(midx.hash_kind(), kind_of(format));
        assert_eq!(midx.path(), path);
        check_against_git(&midx, &idxs, format);
        // git's verify and ours agree on a valid file.
        git(repo.path(), &["multi-pack-index", "verify"]);
        midx.verify().unwrap();
    }
    let names: Vec<OsString> = idxs.iter().map(|p| file_name(p)).collect();
    assert_eq!(read_pack_names(&path, kind_of(format)).unwrap(), names);
    // The other hash kind is refused with its own error.
    let other = if format == "sha1" {
        HashKind::Sha256
    } else {
        HashKind::Sha1
    };
    assert!(matches!(
        MultiPackIndex::open(&path, other),
        Err(odb_index::Error::WrongHashKind { .. })
    ));
    assert!(matches!(
        read_pack_names(&path, other),
        Err(odb_index::Error::WrongHashKind { .. })
    ));
}

#[test]
fn git_written_sha1() {
    git_midx_write_and_check("sha1");
}

#[test]
fn git_written_sha256() {
    git_midx_write_and_check("sha256");
}

#[test]
fn pack_added_after_the_midx_is_not_covered() {
    let repo = repo_with_packs("sha1", 3);
    let objects = objects_dir(repo.path());
    let covered = idx_files(&objects);
    git(repo.path(), &["multi-pack-index", "write"]);
    fast_import_blobs(repo.path(), 200, 99, "later");
    let now = idx_files(&objects);
    assert_eq!(now.len(), 4);
    let new: Vec<&PathBuf> = now.iter().filter(|p| !covered.contains(p)).collect();
    assert_eq!(new.len(), 1);
    let midx = MultiPackIndex::open(&midx_path(repo.path()), HashKind::Sha1).unwrap();
    assert!(!midx.pack_names().contains(&file_name(new[0])));
    check_against_git(&midx, &covered, "sha1");
    // The new pack's objects are not in the midx.
    for (hex, _) in show_index(new[0], "sha1") {
        let id = ObjectId::from_hex_kind(hex.as_bytes(), HashKind::Sha1).unwrap();
        assert_eq!(midx.lookup(id.as_bytes()), None);
    }
    git(repo.path(), &["multi-pack-index", "verify"]);
    midx.verify().unwrap();
}

/// Our writer's v1 output, from the entries of a repository's packs, passes `git multi-pack-index verify`;
/// where no object is in two packs it is byte-for-byte what git writes.
fn our_writer_accepted_by_git(format: &str, duplicates: bool) {
    let kind = kind_of(format);
    let repo = repo_with_packs(format, 3);
    let objects = objects_dir(repo.path());
    if duplicates {
        git_stdin(
            repo.path(),
            &[
                "pack-objects",
                "--revs",
                "-q",
                objects.join("pack/pack").to_str().unwrap(),
            ],
            b"refs/heads/b0\n",
        );
    }
    let idxs = idx_files(&objects);
    let packs: Vec<PackEntries> = idxs
        .iter()
        .rev() // the writer sorts them
        .map(|idx| PackEntries {
            name: file_name(idx).into_string().unwrap(),
            entries: show_index(idx, format)
                .into_iter()
                .map(|(hex, off)| (ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap(), off))
                .collect(),
        })
        .collect();
    let ours = write_midx(1, kind, &packs).unwrap();
    let path = midx_path(repo.path());
    std::fs::write(&path, &ours).unwrap();
    git(repo.path(), &["multi-pack-index", "verify"]);
    // git reads objects through it.
    assert_eq!(
        all_objects(repo.path()).len(),
        locations(&idxs, format).len()
    );
    let midx = MultiPackIndex::open(&path, kind).unwrap();
    midx.verify().unwrap();
    check_against_git(&midx, &idxs, format);
    if !duplicates {
        std::fs::remove_file(&path).unwrap();
        git(repo.path(), &["multi-pack-index", "write"]);
        let theirs = std::fs::read(&path).unwrap();
        assert!(ours == theirs, "our multi-pack-index differs from git's");
    }
}

#[test]
fn our_writer_sha1_accepted_by_git() {
    our_writer_accepted_by_git("sha1", true);
}

#[test]
fn our_writer_sha256_accepted_by_git() {
    our_writer_accepted_by_git("sha256", true);
}

#[test]
fn our_writer_matches_git_byte_for_byte() {
    our_writer_accepted_by_git("sha1", false);
    our_writer_accepted_by_git("sha256", false);
}

/// A corrupted git-written file: git's verify and ours both reject it.
#[test]
fn corrupted_file_rejected_by_both() {
    let repo = repo_with_packs("sha1", 2);
    git(repo.path(), &["multi-pack-index", "write"]);
    let path = midx_path(repo.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // A byte inside OIDL (the last 20 bytes are the trailer, before it OOFF).
    let n = bytes.len();
    let midx = MultiPackIndex::open(&path, HashKind::Sha1).unwrap();
    let at = n - 20 - 8 * midx.len() as usize - 5;
    drop(midx);
    bytes[at] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let out = git_cmd(repo.path())
        .args(["multi-pack-index", "verify"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "git accepted a corrupted multi-pack-index"
    );
    let midx = MultiPackIndex::open(&path, HashKind::Sha1).unwrap();
    assert!(midx.verify().is_err());
}
