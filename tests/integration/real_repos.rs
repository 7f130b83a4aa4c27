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

const ABSENT: usize = 3000;

fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn hex_len(format: &str) -> usize {
    if format == "sha256" { 64 } else { 40 }
}

/// Write `n` blobs (contents derived from `tag`) as loose objects with `git hash-object -w`; return their ids.
///
/// git does not write an object that it already has (packed, loose, or in an alternate), so write into a
/// repository before it gets alternates that hold the same object.
fn write_loose(repo: &Path, tag: &str, n: usize) -> Vec<String> {
    let files = tempfile::tempdir().unwrap();
    let mut paths = String::new();
    for i in 0..n {
        let p = files.path().join(format!("f{i}"));
        std::fs::write(&p, format!("loose {tag} {i}\n")).unwrap();
        paths.push_str(p.to_str().unwrap());
        paths.push('\n');
    }
    let ids: Vec<String> = git_stdin(
        repo,
        &["hash-object", "-w", "--no-filters", "--stdin-paths"],
        paths.as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert_eq!(ids.len(), n);
    for id in &ids {
        let objects = objects_dir(repo);
        assert!(
            objects.join(&id[..2]).join(&id[2..]).is_file(),
            "{id} was not written loose into {}",
            objects.display()
        );
    }
    ids
}

/// Pack the objects `ids` (which may already be packed: this makes duplicates) into a new pack with `git
/// pack-objects`; return the new `.idx` path.
fn pack_objects(repo: &Path, ids: &[String]) -> PathBuf {
    let objects = objects_dir(repo);
    let base = objects.join("pack/pack");
    let mut list = ids.join("\n");
    list.push('\n');
    let hash = git_stdin(
        repo,
        &["pack-objects", "-q", base.to_str().unwrap()],
        list.as_bytes(),
    );
    objects.join(format!("pack/pack-{}.idx", hash.trim()))
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

#[test]
fn mixed_loose_and_packed_with_partial_multi_pack_index() {
    let repo = mixed_repo("sha1");
    let r = repo.path();
    let dirs = [objects_dir(r)];
    let n_idx = idx_files(&dirs[0]).len();
    assert_eq!(n_idx, 6);
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(r, options).unwrap();
        let found = check(r, &store, "sha1", &dirs, i as u64);
        assert!(found.packed > 200, "{found:?}");
        assert_eq!(found.loose.get(&0), Some(&20), "{found:?}");
        assert!(store.problems().is_empty(), "{:?}", store.problems());
        // The multi-pack-index answered for A and B: their .idx files were never opened.
        assert_eq!(
            store.metrics().index_loads,
            1 + (n_idx - 2) as u64,
            "multi-pack-index plus the uncovered packs"
        );
    }
}

/// A repository fully covered by a multi-pack-index, looked up cold from several threads at once (a handle each,
/// starting in different packs, absent ids in between): every object is found, every absent id is `None`, and
/// exactly one index file is opened, the multi-pack-index, however the threads race for the covered packs'
/// slots (their loaders wait for the multi-pack-index's slot and then open nothing). Several cold stores, so
/// several races.
#[test]
fn fully_covered_repository_cold_lookups_from_threads_open_only_the_multi_pack_index() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    for b in 0..4 {
        fast_import_blobs(r, 25, 60 + b, &format!("covered{b}"));
    }
    let objects = objects_dir(r);
    write_midx(r, &idx_files(&objects));
    let all: Vec<ObjectId> = all_objects(r).iter().map(|h| h.parse().unwrap()).collect();
    let absent: Vec<ObjectId> = absent_ids(8, 40, 61)
        .iter()
        .map(|h| h.parse().unwrap())
        .collect();
    const THREADS: usize = 4;
    for round in 0..8 {
        let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (store, all, absent) = (&store, &all, &absent);
                s.spawn(move || {
                    let mut h = store.handle();
                    for k in 0..all.len() {
                        let id = &all[(k + t * all.len() / THREADS) % all.len()];
                        assert!(h.locate(id).unwrap().is_some(), "{id} not found");
                        if k % 8 == t {
                            assert_eq!(h.locate(&absent[k % absent.len()]).unwrap(), None);
                        }
                    }
                });
            }
        });
        assert_eq!(
            store.metrics().index_loads,
            1,
            "round {round}: only the multi-pack-index is opened"
        );
        assert!(store.problems().is_empty(), "{:?}", store.problems());
    }
}

/// A rewritten multi-pack-index (covering packs added since) is picked up by `Store::refresh`, and by
/// refresh-on-miss; the packs it covers are not opened one by one.
#[test]
fn rewritten_multi_pack_index_is_picked_up() {
    let repo = mixed_repo("sha1");
    let r = repo.path();
    let dirs = [objects_dir(r)];
    let uncovered = (idx_files(&dirs[0]).len() - 2) as u64;

    // Explicit refresh (the store never refreshes by itself).
    let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
    check(r, &store, "sha1", &dirs, 10);
    assert_eq!(store.metrics().index_loads, 1 + uncovered);
    // Three new packs, then a multi-pack-index over everything.
    for (k, seed) in [11u64, 12, 13].into_iter().enumerate() {
        fast_import_blobs(r, 20, seed, &format!("new{k}"));
    }
    let new_only = fresh_objects(r, 11);
    let mut h = store.handle();
    assert_eq!(h.locate(&new_only).unwrap(), None, "RefreshMode::Never");
    write_midx(r, &idx_files(&dirs[0]));
    assert!(store.refresh().unwrap(), "the listing changed");
    check(r, &store, "sha1", &dirs, 11);
    assert!(h.locate(&new_only).unwrap().is_some());
    // Only the new multi-pack-index was opened: not the three new packs, and nothing already loaded again.
    assert_eq!(store.metrics().index_loads, 1 + uncovered + 1);

    // Refresh on miss: a handle that has seen everything misses an object of a pack added since, re-lists the
    // pack directory and finds it through the rewritten multi-pack-index.
    let store = Store::open(r, Options::default().refresh(RefreshMode::OnMiss)).unwrap();
    check(r, &store, "sha1", &dirs, 12);
    let loads = store.metrics().index_loads;
    assert_eq!(loads, 1, "one multi-pack-index covers every pack");
    let mut h = store.handle();
    fast_import_blobs(r, 20, 14, "new3");
    write_midx(r, &idx_files(&dirs[0]));
    let newest = fresh_objects(r, 14);
    assert!(matches!(
        h.locate(&newest).unwrap(),
        Some(Location::Packed { .. })
    ));
    check(r, &store, "sha1", &dirs, 13);
    assert_eq!(
        store.metrics().index_loads,
        loads + 1,
        "only the new multi-pack-index"
    );
}

/// One blob of the `fast_import_blobs(.., seed, ..)` import, hashed with `git hash-object` (not written).
fn fresh_objects(repo: &Path, seed: u64) -> ObjectId {
    git_stdin(
        repo,
        &["hash-object", "--stdin"],
        format!("blob {seed} 0\n").as_bytes(),
    )
    .trim()
    .parse()
    .unwrap()
}

#[test]
fn sha256_packs_loose_and_multi_pack_index() {
    let repo = mixed_repo("sha256");
    let r = repo.path();
    let dirs = [objects_dir(r)];
    let n_idx = idx_files(&dirs[0]).len() as u64;
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(r, options).unwrap();
        assert_eq!(store.hash_kind(), odb_index::HashKind::Sha256);
        let found = check(r, &store, "sha256", &dirs, 20 + i as u64);
        assert!(found.packed > 200, "{found:?}");
        assert_eq!(found.loose.get(&0), Some(&20), "{found:?}");
        assert!(store.problems().is_empty(), "{:?}", store.problems());
        assert_eq!(store.metrics().index_loads, 1 + n_idx - 2);
    }
    // A rewritten multi-pack-index, picked up by refresh.
    let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
    check(r, &store, "sha256", &dirs, 30);
    fast_import_blobs(r, 20, 31, "late");
    write_midx(r, &idx_files(&dirs[0]));
    store.refresh().unwrap();
    check(r, &store, "sha256", &dirs, 31);
    // SHA-1 ids are refused, not looked up.
    let mut h = store.handle();
    let sha1: ObjectId = absent_ids(1, 40, 1)[0].parse().unwrap();
    assert!(matches!(
        h.locate(&sha1),
        Err(Error::WrongIdHashKind { .. })
    ));
}

/// `git clone --shared`: the clone's own objects are dir 0; the source's loose objects are `Loose { dir: 1 }`,
/// its packed ones are found in the source's packs.
#[test]
fn clone_shared_finds_the_sources_objects() {
    for format in ["sha1", "sha256"] {
        let src = init_repo(format, false);
        let s = src.path();
        fast_import_blobs(s, 50, 40, "main");
        let src_loose = write_loose(s, "src", 25);
        let top = tempfile::tempdir().unwrap();
        let dst = top.path().join("dst");
        git(
            top.path(),
            &["clone", "-q", "--shared", s.to_str().unwrap(), "dst"],
        );
        assert!(objects_dir(&dst).join("info/alternates").is_file());
        // Objects of the clone itself: a pack and loose ones.
        fast_import_blobs(&dst, 30, 41, "own");
        write_loose(&dst, "dst", 15);
        let dirs = [objects_dir(&dst), objects_dir(s)];
        for (i, options) in all_modes().into_iter().enumerate() {
            let store = Store::open(&dst, options).unwrap();
            let found = check(&dst, &store, format, &dirs, 40 + i as u64);
            assert_eq!(found.loose.get(&0), Some(&15), "{found:?}");
            assert_eq!(found.loose.get(&1), Some(&25), "{found:?}");
            assert!(found.packed >= 80, "{found:?}");
            assert!(store.problems().is_empty(), "{:?}", store.problems());
            let mut h = store.handle();
            let one: ObjectId = src_loose[0].parse().unwrap();
            assert_eq!(h.locate(&one).unwrap(), Some(Location::Loose { dir: 1 }));
        }
    }
}

/// A → B → C, each with its own pack and loose objects.
#[test]
fn chain_of_three_alternates() {
    let repos: Vec<_> = (0..3).map(|_| init_repo("sha1", true)).collect();
    for (k, r) in repos.iter().enumerate() {
        fast_import_blobs(r.path(), 20, 50 + k as u64, "main");
        write_loose(r.path(), &format!("chain{k}"), 10 + k);
    }
    let dirs: Vec<PathBuf> = repos.iter().map(|r| objects_dir(r.path())).collect();
    set_alternates(repos[0].path(), &[&dirs[1]]);
    set_alternates(repos[1].path(), &[&dirs[2]]);
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(repos[0].path(), options).unwrap();
        let found = check(repos[0].path(), &store, "sha1", &dirs, 50 + i as u64);
        for d in 0..3 {
            assert_eq!(found.loose.get(&d), Some(&(10 + d)), "{found:?}");
        }
        assert!(store.problems().is_empty(), "{:?}", store.problems());
    }
}

/// A → B → A: the store opens (no hang), searches each directory once and finds everything.
#[test]
fn alternates_cycle() {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    fast_import_blobs(a.path(), 20, 60, "main");
    fast_import_blobs(b.path(), 20, 61, "main");
    write_loose(a.path(), "cycle-a", 7);
    write_loose(b.path(), "cycle-b", 9);
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&dirs[1]]);
    set_alternates(b.path(), &[&dirs[0]]);
    let a_path = a.path().to_path_buf();
    let store = within(Duration::from_secs(120), move || {
        Store::open(&a_path, Options::default()).unwrap()
    });
    // git skips an alternate that leads back to a directory already searched; the store says so.
    let problems = store.problems();
    assert!(
        problems.len() == 1
            && matches!(
                &problems[0],
                Problem::Alternate(a) if matches!(**a, AlternateProblem::Cycle { .. })
            )
            && problems[0].to_string().contains("cycle"),
        "{problems:?}"
    );
    let found = check(a.path(), &store, "sha1", &dirs, 60);
    assert_eq!(found.loose.get(&0), Some(&7), "{found:?}");
    assert_eq!(found.loose.get(&1), Some(&9), "{found:?}");
    // Seen from B, the cycle is the other way round.
    let store = Store::open(b.path(), Options::default()).unwrap();
    let found = check(
        b.path(),
        &store,
        "sha1",
        &[dirs[1].clone(), dirs[0].clone()],
        61,
    );
    assert_eq!(found.loose.get(&0), Some(&9), "{found:?}");
}

/// A missing alternate is reported in `problems()`, not fatal; the ones that exist are searched.
#[test]
fn missing_alternate_is_reported_not_fatal() {
    let (a, _b, dirs) = repo_with_missing_alternate();
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(a.path(), options).unwrap();
        assert_missing_alternate_reported(&store.problems());
        let found = check(a.path(), &store, "sha1", &dirs, 70 + i as u64);
        assert_eq!(found.loose.get(&1), Some(&5), "{found:?}");
    }
}

/// The alternate is still missing after a refresh, so it should still be reported.
#[test]
fn missing_alternate_is_still_reported_after_refresh() {
    let (a, _b, _dirs) = repo_with_missing_alternate();
    let store = Store::open(a.path(), Options::default()).unwrap();
    assert_missing_alternate_reported(&store.problems());
    store.refresh().unwrap();
    assert_missing_alternate_reported(&store.problems());
}

/// Repository A whose alternates list a missing directory, then B (which has 5 loose objects).
fn repo_with_missing_alternate() -> (tempfile::TempDir, tempfile::TempDir, [PathBuf; 2]) {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    fast_import_blobs(a.path(), 20, 70, "main");
    fast_import_blobs(b.path(), 20, 71, "main");
    write_loose(b.path(), "present-alt", 5);
    let gone = a.path().join("no-such-objects");
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&gone, &dirs[1]]);
    (a, b, dirs)
}

fn assert_missing_alternate_reported(problems: &[Problem]) {
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        matches!(&problems[0], Problem::Alternate(a) if matches!(**a, AlternateProblem::Missing { .. })),
        "{problems:?}"
    );
    assert!(
        problems[0].to_string().contains("no-such-objects"),
        "the problem names the missing directory: {problems:?}"
    );
}

/// An object loose both in the repository and in its alternate is reported in the repository (dir 0).
#[test]
fn own_objects_are_searched_before_alternates() {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    // Written into A first: git would not write into A an object its alternate already has.
    let both = write_loose(a.path(), "both", 12);
    let both_in_b = write_loose(b.path(), "both", 12);
    assert_eq!(both, both_in_b);
    let only_b = write_loose(b.path(), "only-b", 6);
    fast_import_blobs(b.path(), 10, 80, "main");
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&dirs[1]]);
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(a.path(), options).unwrap();
        let found = check(a.path(), &store, "sha1", &dirs, 80 + i as u64);
        assert_eq!(found.loose.get(&0), Some(&12), "{found:?}");
        assert_eq!(found.loose.get(&1), Some(&6), "{found:?}");
        let mut h = store.handle();
        for id in &both {
            assert_eq!(
                h.locate(&id.parse().unwrap()).unwrap(),
                Some(Location::Loose { dir: 0 })
            );
        }
        for id in &only_b {
            assert_eq!(
                h.locate(&id.parse().unwrap()).unwrap(),
                Some(Location::Loose { dir: 1 })
            );
        }
    }
}

/// A loose object written after the store was opened: found at once in probe mode; in cached mode, once its
/// fan-out directory has been listed, only after `store.refresh()`.
#[test]
fn loose_object_written_after_open() {
    for format in ["sha1", "sha256"] {
        let repo = init_repo(format, true);
        let r = repo.path();
        fast_import_blobs(r, 20, 90, "main");
        write_loose(r, "early", 5);
        for refresh in [RefreshMode::Never, RefreshMode::OnMiss] {
            let probe = Store::open(r, Options::default().refresh(refresh)).unwrap();
            let cached = Store::open(
                r,
                Options::default().refresh(refresh).loose(LooseMode::Cached),
            )
            .unwrap();
            let (mut hp, mut hc) = (probe.handle(), cached.handle());
            let tag = format!("late {refresh:?}");
            // The id before the object exists: both stores miss (the cached one lists its fan-out directory).
            let late_id: ObjectId = {
                let files = tempfile::tempdir().unwrap();
                let p = files.path().join("f0");
                std::fs::write(&p, format!("loose {tag} 0\n")).unwrap();
                git(r, &["hash-object", "--no-filters", p.to_str().unwrap()])
                    .trim()
                    .parse()
                    .unwrap()
            };
            assert_eq!(hp.locate(&late_id).unwrap(), None);
            assert_eq!(hc.locate(&late_id).unwrap(), None);
            let written = write_loose(r, &tag, 1);
            assert_eq!(written[0], late_id.to_string());
            assert_eq!(
                hp.locate(&late_id).unwrap(),
                Some(Location::Loose { dir: 0 }),
                "probe mode sees a new loose object at once"
            );
            assert_eq!(
                hc.locate(&late_id).unwrap(),
                None,
                "cached mode answers from its listing until refreshed"
            );
            cached.refresh().unwrap();
            assert_eq!(
                hc.locate(&late_id).unwrap(),
                Some(Location::Loose { dir: 0 })
            );
            let dirs = [objects_dir(r)];
            check(r, &probe, format, &dirs, 90);
            check(r, &cached, format, &dirs, 91);
        }
    }
}

/// Copy the `.idx` and `.pack` of `from`'s first pack into `to`'s pack directory; return the copied `.idx`.
fn copy_pack(from: &Path, to: &Path) -> PathBuf {
    let idx = idx_files(&objects_dir(from))[0].clone();
    let dest = objects_dir(to).join("pack").join(idx.file_name().unwrap());
    std::fs::copy(idx.with_extension("pack"), dest.with_extension("pack")).unwrap();
    std::fs::copy(&idx, &dest).unwrap();
    canon(&dest)
}

/// An index file of the other hash kind in the pack directory: the objects of the healthy packs are found, and
/// a miss is `Error::Incomplete` naming the foreign file (the store cannot claim "missing" without it).
#[test]
fn index_of_the_other_hash_kind_in_the_pack_directory() {
    for (own, foreign) in [("sha1", "sha256"), ("sha256", "sha1")] {
        let repo = init_repo(own, true);
        let r = repo.path();
        fast_import_blobs(r, 20, 100, "main");
        let healthy: Vec<ObjectId> = show_index(&idx_files(&objects_dir(r))[0], own)
            .into_iter()
            .map(|(i, _)| i.parse().unwrap())
            .collect();
        let other = init_repo(foreign, true);
        fast_import_blobs(other.path(), 20, 101, "main");
        let copied = copy_pack(other.path(), r);
        let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
        let mut h = store.handle();
        for id in &healthy {
            assert!(
                matches!(h.locate(id), Ok(Some(Location::Packed { .. }))),
                "{id}"
            );
        }
        let absent: ObjectId = absent_ids(1, hex_len(own), 100)[0].parse().unwrap();
        match h.locate(&absent) {
            Err(Error::Incomplete { failed }) => {
                assert_eq!(failed.len(), 1, "{failed:?}");
                assert_eq!(canon(&failed[0].0), copied);
                let inner = &*failed[0].1;
                println!("{own} repository, {foreign} .idx: {inner:?} / {inner}");
                let names_file = match inner {
                    Error::WrongHashKind { path, .. } | Error::CorruptIndex { path, .. } => {
                        canon(path) == copied
                    }
                    _ => false,
                };
                assert!(names_file, "unexpected inner error {inner:?}");
            }
            other => panic!(
                "expected Incomplete naming {}, got {other:?}",
                copied.display()
            ),
        }
    }
}

/// A multi-pack-index of the other hash kind: ignored with a problem reported, every object still found
/// through the `.idx` files.
#[test]
fn multi_pack_index_of_the_other_hash_kind() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 20, 110, "a");
    fast_import_blobs(r, 20, 111, "b");
    let other = init_repo("sha256", true);
    fast_import_blobs(other.path(), 20, 112, "main");
    write_midx(other.path(), &idx_files(&objects_dir(other.path())));
    std::fs::copy(
        objects_dir(other.path()).join("pack/multi-pack-index"),
        objects_dir(r).join("pack/multi-pack-index"),
    )
    .unwrap();
    let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
    let problems = store.problems();
    println!("sha256 multi-pack-index in a sha1 repository: {problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, Problem::MultiPackIndexIgnored { .. })),
        "{problems:?}"
    );
    let mut h = store.handle();
    let mut n = 0;
    for idx in idx_files(&objects_dir(r)) {
        for (id, off) in show_index(&idx, "sha1") {
            let Some(Location::Packed { pack, offset }) = h.locate(&id.parse().unwrap()).unwrap()
            else {
                panic!("{id} not found")
            };
            assert_eq!(
                (canon(&store.pack_path(pack).unwrap()), offset),
                (canon(&idx.with_extension("pack")), off)
            );
            n += 1;
        }
    }
    assert!(n > 40);
    for hex in absent_ids(ABSENT, 40, 113) {
        assert_eq!(h.locate(&hex.parse().unwrap()).unwrap(), None);
    }
}
