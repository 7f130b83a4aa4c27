//! The concurrent store against real repositories made with git: cold-start races, refresh under load,
//! repack and gc underneath lookups.
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use odb_index_testkit::*;

use odb_index::{Error, Location, ObjectId, Options, RefreshMode, Store};

fn ids(hex: &[String]) -> Vec<ObjectId> {
    hex.iter().map(|h| h.parse().unwrap()).collect()
}

/// A repository with `packs` packs of `per_pack` blobs each (plus a commit and trees per pack).
fn many_packs(packs: usize, per_pack: usize) -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    for p in 0..packs {
        fast_import_blobs(repo.path(), per_pack, p as u64, &format!("b{p}"));
    }
    repo
}

/// Every object, looked up by several threads at once on many fresh stores: no false miss, and every index is
/// loaded exactly once per store however the threads race (P1, P2 on real files).
#[test]
fn cold_start_races_find_everything_and_load_each_index_once() {
    let repo = many_packs(12, 40);
    let all = ids(&all_objects(repo.path()));
    let n_idx = idx_files(&objects_dir(repo.path())).len();
    assert_eq!(n_idx, 12);
    for round in 0..150 {
        let store =
            Store::open(repo.path(), Options::default().refresh(RefreshMode::Never)).unwrap();
        let threads = 4;
        std::thread::scope(|s| {
            for t in 0..threads {
                let store = &store;
                let all = &all;
                s.spawn(move || {
                    let mut h = store.handle();
                    // Each thread starts at a different place, so they want different packs first.
                    let start = (t * all.len() / threads + round * 7) % all.len();
                    for i in 0..all.len() {
                        let id = &all[(start + i * 13) % all.len()];
                        match h.locate(id) {
                            Ok(Some(Location::Packed { .. })) => {}
                            other => panic!("round {round} thread {t}: {id} gave {other:?}"),
                        }
                    }
                });
            }
        });
        assert_eq!(
            store.metrics().index_loads,
            n_idx as u64,
            "round {round}: an index was loaded more than once"
        );
    }
}

/// A miss concludes only after every index is loaded: with 4 threads missing at once on a fresh store, each
/// index is still loaded exactly once and every miss is a plain `None`.
#[test]
fn racing_misses_load_everything_once_and_report_none() {
    let repo = many_packs(8, 10);
    let absent = ids(&absent_ids(200, 40, 7));
    for _ in 0..100 {
        let store =
            Store::open(repo.path(), Options::default().refresh(RefreshMode::Never)).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let (store, absent) = (&store, &absent);
                s.spawn(move || {
                    let mut h = store.handle();
                    for id in absent.iter().skip(t * 10).take(50) {
                        assert_eq!(h.locate(id).unwrap(), None);
                    }
                });
            }
        });
        assert_eq!(store.metrics().index_loads, 8);
    }
}

/// Where git says each object of the repository is: `(pack path, hex id)` → offset, from `git show-index`.
fn git_locations(repo: &Path) -> std::collections::HashMap<(std::path::PathBuf, String), u64> {
    let mut expected = std::collections::HashMap::new();
    for idx in idx_files(&objects_dir(repo)) {
        for (id, off) in show_index(&idx, "sha1") {
            expected.insert((idx.with_extension("pack"), id), off);
        }
    }
    expected
}

/// `id` is packed where `expected` ([`git_locations`]) says.
fn assert_at_git_location(
    store: &Store,
    h: &mut odb_index::Handle,
    expected: &std::collections::HashMap<(std::path::PathBuf, String), u64>,
    id: &str,
) {
    let oid: ObjectId = id.parse().unwrap();
    let Some(Location::Packed { pack, offset }) = h.locate(&oid).unwrap() else {
        panic!("{id} not packed")
    };
    let path = store.pack_path(pack).unwrap();
    assert_eq!(
        expected.get(&(path.clone(), id.to_owned())),
        Some(&offset),
        "{id} at {} {offset}",
        path.display()
    );
}

/// Locations name the pack that git says holds the object, at the offset git says.
#[test]
fn locations_agree_with_git_show_index() {
    let repo = many_packs(3, 100);
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let expected = git_locations(repo.path());
    for id in all_objects(repo.path()) {
        assert_at_git_location(&store, &mut h, &expected, &id);
    }
}

/// 70 small packs (more than the 64 a word of the snapshot's bucket table holds; most fan-out buckets of each
/// empty): a lookup past the last pack hit searches only the packs with ids in the id's bucket. Before the
/// table is built (the first lookups) and after (the miss filter eager, or off), every object is found where git
/// says, in an order that moves the last hit across all the packs, and absent ids are `None`, the miss filter's
/// false positives among them (lookups it did not answer: searched in every pack with ids in the bucket)
/// included. A pack added later (a refresh) is found, and so are the others.
#[test]
fn many_small_packs_answer_as_git_with_and_without_the_miss_filter() {
    use odb_index::MissFilterMode;
    let repo = many_packs(70, 3);
    let expected = git_locations(repo.path());
    let all = all_objects(repo.path());
    assert_eq!(idx_files(&objects_dir(repo.path())).len(), 70);
    let absent = ids(&absent_ids(20_000, 40, 22));
    for mode in [MissFilterMode::Eager, MissFilterMode::Off] {
        let opts = Options::default()
            .refresh(RefreshMode::Never)
            .miss_filter(mode);
        let store = Store::open(repo.path(), opts).unwrap();
        let mut h = store.handle();
        // Hits first (the table is not built yet), then misses (built), then hits again.
        for id in all.iter().step_by(7) {
            assert_at_git_location(&store, &mut h, &expected, id);
        }
        for id in &absent {
            assert_eq!(h.locate(id).unwrap(), None, "{mode:?}: {id}");
        }
        for k in 0..all.len() {
            assert_at_git_location(&store, &mut h, &expected, &all[k * 37 % all.len()]);
        }
        drop(h);
        let answered = store.metrics().filter_answers;
        if mode == MissFilterMode::Eager {
            // About 0.55% false positives: the filter answered most misses, not all.
            assert!(
                (19_000..20_000).contains(&answered),
                "{answered} of 20 000 misses answered by the filter"
            );
        } else {
            assert_eq!(answered, 0);
        }
        let mut h = store.handle();
        fast_import_blobs(repo.path(), 3, 70 + mode as u64, &format!("late{mode:?}"));
        assert!(store.refresh().unwrap());
        let expected = git_locations(repo.path());
        for id in all_objects(repo.path()) {
            assert_at_git_location(&store, &mut h, &expected, &id);
        }
        for id in absent.iter().take(2_000) {
            assert_eq!(
                h.locate(id).unwrap(),
                None,
                "{mode:?} after the refresh: {id}"
            );
        }
    }
}

/// Threads look up objects of a base pack (present throughout) while another thread adds packs and removes the
/// packs it added earlier. Every lookup of a base object succeeds; objects of a pack that exists when a
/// lookup starts and until it ends are found; handles made before the changes keep working.
#[test]
fn refresh_under_load_never_loses_objects_present_throughout() {
    let repo = many_packs(2, 50);
    let base = ids(&all_objects(repo.path()));
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let stop = AtomicBool::new(false);
    let lookups = AtomicUsize::new(0);
    let found_new = AtomicUsize::new(0);
    let new_ids: std::sync::Mutex<Vec<ObjectId>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..3 {
            let (store, base, stop, lookups, new_ids, found_new) =
                (&store, &base, &stop, &lookups, &new_ids, &found_new);
            s.spawn(move || {
                let mut h = store.handle();
                let mut i = t;
                while !stop.load(Ordering::Relaxed) {
                    let id = &base[i % base.len()];
                    match h.locate(id) {
                        Ok(Some(_)) => {}
                        other => panic!("base object {id} gave {other:?}"),
                    }
                    // Objects of added packs: found or absent (they may have been removed), never an error
                    // other than a pack that vanished mid-load.
                    if i % 16 == 0 {
                        let probe = new_ids.lock().unwrap().last().copied();
                        if let Some(id) = probe {
                            match h.locate(&id) {
                                Ok(Some(_)) => {
                                    found_new.fetch_add(1, Ordering::Relaxed);
                                }
                                Ok(None) | Err(Error::Incomplete { .. }) => {}
                                Err(e) => panic!("new object {id}: {e}"),
                            }
                        }
                    }
                    i += 3;
                    lookups.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let _stop = StopOnDrop(&stop);
        // The writer: add a pack, then remove the one added before it.
        let mut added: Vec<std::path::PathBuf> = Vec::new();
        let before: std::collections::HashSet<_> =
            idx_files(&objects_dir(repo.path())).into_iter().collect();
        for round in 0..12u64 {
            let branch = format!("new{round}");
            fast_import_blobs(repo.path(), 20, 1000 + round, &branch);
            let now: Vec<_> = idx_files(&objects_dir(repo.path()))
                .into_iter()
                .filter(|p| !before.contains(p))
                .collect();
            let fresh = now
                .iter()
                .find(|p| !added.contains(p))
                .cloned()
                .expect("a new pack");
            let fresh_ids: Vec<ObjectId> = show_index(&fresh, "sha1")
                .iter()
                .map(|(id, _)| id.parse().unwrap())
                .collect();
            new_ids.lock().unwrap().extend(fresh_ids);
            if let Some(old) = added.pop() {
                git(
                    repo.path(),
                    &["update-ref", "-d", &format!("refs/heads/new{}", round - 1)],
                );
                std::fs::remove_file(old.with_extension("pack")).unwrap();
                std::fs::remove_file(&old).unwrap();
                let _ = std::fs::remove_file(old.with_extension("rev"));
            }
            added.push(fresh);
            std::thread::sleep(Duration::from_millis(30));
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(lookups.load(Ordering::Relaxed) > 100);
    // The newest pack is present now: a handle made before all this finds its objects after a refresh.
    let last = *new_ids.lock().unwrap().last().unwrap();
    let mut h = store.handle();
    assert!(h.locate(&last).unwrap().is_some());
}

/// `git repack -adf` and `git gc --prune=now` rewrite every pack underneath lookups: no object is ever reported
/// missing (git's order: packs, loose, refresh, packs again).
#[test]
fn repack_and_gc_underneath_lookups_give_no_false_miss() {
    let repo = many_packs(4, 60);
    // Some loose objects too, which gc packs and prunes.
    for i in 0..20 {
        git_stdin(
            repo.path(),
            &["hash-object", "-w", "--stdin"],
            format!("loose {i}\n").as_bytes(),
        );
    }
    // Keep the loose blobs reachable so gc packs them instead of pruning them.
    let all = ids(&all_objects(repo.path()));
    let mut tree_input = String::new();
    for (i, id) in all.iter().enumerate() {
        let ty = git(repo.path(), &["cat-file", "-t", &id.to_string()]);
        if ty.trim() == "blob" {
            tree_input.push_str(&format!("100644 blob {id}\tf{i}\n"));
        }
    }
    let tree = git_stdin(repo.path(), &["mktree"], tree_input.as_bytes());
    let commit = git(repo.path(), &["commit-tree", "-m", "all", tree.trim()]);
    git(
        repo.path(),
        &["update-ref", "refs/heads/all", commit.trim()],
    );
    let all = ids(&all_objects(repo.path()));

    let store = Store::open(repo.path(), Options::default()).unwrap();
    let stop = AtomicBool::new(false);
    let lookups = AtomicUsize::new(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    std::thread::scope(|s| {
        for t in 0..3 {
            let (store, all, stop, lookups) = (&store, &all, &stop, &lookups);
            s.spawn(move || {
                let mut h = store.handle();
                let mut i = t * 17;
                while !stop.load(Ordering::Relaxed) {
                    let id = &all[i % all.len()];
                    match h.locate(id) {
                        Ok(Some(_)) => {}
                        other => panic!("{id} gave {other:?} during repack/gc"),
                    }
                    i += 1;
                    lookups.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let _stop = StopOnDrop(&stop);
        let mut rounds = 0;
        while rounds < 8 && Instant::now() < deadline {
            git(repo.path(), &["repack", "-adf", "-q"]);
            git(repo.path(), &["gc", "--prune=now", "-q"]);
            rounds += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(lookups.load(Ordering::Relaxed) > 0);
}

/// A broken index is recorded once; a miss then reports `Incomplete` naming the file, objects in healthy packs
/// are still found, and the broken file is not reopened on every miss.
#[test]
fn failed_index_gives_incomplete_and_is_not_retried() {
    let repo = many_packs(2, 20);
    let idx = idx_files(&objects_dir(repo.path()));
    let victim = &idx[0];
    let healthy: Vec<ObjectId> = show_index(&idx[1], "sha1")
        .iter()
        .map(|(i, _)| i.parse().unwrap())
        .collect();
    let mut bytes = std::fs::read(victim).unwrap();
    bytes.truncate(100);
    let tmp = victim.with_extension("tmp");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, victim).unwrap();
    let store = Store::open(repo.path(), Options::default().refresh(RefreshMode::Never)).unwrap();
    let mut h = store.handle();
    for id in &healthy {
        assert!(
            matches!(h.locate(id), Ok(Some(Location::Packed { .. }))),
            "{id}"
        );
    }
    let absent: ObjectId = absent_ids(1, 40, 3)[0].parse().unwrap();
    for _ in 0..10 {
        match h.locate(&absent) {
            Err(Error::Incomplete { failed }) => {
                assert_eq!(failed.len(), 1);
                assert_eq!(&failed[0].0, victim);
            }
            other => panic!("expected Incomplete, got {other:?}"),
        }
    }
    assert_eq!(
        store.metrics().index_loads,
        2,
        "the broken index was opened again"
    );
}

/// A pack id of a pack removed by a repack is reported stale, never resolved to another pack.
#[test]
fn stale_pack_id_after_repack() {
    let repo = many_packs(2, 10);
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let id: ObjectId = all_objects(repo.path())[0].parse().unwrap();
    let Some(Location::Packed { pack, .. }) = h.locate(&id).unwrap() else {
        panic!()
    };
    assert!(store.pack_path(pack).is_ok());
    git(repo.path(), &["repack", "-adf", "-q"]);
    store.refresh().unwrap();
    assert!(matches!(
        store.pack_path(pack),
        Err(Error::StalePack { .. })
    ));
    // Locate again: a new, valid pack.
    let Some(Location::Packed { pack: p2, .. }) = h.locate(&id).unwrap() else {
        panic!()
    };
    assert_ne!(p2, pack);
    assert!(store.pack_path(p2).unwrap().exists());
}

fn _assert_types(p: &Path) {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<odb_index::Handle>();
    send_sync::<Store>();
    send_sync::<Arc<Store>>();
    let _ = p;
}

/// `Store::metrics`: listings and index loads at open and after misses, the miss filter's build and the misses it
/// answered (added when the handle is dropped), and a refresh that finds a new pack.
#[test]
fn metrics_count_loads_listings_filter_and_refreshes() {
    use odb_index::MissFilterMode;
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 50, 1, "a");
    let opts = Options::default()
        .refresh(RefreshMode::Never)
        .miss_filter(MissFilterMode::Eager);
    let store = Store::open(repo.path(), opts).unwrap();
    let m = store.metrics();
    assert_eq!((m.listings, m.index_loads, m.refreshes), (1, 0, 0));
    let absent: Vec<ObjectId> = absent_ids(20, 40, 7)
        .iter()
        .map(|h| h.parse().unwrap())
        .collect();
    let mut handle = store.handle();
    for id in &absent {
        assert_eq!(handle.locate(id).unwrap(), None);
    }
    let m = store.metrics();
    assert_eq!((m.index_loads, m.filter_builds), (1, 1));
    assert_eq!(
        m.filter_answers, 0,
        "a live handle has not added its count yet"
    );
    drop(handle);
    let m = store.metrics();
    // The first miss loads the index and builds the filter; the filter answers the rest, bar false positives
    // (about 0.55% each).
    assert!((15..=19).contains(&m.filter_answers), "{m:?}");
    fast_import_blobs(repo.path(), 5, 2, "b");
    assert!(store.refresh().unwrap());
    let m = store.metrics();
    assert_eq!(
        (m.listings, m.refreshes, m.listing_changes),
        (2, 1, 1),
        "{m:?}"
    );
    assert_eq!(m.listing_changes, store.listing_version());
}
