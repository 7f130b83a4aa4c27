//! The real store under loom: `Store::open`, `Handle::locate` (its steady and slow paths), the store's loader
//! (`load_slot`, a covered pack waiting for its multi-pack-index's slot) and the miss filter's publication, over
//! small repositories written to a temporary directory before the model runs. The protocol's atomics, mutexes,
//! condition variables and the map's `Arc` are loom's (`src/sync/`); file access is plain std, which loom
//! neither sees nor needs to (each execution opens the store afresh, so every execution starts cold).
//!
//! These models catch in the store what the fake-index models cannot: a handle that marks its view settled too
//! early (`View::catch_up`) as the store's fast miss path sees it, a covered pack's loader that opens its `.idx`
//! instead of waiting for the multi-pack-index, a reference count touched on the default configuration's miss path
//! (P4 counted on the store itself, `OnMiss` refresh and loose probing included).

use std::path::{Path, PathBuf};

use odb_index::idx::write::{Entry, write_idx};
use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::testing::model::{OpCounts, spawn, take_op_counts};
use odb_index::{HashKind, LooseMode, MissFilterMode, ObjectId, Options, RefreshMode, Store};

const KIND: HashKind = HashKind::Sha1;

/// Object `n` of the fixtures.
pub fn id(n: u32) -> ObjectId {
    KIND.digest(format!("loom store object {n}").as_bytes())
}

/// An id no fixture pack holds.
pub fn absent() -> ObjectId {
    KIND.digest(b"loom store: absent")
}

/// An objects directory whose pack `k` holds the objects `packs[k]` (hand-written `.idx` files and stub packs);
/// with `midx_covers` > 0, a multi-pack-index covers the first `midx_covers` packs. Returns the directory (kept
/// alive by the caller) and its path.
pub fn objects(packs: &[&[u32]], midx_covers: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let pack_dir = tmp.path().join("pack");
    std::fs::create_dir(&pack_dir).unwrap();
    let mut covered = Vec::new();
    for (k, objs) in packs.iter().enumerate() {
        let pack = write_pack(&pack_dir, k, objs);
        if k < midx_covers {
            covered.push(pack);
        }
    }
    if midx_covers > 0 {
        std::fs::write(
            pack_dir.join("multi-pack-index"),
            write_midx(1, KIND, &covered).unwrap(),
        )
        .unwrap();
    }
    let path = tmp.path().to_path_buf();
    (tmp, path)
}

/// Write pack `k` (a hand-written `.idx` and a stub pack) holding `objs` into `pack_dir`; returns what a
/// multi-pack-index needs to cover it.
fn write_pack(pack_dir: &Path, k: usize, objs: &[u32]) -> PackEntries {
    let entries: Vec<Entry> = objs
        .iter()
        .map(|&n| Entry {
            id: id(n),
            offset: 12 + 100 * u64::from(n),
            crc32: 0,
        })
        .collect();
    let sum = KIND.digest(format!("loom store pack {k}").as_bytes());
    let name = format!("pack-{sum}.idx");
    let len = entries.iter().map(|e| e.offset).max().unwrap_or(12) + 1 + KIND.len() as u64;
    odb_index_testkit::write_stub_pack(
        &pack_dir.join(&name).with_extension("pack"),
        entries.len() as u32,
        len,
        sum.as_bytes(),
    );
    std::fs::write(
        pack_dir.join(&name),
        write_idx(2, KIND, &entries, &sum).unwrap(),
    )
    .unwrap();
    PackEntries {
        name,
        entries: entries.iter().map(|e| (e.id, e.offset)).collect(),
    }
}

/// One execution: a refresh (a pack added to a fresh repository of two, then `Store::refresh`, which builds the
/// successor map from what was loaded) races a handle looking up the objects of both old packs. The handle finds
/// them (in the old map or, after `RETIRED`, the new one); afterwards a fresh handle finds all three, and each
/// index was opened exactly once across the two maps (loaded values are carried over, never reloaded).
pub fn refresh_racing_a_handle() {
    let (_tmp, dir) = objects(&[&[1], &[2]], 0);
    let store = Store::open(&dir, racing_options()).unwrap();
    let s2 = store.clone();
    let t = spawn(move || {
        let mut h = s2.handle();
        for n in [1, 2] {
            assert!(
                h.locate(&id(n)).unwrap().is_some(),
                "false miss of {n} during a refresh"
            );
        }
    });
    write_pack(&dir.join("pack"), 2, &[3]);
    assert!(store.refresh().unwrap(), "the listing changed");
    t.join().unwrap();
    let mut h = store.handle();
    for n in [1, 2, 3] {
        assert!(
            h.locate(&id(n)).unwrap().is_some(),
            "{n} missing after the refresh"
        );
    }
    assert_eq!(
        store.metrics().index_loads,
        3,
        "an index opened twice across the refresh"
    );
}

/// The options of the racing models: no refresh (the listing never changes), no loose objects, the filter built
/// on the first settled miss.
fn racing_options() -> Options {
    Options::default()
        .hash_kind(KIND)
        .refresh(RefreshMode::Never)
        .loose(LooseMode::None)
        .miss_filter(MissFilterMode::Eager)
}

/// One execution: a handle that looks up `first` then `then` (the absent id not first) against a thread that
/// looks up the absent id, on a cold store over `dir`. Both must answer right; afterwards a fresh handle finds
/// every id of `all`, and the store opened `loads` index files.
pub fn reused_handle_against_a_loader(dir: &Path, wanted: &[u32], all: &[u32], loads: u64) {
    let store = Store::open(dir, racing_options()).unwrap();
    let s2 = store.clone();
    let t = spawn(move || {
        let mut h = s2.handle();
        assert_eq!(h.locate(&absent()).unwrap(), None, "found an absent id");
    });
    let mut h = store.handle();
    let found: Vec<bool> = wanted
        .iter()
        .map(|&n| h.locate(&id(n)).unwrap().is_some())
        .collect();
    t.join().unwrap();
    assert!(
        found.iter().all(|&f| f),
        "false miss with a reused handle: {wanted:?} found {found:?}"
    );
    assert_eq!(h.locate(&absent()).unwrap(), None);
    // The same handle (now settled, its filter possibly installed) and a fresh one find everything.
    let mut fresh = store.handle();
    for &n in all {
        assert!(
            h.locate(&id(n)).unwrap().is_some(),
            "{n} missing for the reused handle"
        );
        assert!(
            fresh.locate(&id(n)).unwrap().is_some(),
            "{n} missing at the end"
        );
    }
    assert_eq!(store.metrics().index_loads, loads, "index files opened");
}

/// P4 on the store in its default configuration (refresh on miss, loose probing, the `Auto` filter): once a
/// handle has settled and decided its filter, a miss costs exactly one Acquire load of shared state, counted
/// over every facade atomic, mutex, wait and `Arc` clone or drop; and so does a hit in its snapshot. Both while
/// change events are deferred (the default's first misses: `stat` and probes) and with them set up.
pub fn default_miss_path(dir: &Path) {
    for after in [Options::DEFAULT_CHANGE_EVENTS_AFTER, 0] {
        default_miss_path_with(dir, after);
    }
}

fn default_miss_path_with(dir: &Path, events_after: u32) {
    let options = Options::default()
        .hash_kind(KIND)
        .change_events_after(events_after);
    let store = Store::open(dir, options).unwrap();
    let mut h = store.handle();
    // Settle the view and let the `Auto` filter decide (a few ids: it is built at once).
    for _ in 0..4 {
        assert_eq!(h.locate(&absent()).unwrap(), None);
    }
    assert_eq!(
        store.change_events(),
        events_after == 0 && cfg!(target_os = "linux"),
        "events deferred for {events_after} misses"
    );
    assert!(h.locate(&id(1)).unwrap().is_some());
    // With change events (the default on Linux), the miss also reads the change detector's state word (Acquire,
    // pairing with the Release that ends a drain; `src/store/watch/inotify.rs`) and two Relaxed words. Events deferred (the
    // default's first misses: `stat`), one Relaxed word. Since the token and the deferred count moved to the
    // facade (`src/store/freshness.rs`, `watch.rs`), their Relaxed loads are counted here (the counts measured on
    // this code; issue 30 put `BucketState` on the facade too, which adds nothing to this miss: the filter
    // answers it). Loads only: no read-modify-write, store, lock or wait.
    let expected = if store.change_events() {
        OpCounts {
            acquire_loads: 2,
            other_loads: 2,
            ..OpCounts::ONE_ACQUIRE_LOAD
        }
    } else {
        OpCounts {
            other_loads: 1,
            ..OpCounts::ONE_ACQUIRE_LOAD
        }
    };
    take_op_counts();
    assert_eq!(h.locate(&absent()).unwrap(), None);
    assert_eq!(
        take_op_counts(),
        expected,
        "the default configuration's miss (events after {events_after} misses)"
    );
    assert!(h.locate(&id(1)).unwrap().is_some());
    assert_eq!(
        take_op_counts(),
        OpCounts::ONE_ACQUIRE_LOAD,
        "a hit in the snapshot"
    );
}

/// Write an empty loose object file for `id` under `objects` (existence is all a lookup checks).
fn write_loose(objects: &Path, id: &ObjectId) {
    let hex = id.to_string();
    let fan = objects.join(&hex[..2]);
    std::fs::create_dir_all(&fan).unwrap();
    std::fs::write(fan.join(&hex[2..]), b"").unwrap();
}

/// An object id other than `not` in the same fan-out directory as `not` (the first such `id(n)`, n >= 1000).
fn same_fanout(not: &ObjectId) -> ObjectId {
    (1000..)
        .map(id)
        .find(|c| c.first_byte() == not.first_byte() && c != not)
        .unwrap()
}

/// One execution: loose objects through the store in each loose mode, and through [`LooseCache`] directly.
/// `Watched` and `Probe` see an object written (into a fan-out directory a lookup has already listed or probed)
/// before the next lookup began; `Cached` answers from its listing until refreshed, and a refreshed
/// [`LooseCache`] sees it. Catches a fan-out directory named in the wrong case, a listing parsed into wrong ids, an upper-case name
/// taken for an object,
/// a watched listing used although its fan-out's version moved, a cache refresh that keeps its listings.
///
/// [`LooseCache`]: odb_index::testing::LooseCache
pub fn loose_objects_in_every_mode() {
    use odb_index::testing::{LooseCache, LooseDb};
    let a = id(100);
    let b = same_fanout(&a);
    let upper = (2000..)
        .map(id)
        .find(|c| c.first_byte() == a.first_byte())
        .unwrap();
    for mode in [LooseMode::Watched, LooseMode::Probe, LooseMode::Cached] {
        let (_tmp, dir) = objects(&[&[1]], 0);
        write_loose(&dir, &a);
        // A file named in upper-case hex is not a loose object (git writes lower case; a probe cannot find it).
        let hex = upper.to_string().to_uppercase();
        std::fs::write(dir.join(hex[..2].to_lowercase()).join(&hex[2..]), b"").unwrap();
        let store = Store::open(
            &dir,
            Options::default()
                .hash_kind(KIND)
                .loose(mode)
                .change_events_after(0),
        )
        .unwrap();
        if mode == LooseMode::Watched && cfg!(target_os = "linux") {
            assert!(store.change_events(), "change events on in the model");
        }
        let mut h = store.handle();
        assert!(
            matches!(
                h.locate(&a).unwrap(),
                Some(odb_index::Location::Loose { .. })
            ),
            "{mode:?}: loose object not found"
        );
        assert!(
            h.locate(&id(1)).unwrap().is_some(),
            "{mode:?}: packed object"
        );
        assert_eq!(h.locate(&absent()).unwrap(), None, "{mode:?}: absent id");
        assert_eq!(
            h.locate(&upper).unwrap(),
            None,
            "{mode:?}: an upper-case name listed"
        );
        assert_eq!(h.locate(&b).unwrap(), None, "{mode:?}: not yet written");
        write_loose(&dir, &b);
        let seen = h.locate(&b).unwrap().is_some();
        if mode == LooseMode::Cached {
            assert!(!seen, "Cached answers from its listing until refreshed");
        } else {
            assert!(
                seen,
                "{mode:?}: an object written before the lookup began is missed"
            );
        }
        assert!(h.locate(&a).unwrap().is_some(), "{mode:?}: {a} lost");
    }
    let (_tmp, dir) = objects(&[], 0);
    write_loose(&dir, &a);
    let mut cache = LooseCache::new(LooseDb::open(&dir, KIND).unwrap());
    assert!(cache.contains(&a).unwrap(), "LooseCache: {a}");
    assert!(!cache.contains(&b).unwrap());
    write_loose(&dir, &b);
    assert!(!cache.contains(&b).unwrap(), "stale until refreshed");
    cache.refresh();
    assert!(
        cache.contains(&b).unwrap(),
        "LooseCache::refresh keeps its listings"
    );
}

/// One execution: a refresh whose successor moves the multi-pack-index's slot. The first listing has one pack
/// (loaded by a lookup); then two packs and a multi-pack-index covering only those two are written. The new
/// listing plans `[midx, pack 0, pack 1 (covered), pack 2 (covered)]`; the successor puts the carried pack 0
/// first, so the multi-pack-index moves from slot 0 to slot 1 and the covered packs' `covered_by` must follow
/// it: otherwise they wait for pack 0's slot, find no multi-pack-index there and open their own `.idx` files
/// (four index files opened instead of two).
pub fn successor_remaps_covered_slots() {
    let (_tmp, dir) = objects(&[&[1]], 0);
    let store = Store::open(&dir, racing_options()).unwrap();
    let mut h = store.handle();
    assert!(h.locate(&id(1)).unwrap().is_some());
    let pack_dir = dir.join("pack");
    let covered = vec![
        write_pack(&pack_dir, 1, &[2]),
        write_pack(&pack_dir, 2, &[3]),
    ];
    std::fs::write(
        pack_dir.join("multi-pack-index"),
        write_midx(1, KIND, &covered).unwrap(),
    )
    .unwrap();
    assert!(store.refresh().unwrap(), "the listing changed");
    let mut h = store.handle();
    for n in [1, 2, 3] {
        assert!(
            h.locate(&id(n)).unwrap().is_some(),
            "{n} missing after the refresh"
        );
    }
    assert_eq!(h.locate(&absent()).unwrap(), None);
    assert_eq!(
        store.metrics().index_loads,
        2,
        "index files opened: pack 0's .idx and the multi-pack-index (covered packs open nothing)"
    );
}
