//! The steady path of a lookup: a hit in the handle's snapshot, or a miss in a settled map with its loose step and
//! change check, inlined into [`Handle::locate`] and the loop of [`Handle::locate_many`]. What it cannot answer it
//! hands to the slow path (`Handle::locate_slow`, `handle.rs`) with the [`Stage`] it reached.
//!
//! It reads no shared memory but the protocol's word (one Acquire load: P4, docs/PROTOCOL.md) and what the
//! handle's [`MissShape`] asks for after a miss: nothing ([`MissShape::Final`]); the loose probe
//! ([`MissShape::Probe`]); the change check ([`MissShape::Check`]: one `ioctl` and one Acquire load of the
//! detector's state with events, else a `stat` of each pack directory); the probe, then the check
//! ([`MissShape::ProbeThenCheck`], F5); the check, then the watched listings ([`MissShape::Watched`],
//! [`MissShape::WatchedNoRefresh`]). No lock, no read-modify-write, no allocation.

use super::handle::{Handle, Stage};
use super::snapshot::{FILTER_DONE, Warm};
use crate::oid::ObjectId;
use crate::store::Location;
use crate::store::freshness::RealFs;
use crate::store::hooks::{self, Point};
use crate::store::listing::filter::MissFilter;
use crate::store::listing::loose_sources::{LooseSource, LooseStep};
use crate::store::metrics::Counters;
use crate::store::options::{MissFilterMode, MissShape};
use crate::store::watch::Check;
use crate::sync::plain::Arc;

impl Handle {
    /// The steady-state lookup, inlined into [`locate_many`](Self::locate_many)'s loop: a hit in the snapshot,
    /// or a miss in a settled map, loose objects and the refresh check included. `Err(stage)` when anything else
    /// may be needed: [`locate_slow`](Self::locate_slow) goes on from `stage` (what was done is not done again).
    #[inline(always)]
    pub(in crate::store) fn locate_steady(
        &mut self,
        id: &ObjectId,
    ) -> Result<Option<Location>, Stage> {
        match self.search_steady(id)? {
            Some(loc) => Ok(Some(loc)),
            None => self.steady_miss(id),
        }
    }

    /// The pack search of [`locate_steady`](Self::locate_steady): a hit, or `None` for a miss in a settled map
    /// whose loose step and change check are still to make ([`steady_miss`](Self::steady_miss); a batch makes
    /// one check for all its misses, `store/lookup/batch.rs`).
    #[inline(always)]
    fn search_steady(&mut self, id: &ObjectId) -> Result<Option<Location>, Stage> {
        self.search_steady_warmed(id, Warm::Cold)
    }

    /// [`search_steady`](Self::search_steady) with what a batch's warming steps learnt of `id` (on this
    /// snapshot: [`Snapshot::search_warmed`]).
    #[inline(always)]
    pub(in crate::store) fn search_steady_warmed(
        &mut self,
        id: &ObjectId,
        w: Warm,
    ) -> Result<Option<Location>, Stage> {
        if id.kind() != self.kind {
            return Err(Stage::Packs);
        }
        if let Some(loc) = self.snap.search_warmed(id.as_bytes(), w) {
            if self.view.map().word().is_retired() {
                return Err(Stage::Packs);
            }
            return Ok(Some(loc));
        }
        // Anything that can make a miss more than `Ok(None)` (a failed index, an entry with a bad offset, an
        // unreadable directory, a loose probe that failed) is the general path's.
        if !self.snap.failed.is_empty() || self.snap.bad_entry.is_some() || !self.view.is_settled()
        {
            return Err(Stage::Packs);
        }
        self.filter_tick();
        if !self.view.map().meta().unreadable.is_empty() {
            return Err(Stage::Loose);
        }
        Ok(None)
    }

    /// The rest of a steady miss after [`search_steady`](Self::search_steady): what the handle's [`MissShape`]
    /// says, one arm per shape. With events, one check (a system call) stands for every pack directory's `stat`
    /// and, in the watched shapes, every loose probe.
    #[inline(always)]
    fn steady_miss(&mut self, id: &ObjectId) -> Result<Option<Location>, Stage> {
        match self.shape {
            MissShape::Final => Ok(None),
            MissShape::Probe => self.steady_probe(id),
            // No loose objects: the check is the whole miss.
            MissShape::Check => match self.view.map().meta().fresh.steady() {
                Check::Quiet => Ok(None),
                Check::Changed => Err(Stage::Loose),
                Check::NoEvents => self.stat_pack_dirs(),
            },
            // The loose probe reads the file system, so it comes first and the change check after it (F5: an
            // object packed and pruned between a check and the probe would be missed).
            MissShape::ProbeThenCheck => match self.steady_probe(id)? {
                Some(loc) => Ok(Some(loc)),
                None => match self.view.map().meta().fresh.steady() {
                    Check::Quiet => Ok(None),
                    Check::Changed => Err(Stage::Refresh),
                    Check::NoEvents => self.stat_pack_dirs(),
                },
            },
            // The check first (quiet: nothing changed since the last drain, so the watched listings answer for
            // loose objects), then the loose step.
            MissShape::Watched | MissShape::WatchedNoRefresh => {
                match self.view.map().meta().fresh.steady() {
                    Check::Quiet => self
                        .probe_loose_sources(id, LooseStep::SteadyQuiet)
                        .map_err(|()| Stage::Loose),
                    Check::Changed => Err(Stage::Loose),
                    // Without events: probe the loose objects, then, under `OnMiss`, `stat` the pack directories.
                    Check::NoEvents => match self.steady_probe(id)? {
                        Some(loc) => Ok(Some(loc)),
                        None if self.shape == MissShape::Watched => self.stat_pack_dirs(),
                        None => Ok(None),
                    },
                }
            }
        }
    }

    /// A steady miss's loose probe, for the shapes that probe (loose objects known to be on): `Err` for the slow
    /// path's loose step.
    #[inline(always)]
    fn steady_probe(&mut self, id: &ObjectId) -> Result<Option<Location>, Stage> {
        self.probe_loose_sources(id, LooseStep::SteadyProbe)
            .map_err(|()| Stage::Loose)
    }

    /// A steady miss after its loose step, without events, in a shape that refreshes on a miss: `stat` the pack
    /// directories.
    #[inline(always)]
    fn stat_pack_dirs(&self) -> Result<Option<Location>, Stage> {
        // No `snap.vanished` test here: an index that vanished is also in `snap.failed`, which sent the lookup
        // to the general path (`should_refresh` there reads it).
        if self.pack_dirs_changed() {
            return Err(Stage::Refresh);
        }
        Ok(None)
    }

    /// The loose step of a lookup, for both paths: each objects directory's loose source in turn, asked as
    /// `step` says ([`LooseStep`]). On the slow path failed probes go to `snap.loose_failed` (another directory
    /// may still have the object); on the steady path a failed probe or a stale watched listing is `Err(())`,
    /// for the slow path to do.
    #[inline(always)]
    pub(in crate::store) fn probe_loose(
        &mut self,
        id: &ObjectId,
        step: LooseStep,
    ) -> Result<Option<Location>, ()> {
        if !self.shape.loose_on() {
            return Ok(None);
        }
        self.probe_loose_sources(id, step)
    }

    /// [`probe_loose`](Self::probe_loose) where loose objects are known to be on (the shape says so).
    #[inline(always)]
    fn probe_loose_sources(
        &mut self,
        id: &ObjectId,
        step: LooseStep,
    ) -> Result<Option<Location>, ()> {
        let listing = self.view.map().meta();
        for (i, l) in listing.loose.iter().enumerate() {
            let r = match l {
                LooseSource::Watched(db) if step.quiet() => {
                    match self
                        .fanouts
                        .contains(listing.fresh.watch(), i, db, id, step.is_slow())
                    {
                        Some(r) => r,
                        None => return Err(()),
                    }
                }
                l => {
                    if !step.is_slow() {
                        hooks::at(Point::BeforeSteadyProbe);
                    }
                    l.contains(id)
                }
            };
            match r {
                Ok(false) => {}
                Ok(true) => {
                    return Ok(Some(Location::Loose {
                        dir: listing.dir_ids[i],
                    }));
                }
                Err(e) if step.is_slow() => self
                    .snap
                    .loose_failed
                    .push((listing.dirs[i].clone(), Arc::new(e))),
                Err(_) => return Err(()),
            }
        }
        Ok(None)
    }

    /// One settled miss towards building (or picking up) the miss filter.
    #[inline(always)]
    pub(in crate::store) fn filter_tick(&mut self) {
        match self.snap.filter_countdown {
            FILTER_DONE => {}
            0 => self.filter_step(),
            _ => self.snap.filter_countdown -= 1,
        }
    }

    /// Install the map's published filter, or (after the countdown) build and publish it. Runs on a miss that
    /// found the map settled, so this handle's snapshot holds every loaded pack of the map; outside every lock.
    #[cold]
    #[inline(never)]
    fn filter_step(&mut self) {
        let mode = self.store.options.miss_filter;
        let cell = &self.view.map().meta().filter;
        let snap = &mut self.snap;
        if mode == MissFilterMode::Off {
            snap.filter_countdown = FILTER_DONE;
            snap.index_buckets();
            return;
        }
        if let Some(f) = cell.get() {
            snap.install_filter(Arc::clone(f));
            return;
        }
        if let Some(f) = cell.reusable(snap.pack_sizes()) {
            snap.install_filter(Arc::clone(cell.publish(f)));
            return;
        }
        if mode == MissFilterMode::Auto && !snap.filter_armed {
            // Wait until this handle has missed as many times as 1/16 of the ids the filter would hold: a build
            // costs about 10 ns per id, a miss it saves at least an index search (about 160 ns on a large
            // index, tens of ns per pack).
            snap.filter_armed = true;
            let ids: u64 = snap.pack_sizes().map(|(_, n)| u64::from(n)).sum();
            snap.filter_countdown =
                u32::try_from(ids / 16).map_or(FILTER_DONE - 1, |n| n.min(FILTER_DONE - 1));
            if snap.filter_countdown > 0 {
                return;
            }
        }
        match MissFilter::build(&snap.pack_indices()) {
            Some(f) => {
                Counters::add(&self.store.counters.filter_builds, 1);
                snap.install_filter(Arc::clone(cell.publish(Arc::new(f))));
            }
            None => {
                snap.filter_countdown = FILTER_DONE;
                snap.index_buckets();
            }
        }
    }

    /// Whether a pack directory's `stat` differs from the listing's (or the listing was too recent to trust):
    /// the refresh check without events. While events are deferred, each call counts a miss towards setting them
    /// up ([`Options::change_events_after`](crate::store::Options::change_events_after)), and says "changed" once the
    /// count is reached: the refresh that follows sets them up.
    fn pack_dirs_changed(&self) -> bool {
        let listing = self.view.map().meta();
        listing
            .fresh
            .stat_changed(&self.tally, listing.dirs.len(), &RealFs)
    }
}
