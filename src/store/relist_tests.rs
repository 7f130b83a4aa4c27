//! Found by `stress::prefixes` under real maintenance: git replaced a pack of the listing that a
//! prefix lookup or an iteration had just re-listed before its index was loaded (`repack` renames its
//! `.tmp-<pid>-pack-*` files away), and the call failed with `Incomplete` naming the vanished file. Made
//! deterministic here: a hook run right after each re-listing of [`Handle::load_all_relisted`] repacks once.
//!
//! Found by the same stress test, rarely: another thread's refresh replaced the listing while an
//! iteration or a prefix lookup listed the loose objects, after git had moved some of them into a new pack; the
//! last step's `load_all` moved the handle to that listing, whose token was current, so "not re-listed" was
//! taken for "no new pack" and the new pack's objects were never listed. A hook run after the packed step
//! (before the loose objects are listed) makes it deterministic.

use std::ops::ControlFlow;
use std::path::Path;

use odb_index_testkit::{all_objects, fast_import_blobs, git, git_stdin, init_repo};

use super::hooks::{self, Point};
use super::*;
use crate::oid::ObjectId;
use crate::prefix::Prefix;
use crate::sync::plain::Arc;

/// A repository of two packs; a handle listed them; then git repacks them into a third (the handle's listing
/// vanished), and the hook makes sure the first re-listing's pack vanishes too, before it is loaded: new objects
/// are imported and everything is repacked again (another pack name).
fn listing_that_vanishes_twice(repo: &Path, store: &Arc<Store>) -> Handle {
    fast_import_blobs(repo, 30, 1, "a");
    fast_import_blobs(repo, 30, 2, "b");
    let h = store.handle();
    git(repo, &["repack", "-adq"]);
    let repo = repo.to_path_buf();
    hooks::once(Point::AfterRelist, move || {
        fast_import_blobs(&repo, 5, 3, "c");
        git(&repo, &["repack", "-adq"]);
    });
    h
}

/// `objects_sorted`, `for_each_object` and `count_objects`, each on a new repository and the handle `setup`
/// returns (having set a hook): every object git lists, once, and the hook ran (`hook_ran`).
fn each_iteration_lists_every_object(
    setup: impl Fn(&Path, &Arc<Store>) -> Handle,
    hook_ran: impl Fn() -> bool,
) {
    for what in ["objects_sorted", "for_each_object", "count_objects"] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        let store = Store::open(p, Options::default()).unwrap();
        let mut h = setup(p, &store);
        let listed: Vec<String> = match what {
            "objects_sorted" => h.objects_sorted().unwrap(),
            "for_each_object" => {
                let mut all = Vec::new();
                h.for_each_object(|id, loc| {
                    all.push((*id, loc));
                    ControlFlow::Continue(())
                })
                .unwrap();
                all.sort_by_key(|e| e.0);
                all
            }
            _ => {
                let counts = h.count_objects().unwrap();
                assert!(hook_ran(), "the hook ran");
                assert_eq!(counts.total() as usize, all_objects(p).len(), "{what}");
                continue;
            }
        }
        .iter()
        .map(|(id, _)| id.to_string())
        .collect();
        assert!(hook_ran(), "the hook ran");
        assert_eq!(listed, all_objects(p), "{what}");
    }
}

#[test]
fn iteration_lists_every_object_when_a_relisted_pack_vanishes_before_it_is_loaded() {
    each_iteration_lists_every_object(listing_that_vanishes_twice, || {
        hooks::ran(Point::AfterRelist)
    });
}

#[test]
fn prefix_is_found_when_a_relisted_pack_vanishes_before_it_is_loaded() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = listing_that_vanishes_twice(p, &store);
    let x = all_objects(p)[0].clone();
    let prefix = Prefix::from_hex(&x[..10], HashKind::Sha1).unwrap();
    assert_eq!(
        h.lookup_prefix(&prefix).unwrap(),
        PrefixLookup::Unique(x.parse().unwrap())
    );
    assert!(hooks::ran(Point::AfterRelist), "the hook ran");
}

/// A pack and `LOOSE` loose blobs; a handle settled on that listing. The hook, run after the handle's packed
/// step: git packs the loose blobs into a new pack and removes them (as `repack -d` does), then
/// another caller's refresh (here `Store::refresh`; in the stress test another thread's miss) replaces the
/// listing, draining the pack directory's events. Returns the handle and the loose blobs' ids.
fn loose_objects_packed_and_relisted_by_another(
    repo: &Path,
    store: &Arc<Store>,
) -> (Handle, Vec<String>) {
    packed_and_relisted_by_another(repo, store, false)
}

/// [`loose_objects_packed_and_relisted_by_another`], with the pack directory's mtime set 10 s back before the
/// other caller's refresh, so its listing trusts its timestamps (a directory changed within a second of a
/// listing makes the listing untrusted, and the next check re-lists anyway: that hid a missing "the handle is on
/// another listing than at the call" in `Handle::load_all_relisted`).
fn loose_objects_packed_and_relisted_by_another_trusted(
    repo: &Path,
    store: &Arc<Store>,
) -> (Handle, Vec<String>) {
    packed_and_relisted_by_another(repo, store, true)
}

fn packed_and_relisted_by_another(
    repo: &Path,
    store: &Arc<Store>,
    backdate: bool,
) -> (Handle, Vec<String>) {
    fast_import_blobs(repo, 30, 1, "a");
    let loose: Vec<String> = (0..LOOSE)
        .map(|i| {
            let blob = format!("loose blob {i}\n");
            git_stdin(repo, &["hash-object", "-w", "--stdin"], blob.as_bytes())
                .trim()
                .to_owned()
        })
        .collect();
    store.refresh().unwrap();
    let mut h = store.handle();
    h.load_indices();
    let (repo, store, ids) = (repo.to_path_buf(), Arc::clone(store), loose.join("\n"));
    hooks::once(Point::AfterPacks, move || {
        // What `repack -d` does with loose objects (the blobs are unreachable: `repack` would skip them).
        git_stdin(
            &repo,
            &["pack-objects", "-q", "objects/pack/pack"],
            ids.as_bytes(),
        );
        git(&repo, &["prune-packed"]);
        if backdate {
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .open(repo.join("objects/pack"))
                .unwrap();
            dir.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
                .unwrap();
        }
        assert!(store.refresh().unwrap(), "the refresh found the new pack");
    });
    (h, loose)
}

/// How many loose blobs [`loose_objects_packed_and_relisted_by_another`] writes.
const LOOSE: usize = 4;

#[test]
fn iteration_lists_objects_packed_while_loose_were_listed_under_a_listing_another_refresh_made() {
    each_iteration_lists_every_object(
        |p, store| loose_objects_packed_and_relisted_by_another(p, store).0,
        || hooks::ran(Point::AfterPacks),
    );
}

#[test]
fn prefix_of_an_object_packed_while_loose_were_listed_under_a_listing_another_refresh_made() {
    prefix_of_an_object_packed_while_loose_were_listed(false);
}

/// A prefix lookup of one of the loose blobs [`packed_and_relisted_by_another`] packs (`backdate`: as it says).
fn prefix_of_an_object_packed_while_loose_were_listed(backdate: bool) {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let store = Store::open(p, Options::default()).unwrap();
    let (mut h, loose) = packed_and_relisted_by_another(p, &store, backdate);
    let x = &loose[0];
    let prefix = Prefix::from_hex(&x[..12], HashKind::Sha1).unwrap();
    assert_eq!(
        h.lookup_prefix(&prefix).unwrap(),
        PrefixLookup::Unique(x.parse().unwrap())
    );
    assert!(hooks::ran(Point::AfterPacks), "the hook ran");
}

#[test]
fn iteration_lists_objects_packed_while_loose_were_listed_under_a_trusted_listing_another_refresh_made()
 {
    each_iteration_lists_every_object(
        |p, store| loose_objects_packed_and_relisted_by_another_trusted(p, store).0,
        || hooks::ran(Point::AfterPacks),
    );
}

#[test]
fn prefix_of_an_object_packed_while_loose_were_listed_under_a_trusted_listing_another_refresh_made()
{
    prefix_of_an_object_packed_while_loose_were_listed(true);
}

/// A miss under maintenance got `Incomplete` naming a pack that vanished between a re-listing and
/// its load (`locate` re-listed once; `repack` had renamed the re-listed pack away meanwhile). A miss lists
/// again while a file of its listing vanished (a few times at most), and a vanished file is never what makes a
/// miss uncertain: the answer is git's, `None`, under the default `IncompleteMode::Error`. Here the handle's
/// listing vanishes (a repack), and the hook makes the first re-listing's pack vanish too.
#[test]
fn a_miss_is_none_when_a_relisted_pack_vanishes_before_it_is_loaded() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = listing_that_vanishes_twice(p, &store);
    let before: Vec<String> = all_objects(p);
    // An object of the first packs: in neither the handle's listing (repacked) nor the first re-listing (the
    // hook repacks it away before it is loaded): only a second re-listing finds it.
    let x = before[0].parse().unwrap();
    assert!(
        matches!(h.locate(&x), Ok(Some(Location::Packed { .. }))),
        "{x} not found after its pack vanished twice"
    );
    assert!(hooks::ran(Point::AfterRelist), "the hook ran");
    let absent = "0123456789012345678901234567890123456789".parse().unwrap();
    assert_eq!(h.locate(&absent).unwrap(), None);
    // And every object is found, by this handle and a new one.
    for x in all_objects(p) {
        let id = x.parse().unwrap();
        assert!(h.locate(&id).unwrap().is_some(), "{x}");
        assert!(store.handle().locate(&id).unwrap().is_some(), "{x}");
    }
}

/// A pack whose `.pack` vanished before its index was loaded, and came back (the same file) before the
/// re-listing that miss made: the re-listing lists the same packs, and with events the same token would vouch
/// for it; kept as it was, the map would keep the recorded failure and every lookup of the pack's objects would
/// miss. A re-listing after a vanished file replaces the map, whose slot for it loads again.
#[cfg(unix)]
#[test]
fn a_pack_back_before_the_relisting_is_loaded_again() {
    for events_after in [0, Options::DEFAULT_CHANGE_EVENTS_AFTER] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        fast_import_blobs(p, 30, 1, "a");
        let store = Store::open(p, Options::default().change_events_after(events_after)).unwrap();
        let mut h = store.handle();
        let pack = std::fs::read_dir(p.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|f| f.extension().is_some_and(|e| e == "pack"))
            .unwrap();
        let x = all_objects(p)[0].clone();
        let kept = p.join("kept.pack");
        std::fs::hard_link(&pack, &kept).unwrap();
        std::fs::remove_file(&pack).unwrap();
        let (kept2, pack2) = (kept.clone(), pack.clone());
        hooks::once(Point::BeforeRelist, move || {
            std::fs::hard_link(&kept2, &pack2).unwrap();
        });
        let found = h.locate(&x.parse().unwrap());
        assert!(hooks::ran(Point::BeforeRelist), "the hook ran");
        assert!(
            matches!(found, Ok(Some(Location::Packed { .. }))),
            "{x}: {found:?} (events after {events_after})"
        );
        let listings = store.metrics().listings;
        let absent = "0123456789012345678901234567890123456789".parse().unwrap();
        for _ in 0..5 {
            assert_eq!(h.locate(&absent).unwrap(), None);
        }
        assert!(
            store.metrics().listings <= listings + 1,
            "misses after the re-listing keep listing: {} -> {}",
            listings,
            store.metrics().listings
        );
    }
}

/// The bound of the re-listings a miss or an iteration makes while files of their listings keep vanishing:
/// `MAX_RELISTS` each, no more (a hook that repacks after every re-listing, so every
/// listing's pack vanishes before it is loaded).
#[test]
fn relisting_while_packs_keep_vanishing_stops_at_its_bound() {
    fn arm(repo: std::path::PathBuf, count: std::rc::Rc<std::cell::Cell<usize>>) {
        hooks::once(Point::AfterRelist, move || {
            count.set(count.get() + 1);
            fast_import_blobs(
                &repo,
                2,
                10 + count.get() as u64,
                &format!("d{}", count.get()),
            );
            git(&repo, &["repack", "-adq"]);
            arm(repo, count);
        });
    }
    for what in ["locate", "count_objects"] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        let store = Store::open(p, Options::default()).unwrap();
        let mut h = listing_that_vanishes_twice(p, &store);
        let count = std::rc::Rc::new(std::cell::Cell::new(0));
        arm(p.to_path_buf(), std::rc::Rc::clone(&count));
        let absent = "0123456789012345678901234567890123456789".parse().unwrap();
        // Whatever the last listing's pack did (it vanished too), a file that vanished is no reason to doubt a
        // miss: git's answer, `None`, and a count, not `Incomplete`.
        match what {
            "locate" => assert_eq!(h.locate(&absent).unwrap(), None),
            _ => assert!(h.count_objects().is_ok(), "count_objects: Incomplete"),
        }
        hooks::clear(Point::AfterRelist);
        // `count_objects` lists again before it counts and after the loose objects: twice the bound.
        let calls = if what == "locate" { 1 } else { 2 };
        assert_eq!(count.get(), calls * super::freshness::MAX_RELISTS, "{what}");
    }
}

/// A dropped handle reports the misses it counted and had not reported (fewer than a batch): a store whose
/// handles each miss a few times still sets events up once they add up (`Handle`'s `Drop`, `Freshness::report`).
/// Before the drop the count is the handle's alone (the detector still defers); after it, the detector has
/// counted enough. What would go wrong: a `Drop` that does not report keeps a store of short-lived handles on
/// `stat` for ever.
#[cfg(unix)]
#[test]
fn a_dropped_handle_reports_its_uncounted_misses() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 3, 1, "a");
    let store = Store::open(p, Options::default().change_events_after(3)).unwrap();
    let deferring = || store.current.get().meta().fresh.keeps_deferring();
    assert!(deferring(), "a new store defers its events");
    let absent = "0123456789012345678901234567890123456789".parse().unwrap();
    let mut h = store.handle();
    for _ in 0..3 {
        assert_eq!(h.locate(&absent).unwrap(), None);
    }
    assert!(
        deferring(),
        "three misses (fewer than a batch) are the handle's until it reports them"
    );
    drop(h);
    assert!(
        !deferring(),
        "the dropped handle's misses reached the detector"
    );
}

/// A loose object packed as `git repack -d` packs it (a new pack written, then the loose file pruned) between
/// a lookup's change check and its loose step: the object was in the repository all along, so the lookup must
/// find it (git's order: packs, loose, then the pack directories again; F5 in docs/FRESHNESS.md, section 2). Where it
/// happens: `LooseMode::Watched` on the slow path, after the drain that lets it list a fan-out directory afresh
/// (the refresh check reused that drain and said "nothing changed"); `Probe` and `Cached` with events on the
/// steady path, whose quiet check came before the probe.
#[test]
fn an_object_packed_and_pruned_between_the_check_and_the_loose_step_is_found() {
    for loose in [LooseMode::Watched, LooseMode::Probe, LooseMode::Cached] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        fast_import_blobs(p, 30, 1, "a");
        // One loose object: `fast-import` writes a pack, so the blob is written with `hash-object -w`.
        let x = git_stdin(
            p,
            &["hash-object", "-w", "--stdin"],
            b"packed while it is looked up\n",
        )
        .trim()
        .to_string();
        let store = Store::open(p, Options::default().loose(loose).change_events_after(0)).unwrap();
        let mut h = store.handle();
        let absent = "0123456789012345678901234567890123456789".parse().unwrap();
        assert_eq!(h.locate(&absent).unwrap(), None);
        assert!(store.change_events(), "events are set up");
        let (repo_path, x2) = (p.to_path_buf(), x.clone());
        let pack_and_prune: Box<dyn FnOnce()> = Box::new(move || {
            // What `repack -d` does for a loose object: a new pack holding it, then `prune-packed`.
            git_stdin(
                &repo_path,
                &["pack-objects", "-q", "objects/pack/pack"],
                format!("{x2}\n").as_bytes(),
            );
            git(&repo_path, &["prune-packed"]);
        });
        let point = if loose == LooseMode::Watched {
            Point::BeforeLoose
        } else {
            Point::BeforeSteadyProbe
        };
        hooks::once(point, pack_and_prune);
        let found = h.locate(&x.parse().unwrap());
        assert!(hooks::ran(point), "the hook ran ({loose:?})");
        assert!(
            !p.join("objects").join(&x[..2]).join(&x[2..]).exists(),
            "prune-packed removed the loose file"
        );
        assert!(
            matches!(found, Ok(Some(Location::Packed { .. }))),
            "{x}: {found:?} ({loose:?})"
        );
    }
}

/// Another thread's refresh replaces the listing in the middle of a `locate_many` batch, after the
/// batch searched (and held the miss of) an object of a pack written before the batch began; the batch's next
/// search notices the retired listing and moves the handle. The held miss was searched in a listing the handle
/// has left: it is searched again in the new one and found (the other refresh drained the pack's event and its
/// stamps are the directory's: a change check on the new listing says "nothing changed"). With events and with
/// `stat` (the pack directory backdated, so the new listing trusts its stamps). Fails if the held misses are
/// compared with the listing the handle is on at the end of the batch rather than the one they were searched in.
#[test]
fn a_held_miss_is_searched_again_when_another_threads_refresh_moves_the_handle_mid_batch() {
    for options in [
        Options::default().change_events_after(0),
        Options::default().change_events(false),
    ] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        fast_import_blobs(p, 30, 1, "a");
        let a: ObjectId = all_objects(p)[0].parse().unwrap();
        let store = Store::open(p, options.clone()).unwrap();
        let mut h = store.handle();
        h.load_indices();
        let absent: ObjectId = "0123456789012345678901234567890123456789".parse().unwrap();
        for _ in 0..3 {
            assert_eq!(h.locate(&absent).unwrap(), None);
        }
        let before: std::collections::HashSet<String> = all_objects(p).into_iter().collect();
        fast_import_blobs(p, 5, 2, "b");
        let b: ObjectId = all_objects(p)
            .into_iter()
            .find(|x| !before.contains(x))
            .unwrap()
            .parse()
            .unwrap();
        std::fs::OpenOptions::new()
            .read(true)
            .open(p.join("objects/pack"))
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
            .unwrap();
        let other = Arc::clone(&store);
        hooks::once(Point::AfterBatchSearch, move || {
            let refreshed = std::thread::spawn(move || other.refresh().unwrap());
            assert!(
                refreshed.join().unwrap(),
                "the other thread's refresh found the new pack"
            );
        });
        let mut out = Vec::new();
        h.locate_many(&[b, a, absent], &mut out).unwrap();
        assert!(hooks::ran(Point::AfterBatchSearch), "the hook ran");
        assert!(
            matches!(
                out[..],
                [
                    Some(Location::Packed { .. }),
                    Some(Location::Packed { .. }),
                    None
                ]
            ),
            "{options:?}: {out:?}"
        );
        assert_eq!(out[0], store.handle().locate(&b).unwrap(), "{options:?}");
    }
}
