//! Real repositories made with `git`, end to end: loose and packed objects mixed, multi-pack-indices that
//! cover some packs and not others (and are rewritten underneath the store), SHA-256, alternates (`clone
//! --shared`, chains, cycles, missing ones) and loose objects written after the store was opened.
//!
//! Every scenario is checked against `git cat-file --batch-all-objects --batch-check` (every object is found,
//! a packed one in a pack whose `git show-index` lists it at the reported offset, a loose-only one in the first
//! objects directory that holds it) and against a few thousand absent ids (all `None`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use odb_index::repo::AlternateProblem;
use odb_index::{Error, Location, LooseMode, ObjectId, Options, Problem, RefreshMode, Store};
use odb_index_testkit::*;

use crate::api_common::{canon, pack_objects, write_loose};

const ABSENT: usize = 3000;

fn hex_len(format: &str) -> usize {
    if format == "sha256" { 64 } else { 40 }
}

/// `git multi-pack-index write --stdin-packs` covering exactly `idx` (basenames of `.idx` files).
fn write_midx(repo: &Path, idx: &[PathBuf]) {
    let names: String = idx
        .iter()
        .map(|p| format!("{}\n", p.file_name().unwrap().to_str().unwrap()))
        .collect();
    git_stdin(
        repo,
        &["multi-pack-index", "write", "--stdin-packs"],
        names.as_bytes(),
    );
    assert!(objects_dir(repo).join("pack/multi-pack-index").is_file());
}

fn set_alternates(repo: &Path, dirs: &[&Path]) {
    let info = objects_dir(repo).join("info");
    std::fs::create_dir_all(&info).unwrap();
    let text: String = dirs.iter().map(|d| format!("{}\n", d.display())).collect();
    std::fs::write(info.join("alternates"), text).unwrap();
}

/// What the files say: where each object is packed (pack path, offset), and which objects directories hold it
/// loose.
#[derive(Default)]
struct Truth {
    packed: HashMap<String, HashSet<(PathBuf, u64)>>,
    loose: HashMap<String, Vec<usize>>,
}

/// Read `dirs` (objects directories, in search order) with `git show-index` and a directory walk.
fn truth(dirs: &[PathBuf], format: &str) -> Truth {
    let mut t = Truth::default();
    let name_len = hex_len(format) - 2;
    for (d, dir) in dirs.iter().enumerate() {
        for idx in idx_files(dir) {
            let pack = canon(&idx.with_extension("pack"));
            for (id, off) in show_index(&idx, format) {
                t.packed.entry(id).or_default().insert((pack.clone(), off));
            }
        }
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let fan = entry.file_name().to_str().unwrap().to_owned();
            if fan.len() != 2 || !fan.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            for obj in std::fs::read_dir(entry.path()).unwrap() {
                let name = obj.unwrap().file_name().to_str().unwrap().to_owned();
                if name.len() == name_len {
                    t.loose.entry(format!("{fan}{name}")).or_default().push(d);
                }
            }
        }
    }
    t
}

/// How the objects of one check were found.
#[derive(Debug, Default)]
struct Found {
    packed: usize,
    /// Loose objects found, per objects directory.
    loose: HashMap<usize, usize>,
}

/// Check `store` (opened on `repo`) against git: `dirs` are the objects directories the store must search, in
/// order. Every object git lists is found where the files say; `ABSENT` random ids are absent.
fn check(repo: &Path, store: &Arc<Store>, format: &str, dirs: &[PathBuf], seed: u64) -> Found {
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| canon(d)).collect();
    let seen_dirs: Vec<PathBuf> = store.objects_dirs().iter().map(|d| canon(d)).collect();
    assert_eq!(seen_dirs, dirs, "objects directories in search order");
    let t = truth(&dirs, format);
    let all = all_objects(repo);
    assert!(!all.is_empty());
    let mut h = store.handle();
    let mut found = Found::default();
    for id in &all {
        let oid: ObjectId = id.parse().unwrap();
        let loc = h
            .locate(&oid)
            .unwrap_or_else(|e| panic!("{id}: {e}"))
            .unwrap_or_else(|| panic!("{id} (listed by git) not found"));
        match (loc, t.packed.get(id)) {
            (Location::Packed { pack, offset }, Some(places)) => {
                let path = canon(&store.pack_path(pack).unwrap());
                assert!(
                    places.contains(&(path.clone(), offset)),
                    "{id} reported at {}:{offset}; git: {places:?}",
                    path.display()
                );
                found.packed += 1;
            }
            (Location::Packed { .. }, None) => {
                panic!("{id} reported packed, git has it only loose")
            }
            // git's order: all packs (own and alternates) before loose objects.
            (Location::Loose { .. }, Some(places)) => {
                panic!("{id} reported loose, but it is packed in {places:?}")
            }
            (Location::Loose { dir }, None) => {
                let holders = t.loose.get(id).unwrap_or_else(|| {
                    panic!("{id} reported loose in {dir}, found nowhere on disk")
                });
                assert_eq!(
                    Some(&dir),
                    holders.first(),
                    "{id} loose in {holders:?}: the first directory in search order must answer"
                );
                *found.loose.entry(dir).or_default() += 1;
            }
        }
    }
    let known: HashSet<&String> = all.iter().collect();
    let mut absent = 0;
    for hex in absent_ids(ABSENT, hex_len(format), seed) {
        if known.contains(&hex) {
            continue;
        }
        let oid: ObjectId = hex.parse().unwrap();
        assert_eq!(h.locate(&oid).unwrap(), None, "{hex} is absent");
        absent += 1;
    }
    assert!(absent > ABSENT - 5);
    found
}

/// The loose modes and refresh modes every whole-repository check runs under.
fn all_modes() -> Vec<Options> {
    let mut v = Vec::new();
    for loose in [LooseMode::Probe, LooseMode::Cached] {
        for refresh in [RefreshMode::OnMiss, RefreshMode::Never] {
            v.push(Options::default().loose(loose).refresh(refresh));
        }
    }
    v
}

/// Run `f` on another thread; fail (instead of hanging the test run) if it has not finished after `limit`.
/// The limit is a watchdog for a hang, not a performance threshold: it is orders of magnitude above the time
/// the work takes.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .expect("did not finish (hang?) or panicked")
}

/// Packs A, B (covered by a multi-pack-index written with `--stdin-packs`), C (not covered), D (added after the
/// multi-pack-index), a pack duplicating objects of A and C, and loose objects (some also packed).
fn mixed_repo(format: &str) -> tempfile::TempDir {
    let repo = init_repo(format, false);
    let r = repo.path();
    fast_import_blobs(r, 60, 1, "a");
    fast_import_blobs(r, 50, 2, "b");
    let ab = idx_files(&objects_dir(r));
    assert_eq!(ab.len(), 2);
    fast_import_blobs(r, 40, 3, "c");
    // Loose objects; half of them also packed (`pack-objects` leaves the loose copies).
    let loose = write_loose(r, "mixed", 40);
    pack_objects(r, &loose[..20]);
    // Duplicates: objects of A and of C in one more pack.
    let a_ids: Vec<String> = show_index(&ab[0], format)
        .into_iter()
        .take(15)
        .map(|(i, _)| i)
        .collect();
    pack_objects(r, &a_ids);
    write_midx(r, &ab);
    // Added after the multi-pack-index: not covered.
    fast_import_blobs(r, 30, 4, "d");
    repo
}

mod alternates;
mod late_and_foreign;
mod packs_and_midx;
