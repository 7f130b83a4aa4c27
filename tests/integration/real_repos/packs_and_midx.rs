//! Loose objects, packs and multi-pack-indices of both hash kinds, cold and rewritten.

use super::*;

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
