//! [`Handle::locate_many`]: a batch of lookups whose searches run interleaved and whose misses share one change
//! check. Each id goes through the steps of a single lookup ([`Handle::locate`]: `handle.rs` states them) in the
//! same order, so a batch answers as `locate` does (proptested; `idx/batch.rs` tests the resumed searches on files
//! whose ids are out of order).
//!
//! 1. **Warming, a software pipeline over groups of [`GROUP`] ids.** A search in a large index waits on a few cache
//!    misses one after the other: the miss filter's block, the index's first (interpolated) probe, the entries
//!    around the corrected probe (`idx::NEAR` either side) and their offsets. A batch makes each of those steps
//!    for a whole group, prefetching the lines the next step reads, each step a group ahead of the next: while
//!    group `g` is searched, group `g + 1`'s second steps ([`warm_next`](Handle::warm_next)), group `g + 2`'s first
//!    probes ([`warm_start`](Handle::warm_start)) and group `g + 3`'s filter blocks
//!    ([`warm_filter`](Handle::warm_filter)) are on their way. The index stepped is the one a search reads first
//!    (the pack tried first, or where the store has no packs of its own the first multi-pack-index), if it has
//!    [`WARM_MIN`] ids or more.
//! 2. **The steady path per id** (`steady.rs`), from where its warming left it ([`Warm`]: the filter not asked
//!    again, the search resumed from its probe, `PackIndex::find_entry` given the probe): a hit is answered; a miss in a
//!    settled map is held (its position kept in the handle's `batch_misses`); anything else goes through the slow
//!    path at once (`Handle::locate_slow`), after which every warm state is stale ([`STALE`]). A state is used only
//!    while the pack tried first is the one it was made for.
//! 3. **One change check for the held misses** (docs/FRESHNESS.md, section 2, B1), once every search of the batch
//!    is done, so after each miss's search began, as a single lookup's check is. Each miss keeps a single lookup's
//!    order ([`MissShape`](crate::store::options::MissShape)): where the check comes first (watched listings), the check,
//!    then each miss's loose step; otherwise each miss's loose probe, then the one check (an `ioctl` with events;
//!    without them one `stat` of each pack directory, counted as one miss per held miss towards the deferred
//!    switch to events, F4). Only the check is shared. A check that says anything but "quiet", or a handle that
//!    moved to another listing during the batch (a slow path refreshed), sends each held miss through
//!    [`Handle::locate`] again, from its pack search.
//! 4. **The misses as of the batch's last listing.** A batch whose handle moved to another listing while it ran
//!    locates its misses again there ([`misses_again`](Handle::misses_again)): a pack away for a moment, then
//!    listed again by the batch, answers them. Each answer is one `locate` gives at some moment of the call.
//!
//! Why these steps and these constants, and what the alternatives measured: docs/BENCHMARKS.md, "Batches".

use crate::error::Error;
use crate::oid::ObjectId;
use crate::prefetch::prefetch;
use crate::store::hooks::{self, Point};
use crate::sync;

use super::handle::Handle;
use super::snapshot::{Warm, WarmTarget};
use crate::idx::Probe;
use crate::store::Location;
use crate::store::freshness::RealFs;
use crate::store::listing::filter::MissFilter;
use crate::store::listing::loose_sources::LooseStep;
use crate::store::options::MissShape;
use crate::store::watch::Check;

/// Ids searched together: the lines of each step are prefetched for the whole group before any of its searches
/// reads one. A core keeps about ten to twenty misses in flight; each id warms two lines a step (an id may
/// straddle two), so sixteen ids fill the queue without waiting on their own prefetches.
const GROUP: usize = 16;

/// Indices with fewer ids than this are not warmed: their ids (1.3 MB of SHA-1 ids at most, under a core's
/// second-level cache on the machines measured) stay cached in a batch that searches them, where the warming
/// steps would cost instructions and save no wait (docs/BENCHMARKS.md, "Batches").
const WARM_MIN: u32 = 1 << 16;

/// The key of warm states that must not be used. A group's states are keyed by the pack tried first when they
/// were made (`Snapshot::warm_key`): they are stepped and used only while that pack is still the one tried
/// first, and no slow path ran since they were made (it may load, refresh or move to another listing: a
/// snapshot of other packs and another filter; every key is then `STALE`). Nothing else changes a snapshot
/// during the steady searches of a batch but a miss filter installed where there was none, which leaves every
/// state right (`Warm`).
const STALE: usize = usize::MAX;

/// Rounds of step 4 at most: a directory that never settles cannot keep a batch going.
const AGAIN_ROUNDS: usize = 3;

impl Handle {
    /// [`Handle::locate_many`]'s body.
    pub(in crate::store) fn locate_batch(
        &mut self,
        ids: &[ObjectId],
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        let base = out.len();
        out.reserve(ids.len());
        let mut misses = std::mem::take(&mut self.batch_misses);
        misses.clear();
        // The listing whose searches the held misses were: compared by the `Arc` (a clone, so a freed map's
        // address cannot come back as another map's while the batch runs).
        let listing = sync::Arc::clone(self.view.map());
        // Without loose objects, a refresh check or events, a steady miss is final at its search: nothing to hold.
        let hold = self.shape != MissShape::Final;
        let mut failed = None;
        // The warming steps run ahead of the searches, a software pipeline over the groups: while group `g` is
        // searched, group `g + 1`'s second probes, group `g + 2`'s first probes and group `g + 3`'s filter blocks
        // are on their way (each step reads lines the step before prefetched a group earlier, so none waits).
        let group = |g: usize| {
            ids.get(g * GROUP..ids.len().min((g + 1) * GROUP))
                .unwrap_or(&[])
        };
        // Each group's warm states, and their key: the pack tried first when they were made, or [`STALE`].
        let mut warm = [[Warm::Cold; GROUP]; 3];
        let mut keys = [STALE; 3];
        for g in 0..3 {
            self.warm_filter(group(g));
        }
        for g in 0..2 {
            warm[g] = self.warm_start(group(g));
            keys[g] = self.snap.warm_key();
        }
        self.warm_next(group(0), &mut warm[0]); // (no search ran since group 0's step 2: same snapshot)
        'groups: for g in 0..ids.len().div_ceil(GROUP) {
            self.warm_filter(group(g + 3));
            warm[(g + 2) % 3] = self.warm_start(group(g + 2));
            keys[(g + 2) % 3] = self.snap.warm_key();
            if keys[(g + 1) % 3] == self.snap.warm_key() {
                self.warm_next(group(g + 1), &mut warm[(g + 1) % 3]);
            } else {
                keys[(g + 1) % 3] = STALE;
            }
            // Checked before each search too: a hit in another pack changes the pack tried first mid-group.
            for (k, (id, &w)) in group(g).iter().zip(&warm[g % 3]).enumerate() {
                let w = if keys[g % 3] == self.snap.warm_key() {
                    w
                } else {
                    Warm::Cold
                };
                let loc = match self.search_steady_warmed(id, w) {
                    Ok(Some(loc)) => Some(loc),
                    Ok(None) => {
                        if hold {
                            misses.push(g * GROUP + k);
                        }
                        None
                    }
                    Err(stage) => {
                        keys = [STALE; 3];
                        match self.locate_slow(id, stage) {
                            Ok(r) => r,
                            Err(e) => {
                                failed = Some(e);
                                break 'groups;
                            }
                        }
                    }
                };
                out.push(loc);
                hooks::at(Point::AfterBatchSearch);
            }
        }
        // The held misses before an error are answered too: `out` holds every answer before the id that failed.
        let r = self.answer_misses(ids, base, &listing, &mut misses, out);
        self.batch_misses = misses;
        match (r, failed) {
            (Err(e), _) | (Ok(()), Some(e)) => Err(e),
            (Ok(()), None) => self.misses_again(ids, base, listing, out),
        }
    }

    /// Step 4: while this handle's listing is not `seen` (the batch's first, then the last round's), each id
    /// answered `None` is located again, [`AGAIN_ROUNDS`] rounds at most.
    #[cold]
    fn misses_again(
        &mut self,
        ids: &[ObjectId],
        base: usize,
        mut seen: sync::Arc<crate::store::Map>,
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        for _ in 0..AGAIN_ROUNDS {
            if sync::Arc::ptr_eq(&seen, self.view.map()) {
                return Ok(());
            }
            seen = sync::Arc::clone(self.view.map());
            for j in 0..ids.len() {
                if out[base + j].is_none() {
                    self.again(ids, base, j, out)?;
                }
            }
        }
        Ok(())
    }

    /// The misses `misses` (positions in `ids`, answered `None` at `out[base + position]` so far) of a batch whose
    /// searches are all done (in the map `searched`), with one change check for them all. On an error, `out` is cut at the miss that
    /// failed.
    fn answer_misses(
        &mut self,
        ids: &[ObjectId],
        base: usize,
        searched: &sync::Arc<crate::store::Map>,
        misses: &mut Vec<usize>,
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        if misses.is_empty() {
            return Ok(());
        }
        if !sync::Arc::ptr_eq(searched, self.view.map()) {
            // Searched in a listing this handle has left: each miss again, in the current one.
            return self.all_again(ids, base, misses, out);
        }
        if self.shape.check_first() {
            // Watched listings answer as of the last drain and read no file: the one check first vouches for
            // them (a single lookup's order with events).
            match self.view.map().meta().fresh.steady() {
                Check::Quiet => {
                    for &j in misses.iter() {
                        if !sync::Arc::ptr_eq(searched, self.view.map()) {
                            self.again(ids, base, j, out)?;
                            continue;
                        }
                        match self.probe_loose(&ids[j], LooseStep::SteadyQuiet) {
                            Ok(r) => out[base + j] = r,
                            Err(()) => self.again(ids, base, j, out)?,
                        }
                    }
                    return Ok(());
                }
                Check::Changed => return self.all_again(ids, base, misses, out),
                Check::NoEvents => {}
            }
        }
        // The loose probes first, then one change check for the misses left (a single lookup's order: packs,
        // loose, then the check; F5).
        let mut left = 0;
        for i in 0..misses.len() {
            let j = misses[i];
            if !sync::Arc::ptr_eq(searched, self.view.map()) {
                self.again(ids, base, j, out)?;
                continue;
            }
            match self.probe_loose(&ids[j], LooseStep::SteadyProbe) {
                Ok(None) => {
                    misses[left] = j;
                    left += 1;
                }
                Ok(Some(loc)) => out[base + j] = Some(loc),
                Err(()) => self.again(ids, base, j, out)?,
            }
        }
        misses.truncate(left);
        if left == 0 || !self.shape.refresh_on_miss() {
            return Ok(());
        }
        let listing = self.view.map().meta();
        let check = if !sync::Arc::ptr_eq(searched, self.view.map()) {
            Check::Changed
        } else if self.shape.watching() {
            listing.fresh.steady()
        } else {
            Check::NoEvents
        };
        let changed = match check {
            Check::Quiet => false,
            Check::Changed => true,
            // Counted as `left` misses towards the deferred switch to events (F4 counts misses, not checks).
            Check::NoEvents => {
                listing
                    .fresh
                    .stat_changed(&self.tally, listing.dirs.len() * left, &RealFs)
            }
        };
        if changed {
            return self.all_again(ids, base, misses, out);
        }
        Ok(())
    }

    /// Every held miss of `misses` through [`Handle::locate`] (see [`again`](Self::again)).
    #[cold]
    fn all_again(
        &mut self,
        ids: &[ObjectId],
        base: usize,
        misses: &[usize],
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        for &j in misses {
            self.again(ids, base, j, out)?;
        }
        Ok(())
    }

    /// Held miss `j` through [`Handle::locate`], from its pack search (the listing changed, or its loose step
    /// needs the general path). On an error, `out` is cut at `j`.
    #[cold]
    fn again(
        &mut self,
        ids: &[ObjectId],
        base: usize,
        j: usize,
        out: &mut Vec<Option<Location>>,
    ) -> Result<(), Error> {
        match self.locate(&ids[j]) {
            Ok(r) => {
                out[base + j] = r;
                Ok(())
            }
            Err(e) => {
                out.truncate(base + j);
                Err(e)
            }
        }
    }

    /// Warming step 1 for `group` (see the module's notes): prefetch the miss filter's blocks, whatever the
    /// filter's size (a 1.5 MB filter, 1 000 000 ids, fits a core's 2 MB second level but does not stay there
    /// while a batch streams an index through it). Reads only what the searches read; answers nothing.
    fn warm_filter(&self, group: &[ObjectId]) {
        if let (Some(f), _) = self.snap.warm_targets() {
            for id in group {
                if let Some(block) = f.block_of_id(id.as_bytes()) {
                    prefetch(block);
                }
            }
        }
    }

    /// Warming step 2, for each id of `group`: the miss filter's answer (its block warm after step 1, for large
    /// filters), and for an id it does not rule out, the first step of the search of the index read first (the
    /// pack tried first, or the first multi-pack-index where there are no packs of their own; indices of
    /// [`WARM_MIN`] ids and more), its line prefetched. Kept for the search, which does not ask the filter or
    /// make that step again.
    fn warm_start(&self, group: &[ObjectId]) -> [Warm; GROUP] {
        let (filter, target) = self.snap.warm_targets();
        match target.filter(|t| ids_in(*t) >= WARM_MIN) {
            Some(WarmTarget::Pack(p)) => {
                warm_each(group, filter, |b| Warm::Probed(p.idx.table().warm_start(b)))
            }
            Some(WarmTarget::Midx(m)) => warm_each(group, filter, |b| {
                Warm::Probed(m.midx.table().warm_start(b))
            }),
            None if filter.is_some() => warm_each(group, filter, |_| Warm::Maybe),
            None => [Warm::Cold; GROUP],
        }
    }

    /// Warming step 3: the next step of each search of step 2 (reading the line step 2 prefetched), the line of
    /// the step after it prefetched. Run only on the index step 2 stepped (the caller compares their keys).
    fn warm_next(&self, group: &[ObjectId], warm: &mut [Warm; GROUP]) {
        match self
            .snap
            .warm_targets()
            .1
            .filter(|t| ids_in(*t) >= WARM_MIN)
        {
            Some(WarmTarget::Pack(p)) => {
                step_each(group, warm, |b, probe| p.idx.table().warm_next(b, probe))
            }
            Some(WarmTarget::Midx(m)) => {
                step_each(group, warm, |b, probe| m.midx.table().warm_next(b, probe))
            }
            None => {}
        }
    }
}

/// How many ids `t` lists.
fn ids_in(t: WarmTarget<'_>) -> u32 {
    match t {
        WarmTarget::Pack(p) => p.idx.len(),
        WarmTarget::Midx(m) => m.midx.len(),
    }
}

/// Step 3 for `group`: each `Probed` state stepped by `next`.
#[inline(always)]
fn step_each(group: &[ObjectId], warm: &mut [Warm; GROUP], next: impl Fn(&[u8], Probe) -> Probe) {
    for (id, w) in group.iter().zip(warm.iter_mut()) {
        if let Warm::Probed(p) = *w {
            *w = Warm::Probed(next(id.as_bytes(), p));
        }
    }
}

/// Step 2's states for `group`: `Absent` where `filter` rules the id out, else `first(id)`.
#[inline(always)]
fn warm_each(
    group: &[ObjectId],
    filter: Option<&MissFilter>,
    first: impl Fn(&[u8]) -> Warm,
) -> [Warm; GROUP] {
    let mut warm = [Warm::Cold; GROUP];
    for (id, w) in group.iter().zip(warm.iter_mut()) {
        let b = id.as_bytes();
        *w = if filter.is_some_and(|f| !f.may_contain(b)) {
            Warm::Absent
        } else {
            first(b)
        };
    }
    warm
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use std::path::Path;

    use crate::idx::write::{Entry, write_idx};
    use crate::oid::{HashKind, ObjectId};
    use crate::store::{Options, Store};

    const KIND: HashKind = HashKind::Sha1;

    fn id(n: u32) -> ObjectId {
        KIND.digest(&n.to_le_bytes())
    }

    /// Write a pack of `ids` as git does: the `.pack`, then the `.idx` under a temporary name, renamed into place.
    fn write_pack(objects: &Path, serial: u32, ids: &[ObjectId]) {
        let entries: Vec<Entry> = (0u64..)
            .zip(ids)
            .map(|(k, &id)| Entry {
                id,
                offset: 12 + 10 * k,
                crc32: 0,
            })
            .collect();
        let sum = KIND.digest(format!("batch test pack {serial}").as_bytes());
        let idx = objects.join("pack").join(format!("pack-{sum}.idx"));
        odb_index_testkit::write_stub_pack(
            &idx.with_extension("pack"),
            entries.len() as u32,
            12 + 10 * entries.len() as u64 + 1 + KIND.len() as u64,
            sum.as_bytes(),
        );
        let tmp = idx.with_extension("tmp");
        std::fs::write(&tmp, write_idx(2, KIND, &entries, &sum).unwrap()).unwrap();
        std::fs::rename(&tmp, &idx).unwrap();
    }

    /// B1 on the real store, with events and with `stat`: a batch whose misses were answered quietly, then a
    /// pack renamed into place, then a batch: it finds the pack's object (its one check is its own, made after
    /// it began, not the previous batch's). Fails with the check removed or kept from batch to batch.
    #[test]
    fn a_batch_finds_a_pack_written_before_it_began() {
        for options in [
            Options::default().hash_kind(KIND).change_events_after(1),
            Options::default().hash_kind(KIND).change_events(false),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let objects = tmp.path();
            std::fs::create_dir_all(objects.join("pack")).unwrap();
            let old: Vec<ObjectId> = (0..40).map(id).collect();
            write_pack(objects, 0, &old);
            let store = Store::open(objects, options.clone()).unwrap();
            let mut h = store.handle();
            let asks = [old[3], id(1000), old[20], id(1001)];
            // Several batches: the listing is trusted and the detector settled (events set up) before the write.
            for _ in 0..4 {
                let mut out = Vec::new();
                h.locate_many(&asks, &mut out).unwrap();
                assert!(
                    out[0].is_some() && out[1].is_none() && out[2].is_some() && out[3].is_none()
                );
            }
            // A directory stamp within a second of its listing is not trusted: let the clock move past it.
            std::thread::sleep(std::time::Duration::from_millis(1100));
            let mut out = Vec::new();
            h.locate_many(&asks, &mut out).unwrap();
            write_pack(objects, 1, &[id(1000)]);
            let mut out = Vec::new();
            h.locate_many(&asks, &mut out).unwrap();
            assert!(
                out[1].is_some(),
                "{options:?}: the object of a pack renamed into place before the batch began was missed"
            );
            assert!(out[0].is_some() && out[2].is_some() && out[3].is_none());
        }
    }

    /// Indices large enough to be warmed (a `.idx` of each version and a multi-pack-index, [`WARM_MIN`] ids and
    /// more; the proptest's are smaller): `locate_many` answers hits and misses as `locate` does, with the miss
    /// filter and without.
    #[test]
    fn warmed_indices_answer_as_locate() {
        use crate::midx::write::{PackEntries, write_midx};
        use crate::store::MissFilterMode;
        let n = super::WARM_MIN + 1000;
        let ids: Vec<ObjectId> = (0..n).map(id).collect();
        for (version, midx, filter) in [
            (2, false, MissFilterMode::Eager),
            (1, false, MissFilterMode::Off),
            (2, true, MissFilterMode::Auto),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let objects = tmp.path();
            std::fs::create_dir_all(objects.join("pack")).unwrap();
            let entries: Vec<Entry> = (0u64..)
                .zip(&ids)
                .map(|(k, &id)| Entry {
                    id,
                    offset: 12 + 10 * k,
                    crc32: 0,
                })
                .collect();
            let sum = KIND.digest(b"warmed");
            let idx = objects.join("pack").join(format!("pack-{sum}.idx"));
            let len = 12 + 10 * u64::from(n) + 1 + KIND.len() as u64;
            odb_index_testkit::write_stub_pack(&idx.with_extension("pack"), n, len, sum.as_bytes());
            std::fs::write(&idx, write_idx(version, KIND, &entries, &sum).unwrap()).unwrap();
            if midx {
                let packs = [PackEntries {
                    name: idx.file_name().unwrap().to_str().unwrap().to_owned(),
                    entries: entries.iter().map(|e| (e.id, e.offset)).collect(),
                }];
                let bytes = write_midx(1, KIND, &packs).unwrap();
                std::fs::write(objects.join("pack/multi-pack-index"), bytes).unwrap();
            }
            let store = Store::open(
                objects,
                Options::default().hash_kind(KIND).miss_filter(filter),
            )
            .unwrap();
            let asks: Vec<ObjectId> = (0..3000u32)
                .map(|k| {
                    if k % 3 == 0 {
                        id(n + k)
                    } else {
                        ids[(k * 7919 % n) as usize]
                    }
                })
                .collect();
            let mut one = store.handle();
            let want: Vec<_> = asks.iter().map(|i| one.locate(i).unwrap()).collect();
            let mut many = store.handle();
            for _ in 0..3 {
                let mut out = Vec::new();
                many.locate_many(&asks, &mut out).unwrap();
                assert_eq!(
                    out, want,
                    "version {version}, midx {midx}, filter {filter:?}"
                );
            }
            assert_eq!(want.iter().filter(|l| l.is_some()).count(), 2000);
        }
    }

    /// Two packs large enough to be warmed, asked in runs of ids from one, then the other, then absent ones: the
    /// pack a search tries first (the last hit's) changes inside groups, so a state warmed for one pack's search
    /// must not resume the other's. Fails if a group's warm states are used after the pack tried first changed
    /// (a position found in one index read as the other's: a wrong location).
    #[test]
    fn a_batch_whose_hits_switch_packs_answers_as_locate() {
        use crate::store::MissFilterMode;
        let n = super::WARM_MIN + 500;
        let a: Vec<ObjectId> = (0..n).map(id).collect();
        let b: Vec<ObjectId> = (n..2 * n).map(id).collect();
        for filter in [MissFilterMode::Off, MissFilterMode::Eager] {
            let tmp = tempfile::tempdir().unwrap();
            let objects = tmp.path();
            std::fs::create_dir_all(objects.join("pack")).unwrap();
            write_pack(objects, 0, &a);
            write_pack(objects, 1, &b);
            let store = Store::open(
                objects,
                Options::default().hash_kind(KIND).miss_filter(filter),
            )
            .unwrap();
            let asks: Vec<ObjectId> = (0..6000u32)
                .map(|k| match k / 11 % 3 {
                    0 => a[(k * 7919 % n) as usize],
                    1 => b[(k * 104_729 % n) as usize],
                    _ => id(3 * n + k),
                })
                .collect();
            let mut one = store.handle();
            let want: Vec<_> = asks.iter().map(|i| one.locate(i).unwrap()).collect();
            assert_eq!(want.iter().filter(|l| l.is_some()).count(), 4004);
            let mut many = store.handle();
            for _ in 0..3 {
                let mut out = Vec::new();
                many.locate_many(&asks, &mut out).unwrap();
                assert_eq!(out, want, "filter {filter:?}");
            }
        }
    }

    /// An error stops the batch where `locate` would: `out` holds the answers of the ids before the one that
    /// failed (a held miss before it included), and nothing after.
    #[test]
    fn an_error_cuts_the_answers_at_the_failing_id() {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path();
        std::fs::create_dir_all(objects.join("pack")).unwrap();
        let ids: Vec<ObjectId> = (0..40).map(id).collect();
        write_pack(objects, 0, &ids);
        let store = Store::open(objects, Options::default().hash_kind(KIND)).unwrap();
        let mut h = store.handle();
        let other = HashKind::Sha256.digest(b"x");
        let asks = [ids[0], id(5000), other, ids[1]];
        let mut out = vec![None];
        let e = h.locate_many(&asks, &mut out).unwrap_err();
        assert!(matches!(e, crate::Error::WrongIdHashKind { .. }), "{e}");
        assert_eq!(
            out.len(),
            3,
            "the answers before the failing id, after what `out` held"
        );
        assert!(out[1].is_some() && out[2].is_none());
    }
}
