//! A thread's access to the store: the [`Handle`], and its lookup.
//!
//! # The search order
//!
//! git's, in three steps:
//! 1. The packs: first what this handle has seen (its [`Snapshot`], `snapshot.rs`: the pack of the last hit, the
//!    other packs newest first, then the multi-pack-indices), then what the current map holds that it has not
//!    (`View::settle`: slots other lookups loaded, or loaded by this one in slot order, blocking while another
//!    thread loads the one it needs; docs/PROTOCOL.md).
//! 2. The loose objects, each objects directory in turn (the repository's own, then its alternates).
//! 3. Under `RefreshMode::OnMiss`, the change check: if a pack directory changed since the listing (or was listed
//!    too recently to trust), or an index vanished before it was loaded, list again ([`Handle::relist`]) and
//!    search the packs of the new listing (step 1 again; at most [`MAX_RELISTS`] times while git keeps replacing
//!    the packs of each new listing).
//!
//! # Two paths
//!
//! [`Handle::locate`] runs the steady path inline (`steady.rs`): a hit in the snapshot (one Acquire load after
//! it, to notice a retired map), or a miss in a settled map followed by what the handle's [`MissShape`] says
//! (loose probe, change check, in its order), with no lock, allocation or read-modify-write (P4).
//!
//! Anything else (an index to load, a map replaced, a failed index, an entry with a bad offset, an unreadable
//! directory, a failed probe, a change) makes it stop with the [`Stage`] it reached, and the slow path
//! ([`locate_slow`](Handle::locate_slow), here) goes on from there: the general loop of the three steps, with
//! the answer for an id found nowhere decided once, at the end (`miss.rs`).
//!
//! [`Handle::locate_many`] runs the same steps per id (`batch.rs`), its misses sharing one change check.
//!
//! # The check after the loose step
//!
//! F5 (docs/FRESHNESS.md): every change check that decides a miss is made after that miss's loose step (a loose
//! object that `repack -d` packs and prunes between a check and the loose step is then found in the new pack),
//! except where the loose step reads no file (the watched shapes of [`MissShape`]). The slow path drains the
//! change events before its loose step (the watched listings then count every file written before the lookup
//! began) and makes its own check after it ([`packs_changed`](Handle::packs_changed)).
//!
//! # The rest
//!
//! [`Handle::locate_again`] (a located file was gone), and the loading of every index that prefix lookups and
//! iteration need ([`load_all_relisted`](Handle::load_all_relisted), `relist.rs`).

use std::marker::PhantomData;
use std::path::PathBuf;

use super::snapshot::Snapshot;
use crate::store::freshness::{MAX_RELISTS, RealFs, Tally};
use crate::store::hooks::{self, Point};
use crate::store::listing::load::{Loaded, Map, load_slot};
use crate::store::listing::loose_sources::{FanoutLists, LooseSource, LooseStep};
use crate::store::listing::{Listing, pack_path_in};
use crate::store::metrics::Counters;
use crate::store::options::MissShape;
use crate::store::watch::FALLBACK;

use crate::error::Error;
use crate::ids::PackId;
use crate::oid::{HashKind, ObjectId};
use crate::protocol::{Settled, View};
use crate::store::{Location, Store};
use crate::sync;
use crate::sync::plain::Arc;

impl Store {
    /// A new handle for one thread.
    pub fn handle(self: &Arc<Self>) -> Handle {
        let map = self.current.get();
        Handle {
            store: Arc::clone(self),
            view: View::new(map),
            snap: Snapshot::default(),
            kind: self.kind,
            shape: MissShape::of(&self.options),
            fanouts: FanoutLists::default(),
            tally: Tally::default(),
            own_indices: Vec::new(),
            batch_misses: Vec::new(),
            _not_sync: PhantomData,
        }
    }
}

/// One thread's access to a [`Store`]: cheap to make, `Send` but not `Sync`; lookups take `&mut self`.
///
/// A handle caches the indices it has seen and re-collects only when the store's state changed, so a hit
/// allocates nothing and a steady-state miss does one Acquire load of shared memory (plus, in the default
/// configuration on Linux, one `ioctl` on the store's inotify descriptor and two more loads (the token and the
/// detector's state) plus one per fan-out version used; elsewhere the loose probe and, under
/// [`RefreshMode::OnMiss`](crate::store::RefreshMode::OnMiss), one `stat` per pack directory).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{Location, ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?;
/// let mut handle = store.handle();
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// let Some(Location::Packed { pack, offset }) = handle.locate(&hello)? else { panic!("packed") };
/// assert_eq!(offset, 12); // the first entry, after the pack header
/// assert!(handle.pack(pack)?.pack_path.is_file());
/// // Another thread makes its own handle of the same store.
/// let store2 = store.clone();
/// let counts = std::thread::spawn(move || store2.handle().count_objects()).join().unwrap()?;
/// assert_eq!(counts.packed, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Handle {
    pub(in crate::store) store: Arc<Store>,
    pub(in crate::store) view: View<Loaded, Listing>,
    pub(in crate::store) snap: Snapshot,
    // Copies of the store's settings, so the miss path does not reach through the store for them.
    pub(in crate::store) kind: HashKind,
    /// What a miss does after its pack search (the options' [`MissShape`]).
    pub(in crate::store) shape: MissShape,
    /// This handle's listings of fan-out directories ([`LooseMode::Watched`](crate::store::LooseMode::Watched)).
    pub(in crate::store) fanouts: FanoutLists,
    /// Misses answered while the store's change events are deferred, not yet reported to the detector
    /// ([`Options::change_events_after`](crate::store::Options::change_events_after)); counted by the `stat` check.
    pub(in crate::store) tally: Tally,
    /// `.idx` files opened for [`Handle::locate_in_pack`] on packs a multi-pack-index covers.
    pub(in crate::store) own_indices: Vec<(PackId, Arc<crate::idx::PackIndex>)>,
    /// The positions of a batch's misses waiting for its one change check (`store/lookup/batch.rs`); kept between
    /// batches, so a batch allocates nothing once this has room.
    pub(in crate::store) batch_misses: Vec<usize>,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl Handle {
    /// The store this handle reads.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Where `id` is, or `None` if it is in no pack and no loose directory.
    ///
    /// Every location is checked against its pack: the offset lies past the 12-byte pack header and before the
    /// pack's trailing checksum (for a pack's own `.idx`, whose pack was found to end with the checksum the
    /// index records when it was loaded; for a multi-pack-index, against the pack's length when it was listed).
    ///
    /// Errors: [`Error::CorruptIndex`] or [`Error::CorruptMultiPackIndex`] naming the file when an index lists
    /// `id` with an offset that cannot be right (past its pack's end, inside its header, a 64-bit reference
    /// outside the file, a pack int id that names no pack) and nothing else has it: never a wrong location
    /// (whatever the [`IncompleteMode`](crate::store::IncompleteMode)); [`Error::Incomplete`] when the object was not found and some index
    /// file could not be loaded (a pack that does not match its index, for one), a pack directory or alternate
    /// could not be read, or a loose directory could not be probed, so "missing" cannot be claimed, unless the
    /// store was opened with [`IncompleteMode::Miss`](crate::store::IncompleteMode::Miss) (then `Ok(None)`; [`Store::problems`] names the file
    /// either way); [`Error::WrongIdHashKind`] for an id of the other hash kind.
    #[inline]
    pub fn locate(&mut self, id: &ObjectId) -> Result<Option<Location>, Error> {
        // The steady state (a hit in what this handle has seen, or a miss in a settled map) inline; everything
        // else (loads, waits, refreshes, errors) out of line.
        match self.locate_steady(id) {
            Ok(r) => Ok(r),
            Err(stage) => self.locate_slow(id, stage),
        }
    }

    /// The general lookup, from `stage` on (where [`locate_steady`](Self::locate_steady) stopped).
    #[inline(never)]
    pub(in crate::store) fn locate_slow(
        &mut self,
        id: &ObjectId,
        stage: Stage,
    ) -> Result<Option<Location>, Error> {
        if id.kind() != self.kind {
            return Err(self.wrong_kind(id));
        }
        let bytes = id.as_bytes();
        let mut relists = 0;
        let mut stage = stage;
        let mut fault_retried = false;
        // The loose sources the loose step searched (`None`: not yet in this lookup; from `Stage::Refresh` on, the
        // steady path searched this listing's).
        let mut probed: Option<Arc<[LooseSource]>> =
            (stage == Stage::Refresh).then(|| Arc::clone(&self.view.map().meta().loose));
        // Failed probes of an earlier lookup say nothing of this one.
        self.snap.loose_failed.clear();
        loop {
            loop {
                if stage == Stage::Packs {
                    match self.search_packs(bytes) {
                        Some(Ok(loc)) => return Ok(Some(loc)),
                        Some(Err(())) => continue,
                        None => {}
                    }
                    if relists > 0 {
                        // An index of the new listing vanished before it was loaded (git replaced it again: `repack`
                        // renames its files into place, then removes the old ones): list again, a few times at most.
                        if self.shape.refresh_on_miss()
                            && self.snap.vanished
                            && relists < MAX_RELISTS
                        {
                            self.refresh_after_miss()?;
                            relists += 1;
                            continue;
                        }
                        // git does not probe loose objects again after re-reading its packs: the files it probes are
                        // the same. Here they are not when the new listing opened its objects directories again (one
                        // that failed to open, which another thread's re-listing opened; an alternate added): the
                        // loose step searches those, or an object there is a silent miss.
                        if relists < MAX_RELISTS
                            && probed
                                .as_ref()
                                .is_some_and(|p| !Arc::ptr_eq(p, &self.view.map().meta().loose))
                        {
                            stage = Stage::Loose;
                            continue;
                        }
                        break;
                    }
                }
                // 2. Loose objects (git's order: packs, loose, then re-read the pack directories).
                if stage <= Stage::Loose {
                    let drained = self.drain_for_loose();
                    hooks::at(Point::BeforeLoose);
                    let quiet = drained.is_some_and(|t| t & FALLBACK == 0);
                    self.snap.loose_failed.clear();
                    probed = Some(Arc::clone(&self.view.map().meta().loose));
                    if let Ok(Some(loc)) = self.probe_loose(id, LooseStep::slow(quiet)) {
                        return Ok(Some(loc));
                    }
                }
                // 3. Refresh: only if a pack directory changed (or was listed too recently to trust), or an index
                //    or pack vanished since the listing. (The steady path found that already when it asks for it.)
                //    The check is made after the loose step, never taken from the drain before it: a loose object
                //    that `repack -d` packed (new pack written) and pruned between that drain and the loose step was
                //    in the repository all along, and only a check after the loose step sees its new pack (F5,
                //    docs/FRESHNESS.md, section 2; `relist_tests::an_object_packed_and_pruned_between_the_check_and_
                //    the_loose_step_is_found`).
                let refresh = self.shape.refresh_on_miss()
                    && (stage == Stage::Refresh || self.snap.vanished || self.packs_changed());
                if !refresh {
                    break;
                }
                self.refresh_after_miss()?;
                relists += 1;
                // 4. Search the packs again: a repack + prune-packed between steps 1 and 2 moved the object.
                stage = Stage::Packs;
            }
            // 5. Found nowhere, but a failed system call on the way is no evidence of a miss: list again once and
            //    search again (`relist.rs`).
            if !fault_retried && self.relist_after_fault()? {
                (fault_retried, relists, stage) = (true, 0, Stage::Packs);
                continue;
            }
            return self.not_found(bytes);
        }
    }

    /// Step 1 of a lookup: what this handle has seen, then whatever became visible or is left to load. `None`:
    /// not in the packs; `Some(Err(()))`: the map was replaced, search again.
    fn search_packs(&mut self, bytes: &[u8]) -> Option<Result<Location, ()>> {
        if let Some(loc) = self.snap.search(bytes) {
            // Hits notice a retired map too (one Acquire load), or a hit-only handle would keep the indices
            // of deleted packs mapped forever.
            if self.view.map().word().is_retired() {
                self.move_to_current();
                return Some(Err(()));
            }
            return Some(Ok(loc));
        }
        // A steady-state miss stops here: one Acquire load (P4).
        let settled = if self.view.is_settled() {
            self.filter_tick();
            Settled::Exhausted
        } else {
            self.settle(bytes)
        };
        match settled {
            // Like a snapshot hit: an answer from a map a refresh has replaced may name a deleted pack.
            Settled::Found(_) if self.view.map().word().is_retired() => {
                self.move_to_current();
                Some(Err(()))
            }
            Settled::Found(loc) => Some(Ok(loc)),
            Settled::Retired => {
                self.move_to_current();
                Some(Err(()))
            }
            Settled::Exhausted => None,
        }
    }

    /// Locate `id` again after the file at `gone` (an answer of [`locate`](Self::locate) for `id`) turned out to be
    /// missing when the caller opened it: git moved the object and removed the file in between (`repack -d`
    /// packs loose objects and prunes them; `repack -a -d` replaces packs). Lists the repository again (whatever
    /// the refresh mode and the change detector say, and with fresh loose listings under
    /// [`LooseMode::Cached`](crate::store::LooseMode::Cached)) and answers from what is there now, as git does when a
    /// read fails: a location whose file exists, or `None` if the object is gone. Lists again while the answer is
    /// still `gone` and its file is still missing, 8 times at most.
    ///
    /// The one call a front end needs for "the file is gone": open what [`locate`](Self::locate) answered; if
    /// the open says "not found", call this once and open what it answers (`odb_index_gix::Objects` does exactly
    /// that).
    ///
    /// ```
    /// # use std::process::Command;
    /// # let tmp = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| {
    /// #     let st = Command::new("git").args(args).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
    /// #     assert!(st.status.success());
    /// #     String::from_utf8(st.stdout).unwrap()
    /// # };
    /// # git(&["init", "-q", "."]);
    /// # let id = git(&["hash-object", "-w", "--stdin"]); // the empty blob, written loose
    /// # let id = id.trim();
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let id = id.parse()?;
    /// let loose = handle.locate(&id)?.unwrap();
    /// assert!(matches!(loose, Location::Loose { .. }));
    /// // git packs the object and removes the loose file before the caller reads it:
    /// # git(&["tag", "keep", &id.to_string()]);
    /// # git(&["repack", "-adq"]);
    /// assert!(!handle.loose_path(0, &id).unwrap().exists());
    /// let now = handle.locate_again(&id, loose)?;
    /// assert!(matches!(now, Some(Location::Packed { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn locate_again(
        &mut self,
        id: &ObjectId,
        gone: Location,
    ) -> Result<Option<Location>, Error> {
        for _ in 0..MAX_RELISTS {
            hooks::at(Point::BeforeAgainListing);
            self.relist(true, false)?;
            hooks::at(Point::AfterAgainListing);
            match self.locate(id)? {
                Some(loc) if loc == gone && !self.exists(id, loc) => continue,
                answer => return Ok(answer),
            }
        }
        self.locate(id)
    }

    /// Whether the file of `loc` (a location of `id`) exists now.
    fn exists(&self, id: &ObjectId, loc: Location) -> bool {
        let path = match loc {
            Location::Loose { dir } => self.loose_path(dir, id),
            Location::Packed { pack, .. } => self.pack_path(pack).ok(),
        };
        path.is_some_and(|p| {
            crate::fault::check(crate::fault::Call::Stat)
                .and_then(|()| std::fs::symlink_metadata(p))
                .is_ok()
        })
    }

    /// Locate each of `ids` in turn, appending one answer per id to `out` (as [`locate`](Self::locate) would
    /// answer it).
    ///
    /// For front ends that check many ids at once (fetch negotiation, receiving a pack, `cat-file
    /// --batch-check`). The searches of a group of ids run interleaved: the lines each will read (the miss
    /// filter's block, the index probes, the entry's offset) are prefetched for the whole group before any of
    /// them waits on one, so several cache misses are in flight instead of one. The misses of the batch share
    /// one change check, made after every search of the batch (an object renamed into place before the call
    /// began is found). Allocates nothing once `out` has room (and the handle has held a batch's misses).
    ///
    /// Errors: the first error of [`locate`](Self::locate) stops the loop; `out` then holds the answers of the
    /// ids before the one that failed (`out.len()` minus its length at the call is that id's position).
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
    /// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").status()?;
    /// use odb_index::{ObjectId, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let ids: Vec<ObjectId> = ["0123456789012345678901234567890123456789", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"]
    ///     .iter().map(|h| h.parse()).collect::<Result<_, _>>()?;
    /// let mut out = Vec::with_capacity(ids.len());
    /// handle.locate_many(&ids, &mut out)?;
    /// assert_eq!(out, [None, None]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn locate_many(
        &mut self,
        ids: &[ObjectId],
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        self.locate_batch(ids, out)
    }

    /// Before the slow path's loose step: drain the change events (so the fan-out versions read next count every
    /// object written before this lookup began). The drained state ([`Watch::drain`](crate::store::watch::Watch)'s
    /// value; watched listings can be used if it has no `FALLBACK`), or `None` if nothing was drained.
    fn drain_for_loose(&mut self) -> Option<u64> {
        if !self.shape.watching() || !self.shape.loose_on() {
            return None;
        }
        self.view.map().meta().fresh.drain()
    }

    /// Whether the pack directories changed since this handle's listing was made: the one refresh check of
    /// every lookup path (drain the events and compare counters, or, without events, `stat` each directory),
    /// made after the lookup's loose step (F5).
    pub(in crate::store) fn packs_changed(&self) -> bool {
        let listing = self.view.map().meta();
        listing
            .fresh
            .changed(&self.tally, listing.dirs.len(), &RealFs)
    }

    #[cold]
    fn wrong_kind(&self, id: &ObjectId) -> Error {
        Error::WrongIdHashKind {
            objects_dir: self.store.objects_dir.clone(),
            expected: self.store.kind,
            found: id.kind(),
        }
    }

    /// Load every index file of the repository now (lookups load them lazily, as needed), so that this handle's
    /// view is complete and [`Store::problems`] lists every index that cannot be loaded. Prefix lookups and
    /// iteration call it. Returns the view it loaded: what this handle has seen (packs, multi-pack-indices) and
    /// the listing it belongs to.
    pub(in crate::store) fn load_all(&mut self) -> (&Snapshot, &Listing) {
        // An empty id is never found: settling with it loads every slot and searches none.
        while let Settled::Retired = self.settle(&[]) {
            self.move_to_current();
        }
        (&self.snap, self.view.map().meta())
    }

    /// Load every index file now; see [`Store::problems`] for those that could not be loaded.
    ///
    /// Lookups load index files lazily, one at a time, until the object is found; a broken `.idx` is known only
    /// once a lookup or this call has tried it.
    pub fn load_indices(&mut self) {
        self.load_all();
    }

    /// True if `id` is in the repository (see [`locate`](Self::locate)).
    #[inline]
    pub fn contains(&mut self, id: &ObjectId) -> Result<bool, Error> {
        self.locate(id).map(|l| l.is_some())
    }

    /// The `.pack` path of `pack` as this handle's snapshot knows it (no lock), or [`Error::StalePack`].
    pub fn pack_path(&self, pack: PackId) -> Result<PathBuf, Error> {
        pack_path_in(self.view.map().meta(), pack).map_or_else(|| self.store.pack_path(pack), Ok)
    }

    fn settle(&mut self, id: &[u8]) -> Settled<Location> {
        // No reference count is touched here: the map is reached through the view.
        let snap = &mut self.snap;
        let store = &*self.store;
        self.view.settle(
            &mut |map: &Map, slot, r| snap.add(map.meta(), slot, r, id),
            &mut |map: &Map, slot| {
                load_slot(
                    map,
                    slot,
                    store.kind,
                    &store.options,
                    &store.counters.index_loads,
                )
            },
        )
    }

    /// What this handle has loaded so far.
    pub(in crate::store) fn snapshot(&self) -> &Snapshot {
        &self.snap
    }

    /// The listing this handle's view belongs to.
    pub(in crate::store) fn listing(&self) -> &Listing {
        self.view.map().meta()
    }

    /// Move this handle to the store's current map, with a fresh snapshot.
    pub(in crate::store) fn move_to_current(&mut self) {
        self.move_to(self.store.current.get());
    }

    /// Move this handle to `map` (what a refresh left current), with a fresh snapshot.
    pub(in crate::store) fn move_to(&mut self, map: sync::Arc<Map>) {
        self.view = View::new(map);
        self.flush_counts();
        // The loose probes that failed in this lookup's last loose step stay: a re-listing after it (the refresh
        // check, a vanished index) must not turn them into a miss (the fault policy, `relist.rs`).
        let loose_failed = std::mem::take(&mut self.snap.loose_failed);
        self.snap = Snapshot::default();
        self.snap.loose_failed = loose_failed;
    }

    /// Whether a miss should re-list the pack directories: `RefreshMode::OnMiss`, and a pack directory changed
    /// (or was listed too recently to trust) or an index or pack vanished since the listing. The one check that
    /// [`locate`](Self::locate), the prefix lookups and the iterations make after their loose step.
    pub(in crate::store) fn should_refresh(&self) -> bool {
        self.shape.refresh_on_miss() && (self.snap.vanished || self.packs_changed())
    }

    /// Add what this handle counted into the store's [`Metrics`](crate::store::Metrics) (before its snapshot goes).
    fn flush_counts(&mut self) {
        let n = std::mem::take(&mut self.snap.filter_answers);
        if n > 0 {
            Counters::add(&self.store.counters.filter_answers, n);
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.flush_counts();
        // A store whose handles each miss a few times still sets events up once they add up.
        self.view.map().meta().fresh.report(&self.tally);
    }
}

/// Where the slow path of a lookup starts: what the steady path has done is not done again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(in crate::store) enum Stage {
    /// Search the packs (loading indices as needed).
    Packs,
    /// The packs were searched in a settled map: the loose objects.
    Loose,
    /// Packs and loose objects answered "no" and a pack directory changed: refresh.
    Refresh,
}
