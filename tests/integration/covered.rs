//! Issue 32, F6 from outside: packs a multi-pack-index (or a chain layer) covers are listed without a `stat`
//! (their id keyed by the inode the directory lists, their `.pack` length read on the first lookup that meets
//! one of their entries). Each test changes the files between a listing and its use, the way git does (and a few
//! ways git does not), with git (`cat-file --batch-all-objects`, `--batch-check`) as the control for what is
//! present: every object git has is found where an index file says it is, nothing git lacks is reported, and a
//! file that is not what the listing saw is an answer from another file or a typed error, never a wrong location,
//! a panic or a hang.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use odb_index::{Handle, Location, ObjectId, Options, Store};
use odb_index_testkit::*;

use crate::api_common::*;

/// Every (pack path, offset) at which some `.idx` of `repo` lists each id, now.
fn packed_truth(repo: &Path) -> std::collections::HashMap<String, HashSet<(PathBuf, u64)>> {
    truth(&[objects_dir(repo)], "sha1").packed
}

/// The store agrees with git on `repo` now, through `h` (kept from before the change: it must refresh on its
/// own): `locate` and `locate_many` find every object git lists, each where an `.idx` lists it; absent ids are
/// misses; iteration lists exactly git's objects. `what` names the step for the messages.
fn agrees_with_git(h: &mut Handle, repo: &Path, what: &str) {
    let all = all_objects(repo);
    assert!(!all.is_empty(), "{what}");
    let t = packed_truth(repo);
    // A hit is not checked for freshness (F2): a location in a pack git has since deleted is what a front end
    // finds gone when it opens the file, and then asks `locate_again` about.
    let check = |h: &mut Handle, id: &str, got: Option<Location>, how: &str| {
        let mut got = got;
        for _ in 0..2 {
            match got {
                // Stale (the handle moved on: a batch's miss refreshed after its hits, or the pack got a new id) or
                // deleted.
                Some(loc @ Location::Packed { pack, .. })
                    if !h.pack_path(pack).is_ok_and(|p| p.exists()) =>
                {
                    got = h
                        .locate_again(&oid(id), loc)
                        .unwrap_or_else(|e| panic!("{what}: {how}: locate_again {id}: {e}"));
                }
                _ => break,
            }
        }
        match got {
            Some(Location::Packed { pack, offset }) => {
                let path = h_pack_path(h, pack, id, &format!("{what}: {how}"));
                let at = (canon(&path), offset);
                assert!(
                    t.get(id).is_some_and(|s| s.contains(&at)),
                    "{what}: {how}: {id} at {at:?}, where no .idx lists it"
                );
            }
            Some(Location::Loose { .. }) => {}
            None => panic!("{what}: {how}: {id} missing, git has it"),
        }
    };
    for id in &all {
        let got = h
            .locate(&oid(id))
            .unwrap_or_else(|e| panic!("{what}: locate {id}: {e}"));
        check(h, id, got, "locate");
    }
    let absent = absent_ids(200, 40, 32);
    let ids: Vec<ObjectId> = all.iter().chain(&absent).map(|s| oid(s)).collect();
    let mut out = Vec::new();
    h.locate_many(&ids, &mut out)
        .unwrap_or_else(|e| panic!("{what}: locate_many: {e}"));
    assert_eq!(out.len(), ids.len(), "{what}");
    for (id, got) in all.iter().zip(&out) {
        check(h, id, *got, "locate_many");
    }
    for (id, got) in absent.iter().zip(&out[all.len()..]) {
        assert_eq!(*got, None, "{what}: locate_many: {id} is absent");
        assert_eq!(h.locate(&oid(id)).unwrap(), None, "{what}: locate: {id}");
    }
    let mut listed = BTreeSet::new();
    h.for_each_object(|id, _| {
        listed.insert(id.to_string());
        std::ops::ControlFlow::Continue(())
    })
    .unwrap_or_else(|e| panic!("{what}: for_each_object: {e}"));
    let want: BTreeSet<String> = all.into_iter().collect();
    assert_eq!(listed, want, "{what}: iteration lists git's objects");
}

fn h_pack_path(h: &Handle, pack: odb_index::PackId, id: &str, what: &str) -> PathBuf {
    h.pack_path(pack)
        .unwrap_or_else(|e| panic!("{what}: {id} located in a pack the store does not list: {e}"))
}

/// A bare repository with `n` packs of 60 blobs each (seeds from `seed`).
fn packs_repo(n: u64, seed: u64) -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    for i in 0..n {
        fast_import_blobs(repo.path(), 60, seed + i, &format!("b{seed}-{i}"));
    }
    repo
}

fn import(repo: &Path, seed: u64) {
    fast_import_blobs(repo, 60, seed, &format!("late{seed}"));
}

/// The kinds of change made to a covered pack's file after the listing, before the first lookup.
#[derive(Clone, Copy, Debug)]
enum Change {
    PackRemoved,
    PackTruncatedToZero,
    PackTruncatedToHalf,
    PackFifo,
    PackDevZero,
    PackAndIdxFifo,
    PackAndIdxDevZero,
    IdxRemoved,
}

#[cfg(unix)]
fn apply(change: Change, idx: &Path) {
    let pack = idx.with_extension("pack");
    let fifo_over = |p: &Path| odb_index_testkit::fifo_over(p);
    let dev_zero_over = |p: &Path| {
        let tmp = p.with_file_name("tmp_zero_link");
        std::os::unix::fs::symlink("/dev/zero", &tmp).unwrap();
        std::fs::rename(&tmp, p).unwrap();
    };
    match change {
        Change::PackRemoved => std::fs::remove_file(&pack).unwrap(),
        Change::PackTruncatedToZero => std::fs::File::options()
            .write(true)
            .open(&pack)
            .unwrap()
            .set_len(0)
            .unwrap(),
        Change::PackTruncatedToHalf => {
            let f = std::fs::File::options().write(true).open(&pack).unwrap();
            let len = f.metadata().unwrap().len();
            f.set_len(len / 2).unwrap();
        }
        Change::PackFifo => fifo_over(&pack),
        Change::PackDevZero => dev_zero_over(&pack),
        Change::PackAndIdxFifo => {
            fifo_over(&pack);
            fifo_over(idx);
        }
        Change::PackAndIdxDevZero => {
            dev_zero_over(&pack);
            dev_zero_over(idx);
        }
        Change::IdxRemoved => std::fs::remove_file(idx).unwrap(),
    }
}

/// Whether `path` is now a regular file at least `past` bytes long.
fn holds(path: &Path, past: u64) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() > past)
}

mod changed;
mod maintenance;
