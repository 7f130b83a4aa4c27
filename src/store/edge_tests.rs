//! The edges of the decisions that keep or let go of a pack and that settle a miss, each made
//! deterministic on the real store (direct re-listings, or a hook between two steps) and checked against git.
//! Each test names the one-line bug it fails with (`loom-tests/freshness-mutants.sh` plants them).
//!
//! - [`keep_loaded`](super::listing::successor::keep_loaded): a pack missing from the listings is kept for
//!   [`MAX_KEPT_LISTINGS`] listings in a row, let go at the next, and let go at once when its objects directory
//!   is no longer searched (dropped from `info/alternates`).
//! - [`Handle::locate_again`]: lists again while its answer is the gone location and that file is still missing.
//! - [`Handle::locate_many`]: its held misses are searched again when the change detector reports a change
//!   between the batch's searches and its miss check, and its misses again when it ends on another listing.
//! - a multi-pack-index entry of a pack whose length another thread has read but not yet bounded is answered
//!   from the file, not from the packs' own indices.
//! - [`Handle::locate`]: a re-listing that moved it to a listing with other loose sources (another thread's,
//!   which opened a loose directory this one could not) is followed by a loose step there.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use odb_index_testkit::{fast_import_blobs, idx_files, init_repo, show_index, try_git};

use super::hooks::{self, Point};
use super::listing::successor::MAX_KEPT_LISTINGS;
use super::*;
use crate::oid::ObjectId;

/// The id of the object `hex`.
fn oid(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// An id no repository here has.
fn absent() -> ObjectId {
    oid("0123456789012345678901234567890123456789")
}

/// Whether git has `id` in `repo`.
fn git_has(repo: &Path, id: &ObjectId) -> bool {
    try_git(repo, &["cat-file", "-e", &id.to_string()], b"").is_ok()
}

/// The pack of a packed location.
fn pack_of(loc: Option<Location>) -> PackId {
    match loc {
        Some(Location::Packed { pack, .. }) => pack,
        other => panic!("not packed: {other:?}"),
    }
}

/// A re-listing after a miss (`Handle::refresh_after_miss`'s, which keeps what it does not find).
fn relist(store: &Arc<Store>) {
    let map = store.current.get();
    store.refresh_from(&map, false, false).unwrap();
}

/// Move the `.idx` and `.pack` of the pack whose index is `idx` to `to` (a directory no listing reads).
fn move_pack(idx: &Path, to: &Path) {
    for ext in ["pack", "idx"] {
        let from = idx.with_extension(ext);
        std::fs::rename(&from, to.join(from.file_name().unwrap())).unwrap();
    }
}

/// A pack renamed out of the pack directory after its index was loaded is kept by the next `MAX_KEPT_LISTINGS`
/// re-listings (its objects are answered where git, which keeps a pack it has opened, answers them) and let go
/// by the one after (a repack removed it for good; git, asked afresh, no longer has its objects). Fails if it
/// is let go one listing early (`>=`) or never.
#[test]
fn a_pack_missing_from_the_listings_is_kept_for_max_kept_listings_then_let_go() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let idx = idx_files(&p.join("objects"))[0].clone();
    fast_import_blobs(p, 10, 2, "b");
    let x = oid(&show_index(&idx, "sha1")[0].0);
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let a = pack_of(h.locate(&x).unwrap());
    let away = tempfile::tempdir().unwrap();
    move_pack(&idx, away.path());
    for n in 1..=MAX_KEPT_LISTINGS {
        relist(&store);
        assert!(
            store.is_pack_live(a),
            "let go after {n} listings without it (kept for {MAX_KEPT_LISTINGS})"
        );
    }
    assert_eq!(pack_of(h.locate(&x).unwrap()), a, "its object, while kept");
    relist(&store);
    assert!(
        !store.is_pack_live(a),
        "still kept after {} listings without it",
        MAX_KEPT_LISTINGS + 1
    );
    assert!(!git_has(p, &x));
    assert_eq!(store.handle().locate(&x).unwrap(), None, "as git: gone");
}

/// A loaded pack of an alternate whose line was removed from `info/alternates` is let go by the next listing
/// (its objects directory is no longer searched: git no longer has its objects), though its files are still
/// there. Fails if a pack is kept whatever its objects directory.
#[test]
fn a_loaded_pack_of_an_alternate_dropped_from_info_alternates_is_let_go() {
    let alt = init_repo("sha1", true);
    fast_import_blobs(alt.path(), 10, 3, "c");
    let c = idx_files(&alt.path().join("objects"))[0].clone();
    let x = oid(&show_index(&c, "sha1")[0].0);
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let alternates = p.join("objects/info/alternates");
    std::fs::create_dir_all(alternates.parent().unwrap()).unwrap();
    std::fs::write(
        &alternates,
        format!("{}\n", alt.path().join("objects").display()),
    )
    .unwrap();
    assert!(git_has(p, &x));
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let pack = pack_of(h.locate(&x).unwrap());
    std::fs::write(&alternates, b"").unwrap();
    assert!(!git_has(p, &x));
    relist(&store);
    assert!(
        !store.is_pack_live(pack),
        "a pack of an objects directory no longer searched is kept"
    );
    assert_eq!(store.handle().locate(&x).unwrap(), None, "as git: gone");
}

/// `locate_again` lists again while its answer is the gone location and that file is still missing: here each
/// of its first three listings finds the `.pack` (put back before the listing) and the answer's file gone (taken
/// away after it), the fourth finds it there. Fails if it lists only once, or answers the gone location without
/// checking its file (either answers a location whose `.pack` is missing).
#[test]
fn locate_again_lists_again_while_its_answer_is_a_missing_file() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let idx = idx_files(&p.join("objects"))[0].clone();
    fast_import_blobs(p, 10, 2, "b");
    let x = oid(&show_index(&idx, "sha1")[0].0);
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let gone = h.locate(&x).unwrap().unwrap();
    let pack: PathBuf = idx.with_extension("pack");
    let away = p.join("away.pack");
    std::fs::rename(&pack, &away).unwrap();
    let listings = Rc::new(Cell::new(0));
    let (n, pack2, away2) = (Rc::clone(&listings), pack.clone(), away.clone());
    hooks::every(Point::BeforeAgainListing, move || {
        if !pack2.exists() {
            std::fs::rename(&away2, &pack2).unwrap();
        }
    });
    let (pack2, away2) = (pack.clone(), away.clone());
    hooks::every(Point::AfterAgainListing, move || {
        n.set(n.get() + 1);
        if n.get() <= 3 {
            std::fs::rename(&pack2, &away2).unwrap();
        }
    });
    let again = h.locate_again(&x, gone);
    hooks::clear(Point::BeforeAgainListing);
    hooks::clear(Point::AfterAgainListing);
    assert_eq!(again.unwrap(), Some(gone));
    assert!(
        pack.exists(),
        "answered a location whose .pack is missing (after {} listings)",
        listings.get()
    );
    assert_eq!(listings.get(), 4);
    assert!(git_has(p, &x));
}

/// Backdate `dir`'s modification time, so that a listing trusts its stamp and any change after is seen by `stat`.
fn backdate(dir: &Path) {
    std::fs::OpenOptions::new()
        .read(true)
        .open(dir)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
        .unwrap();
}

/// The batch tests' repositories: `other` holds a pack (`.idx` `b`, its ids `ys`) that `repo` does not have yet;
/// `repo`'s one pack is listed by `store` (its pack directory back-dated, so the listing is trusted) and loaded by
/// `h`, which has missed three times since. `_other` deletes its directory when dropped: keep it bound.
struct BatchRepos {
    _other: tempfile::TempDir,
    b: PathBuf,
    ys: Vec<ObjectId>,
    repo: tempfile::TempDir,
    pack_dir: PathBuf,
    store: Arc<Store>,
    h: Handle,
}

fn batch_repos(options: &Options) -> BatchRepos {
    let other = init_repo("sha1", true);
    fast_import_blobs(other.path(), 5, 2, "b");
    let b = idx_files(&other.path().join("objects"))[0].clone();
    let ys = show_index(&b, "sha1").iter().map(|(h, _)| oid(h)).collect();
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let pack_dir = p.join("objects/pack");
    backdate(&pack_dir);
    let store = Store::open(p, options.clone()).unwrap();
    let mut h = store.handle();
    h.load_indices();
    for _ in 0..3 {
        assert_eq!(h.locate(&absent()).unwrap(), None);
    }
    BatchRepos {
        _other: other,
        b,
        ys,
        repo,
        pack_dir,
        store,
        h,
    }
}

/// A batch whose miss was searched before a pack holding it was renamed into place (a hook after that search,
/// before the batch's miss check): the change check reports the change and the miss is searched again and
/// found, as a single lookup (packs, loose, then the check) finds it. With events (the check first) and with
/// `stat`. Fails if the batch takes its held misses for final when its check says "changed".
#[test]
fn a_batch_searches_its_held_misses_again_when_a_pack_comes_before_its_check() {
    for options in [
        Options::default().change_events_after(0),
        Options::default().change_events(false),
    ] {
        let BatchRepos {
            b,
            ys,
            repo,
            pack_dir,
            store,
            mut h,
            _other: _kept,
        } = batch_repos(&options);
        let (p, y) = (repo.path(), ys[0]);
        let mut out = Vec::new();
        h.locate_many(&[y, absent()], &mut out).unwrap();
        assert_eq!(out, [None, None], "{options:?}: before the write");
        let to = pack_dir.clone();
        hooks::once(Point::AfterBatchSearch, move || {
            // As git renames a pack into place: the `.pack`, then the `.idx`.
            for ext in ["pack", "idx"] {
                let f = b.with_extension(ext);
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        });
        let mut out = Vec::new();
        h.locate_many(&[y, absent()], &mut out).unwrap();
        assert!(hooks::ran(Point::AfterBatchSearch), "the hook ran");
        assert!(git_has(p, &y));
        assert!(
            matches!(out[..], [Some(Location::Packed { .. }), None]),
            "{options:?}: {out:?}: a miss held over a change taken for final"
        );
        assert_eq!(out[0], store.handle().locate(&y).unwrap());
    }
}

/// A batch answers its misses as of the last listing it made. Its two ids are in a pack not yet in
/// the repository; after the first id's search a file is written into the pack directory (so the batch's check
/// says "changed"), and right after the re-listing that the first id's second search makes, the pack is copied
/// into place (as a pack renamed away for a moment comes back). The first id's second search is then a miss in
/// that listing, the second id's lists again and finds the pack: the first is searched once more in the listing
/// the batch ended on, and found. With events and with `stat`. Fails (the first `None`) if a batch keeps a miss
/// decided in a listing it has since left (`misses_again` not called).
#[test]
fn a_batch_answers_its_misses_in_the_listing_it_ended_on() {
    for options in [
        Options::default().change_events_after(0),
        Options::default().change_events(false),
    ] {
        let BatchRepos {
            b,
            mut ys,
            repo,
            pack_dir,
            store,
            mut h,
            _other: _kept,
        } = batch_repos(&options);
        ys.truncate(2);
        let p = repo.path();
        let changed = pack_dir.join("changed");
        hooks::once(Point::AfterBatchSearch, move || {
            std::fs::write(changed, b"").unwrap()
        });
        let to = pack_dir.clone();
        hooks::once(Point::AfterRelist, move || {
            for ext in ["pack", "idx"] {
                let f = b.with_extension(ext);
                std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
            }
        });
        let mut out = Vec::new();
        h.locate_many(&ys, &mut out).unwrap();
        let batch_hook_ran = hooks::ran(Point::AfterBatchSearch);
        let relist_hook_ran = hooks::ran(Point::AfterRelist);
        assert!(
            batch_hook_ran && relist_hook_ran,
            "{options:?}: both hooks ran"
        );
        for (y, got) in ys.iter().zip(&out) {
            assert!(git_has(p, y));
            assert_eq!(
                *got,
                store.handle().locate(y).unwrap(),
                "{options:?}: {out:?}"
            );
        }
        assert!(
            out.iter().all(Option::is_some),
            "{options:?}: {out:?}: a miss kept from a listing the batch left"
        );
    }
}

/// Found by the command's fault matrix under `--threads 2` in a repository younger than its timestamps'
/// resolution: the objects directory's loose descriptor failed to open (EIO, once) when the store was opened, so
/// its loose objects were not searched. A lookup of one (handle `b`) found nothing, and its pack directory,
/// listed too recently to trust, made it list again; meanwhile another thread's lookup (handle `a`, run by the
/// hook) had listed again after the fault and opened the directory. `b` moved to that listing, searched its packs,
/// and stopped: no loose step in the listing whose loose sources it had not probed, no failure left in view, a
/// silent miss. Fails with the re-probe in `Handle::locate_slow` taken out.
#[test]
fn a_relisting_onto_loose_sources_not_yet_probed_probes_them() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let id = odb_index_testkit::git_stdin(p, &["hash-object", "-w", "--stdin"], b"loose one\n");
    let id = oid(id.trim());
    // The pack directory too recent to trust, as a repository made a moment ago is: a miss lists again.
    std::fs::OpenOptions::new()
        .read(true)
        .open(p.join("objects/pack"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    // The open that fails: the first whose failure leaves the objects directory's loose objects unsearched.
    let store = (1..20)
        .find_map(|n| {
            let plan =
                crate::fault::Fault::once(crate::fault::Call::Open, n, crate::fault::errno::EIO);
            let (store, _) =
                crate::fault::on_this_thread(plan, || Store::open(p, Options::default()));
            let store = store.ok()?;
            let problems = store.problems();
            problems
                .iter()
                .any(|q| matches!(q, Problem::LooseNotSearched { .. }))
                .then_some(store)
        })
        .expect("an open whose failure leaves the loose objects unsearched");
    let (mut a, mut b) = (store.handle(), store.handle());
    let found_by_a = Rc::new(Cell::new(None));
    let seen = Rc::clone(&found_by_a);
    hooks::once(Point::BeforeRelist, move || {
        seen.set(Some(a.locate(&id).unwrap()))
    });
    let found = b.locate(&id).unwrap();
    let by_a = found_by_a.get().expect("the hook ran");
    assert!(matches!(by_a, Some(Location::Loose { .. })), "{by_a:?}");
    assert_eq!(
        found, by_a,
        "a silent miss after moving to the other handle's listing"
    );
    assert!(git_has(p, &id));
}

/// Found by the command's fault matrix under `--threads 2` (the first object of a covered pack,
/// `missing`, one run in about 70): a covered pack's length is read on the first lookup that needs it (the
/// listing does not `stat` it), by whichever thread gets there first. Between that thread's read and its store of
/// the bound, this thread's search saw the bound 0 (the entry out of bounds), took "read already" for "the entry
/// is wrong" and searched the packs' own indices; those failing to open (EIO), the id was a silent miss. Now
/// the entry is searched again with the length read, and is the answer.
#[test]
fn an_entry_of_a_pack_another_thread_is_bounding_is_answered_from_the_multi_pack_index() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    fast_import_blobs(p, 10, 2, "b");
    odb_index_testkit::git(p, &["multi-pack-index", "write"]);
    let ids = odb_index_testkit::all_objects(p);
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    h.load_indices();
    let midx = Arc::clone(
        h.snapshot()
            .midx
            .first()
            .expect("the multi-pack-index loaded"),
    );
    midx.read_lens_without_bounds();
    // Every own index fails to open from here on: only the multi-pack-index can answer.
    let plan =
        crate::fault::Fault::from_then_on(crate::fault::Call::Open, 1, crate::fault::errno::EIO);
    let (found, _) = crate::fault::on_this_thread(plan, || {
        ids.iter().map(|id| h.locate(&oid(id))).collect::<Vec<_>>()
    });
    for (id, r) in ids.iter().zip(found) {
        assert!(
            matches!(r, Ok(Some(Location::Packed { .. }))),
            "{id}: {r:?}"
        );
    }
}
