//! A handle's snapshot: the loaded indices it has seen, searched without touching shared memory.
//!
//! **What it holds:** the single-pack indices of the map this handle has seen, newest pack first (git's order),
//! its multi-pack-indices, the index files that failed to load, and, once it holds every slot of a settled map,
//! the map's miss filter (`filter.rs`) and a table of the packs with ids in each fan-out bucket. `View::settle`
//! hands it each slot as it becomes visible ([`Snapshot::add`], from `handle.rs`); a handle that moves to another
//! map starts an empty one.
//!
//! **The search order** ([`Snapshot::search`]; the first index that lists the id answers):
//! 1. the miss filter, if installed: "absent" is certain for every pack it covers, and only the packs outside
//!    it and the multi-pack-indices are searched;
//! 2. the pack of the last hit;
//! 3. the other packs in order, skipping those with no id in the id's fan-out bucket
//!    ([`search_other_packs`](Snapshot::search_other_packs));
//! 4. the multi-pack-indices in order (`midx_lookup.rs`);
//! 5. a miss in an index whose fan-out bucket is not yet known to be in order is confirmed there (the bucket is
//!    checked once; where its ids are out of order, as git would miss them, the id is looked for in it anyway).
//!
//! An entry whose offset cannot be right answers nothing: it is recorded ([`Snapshot::bad_entry`]) and the
//! search goes on; the lookup reports it only if nothing else has the object. A batch (`batch.rs`) runs the
//! same order from where its warming steps left each id ([`Snapshot::search_warmed`], [`Warm`]). A search
//! allocates nothing and writes no shared memory: the filter's answers are counted here and added to the store's
//! metrics when the handle lets go of the snapshot.

use std::path::PathBuf;

use crate::error::Error;
use crate::idx::Found;
use crate::protocol::SlotRef;
use crate::store::Location;
use crate::store::listing::filter::MissFilter;
use crate::store::listing::load::{Loaded, LoadedMidx, LoadedPack};
use crate::store::listing::plan::SlotSpec;
use crate::store::listing::{Listing, slot_path};
use crate::sync::plain::Arc;

/// One thread's cached picture of the store: the loaded indices it has seen, in search order.
#[derive(Default)]
pub(in crate::store) struct Snapshot {
    /// Single-pack indices, newest pack first.
    pub(in crate::store) packs: Vec<Arc<LoadedPack>>,
    /// Multi-pack-indices.
    pub(in crate::store) midx: Vec<Arc<LoadedMidx>>,
    /// Index files that failed to load (not counting a multi-pack-index, whose packs are searched instead).
    pub(in crate::store) failed: Vec<(PathBuf, Arc<Error>)>,
    /// Position in `packs` of the last hit: tried first.
    last_hit: usize,
    /// The map's miss filter, once this snapshot is complete and the filter is published.
    filter: Option<Arc<MissFilter>>,
    /// The packs of `packs` outside `filter` (searched even when the filter says "absent").
    outside: Vec<Arc<LoadedPack>>,
    /// Which packs have ids in each fan-out bucket: bit `i % 64` of `bucket_packs[b * w + i / 64]` (`w` words
    /// per bucket, `packs.len()` bits) is set when `packs[i]` lists ids beginning with byte `b`. 2 KB per 64
    /// packs (a pack's own fan-out table copy is 1 028 bytes), built once this snapshot holds every pack of a
    /// settled map ([`index_buckets`](Self::index_buckets)); empty otherwise (then each pack's table is read).
    bucket_packs: Vec<u64>,
    /// Settled misses to go before this handle builds the filter; [`FILTER_DONE`] once decided.
    pub(in crate::store) filter_countdown: u32,
    /// The countdown was started (the next time it reaches zero, build).
    pub(in crate::store) filter_armed: bool,
    /// The last entry found whose offset cannot be right, with the id it was found for (a typed error naming
    /// the file): the search goes on in the other indices, and a lookup of that id reports it only if nothing
    /// else has the object. Set only on that path, so a hit pays nothing for it.
    pub(in crate::store) bad_entry: Option<(Box<[u8]>, Error)>,
    /// Some index of `packs` or `midx` has fan-out buckets not yet checked in order: its misses are confirmed
    /// (see [`PackIndex::confirm_miss`](crate::idx::PackIndex::confirm_miss), [`LoadedMidx::confirm_miss`]).
    unconfirmed: bool,
    /// An index failed to load because its file (or its `.pack`) is gone since the listing: a miss refreshes.
    /// Set only with an entry in `failed` (`Handle::locate_steady` relies on it: it leaves both to the slow path).
    pub(in crate::store) vanished: bool,
    /// Loose directories the current lookup could not probe (cleared when a lookup reaches the loose objects,
    /// filled only on failure): a miss cannot be claimed.
    pub(in crate::store) loose_failed: Vec<(PathBuf, Arc<Error>)>,
    /// Misses the filter answered (the store's [`Metrics::filter_answers`](crate::store::Metrics::filter_answers), added
    /// there when the handle lets go of this snapshot: no shared write on the miss path).
    pub(in crate::store) filter_answers: u64,
}

/// What a batch's warming steps learnt of an id before its search (`store/lookup/batch.rs`), while the pack tried first
/// is the one they stepped ([`Snapshot::warm_key`]) and no slow path ran. A miss filter installed since (where
/// there was none: the steady searches change nothing else) leaves each state right: `Maybe` and `Probed` are
/// searches without the filter, which give the same answers; `Absent` is made only by an installed filter,
/// which is never replaced but on a slow path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum Warm {
    /// Nothing: searched as [`Snapshot::search`] does.
    Cold,
    /// The miss filter says the id is absent.
    Absent,
    /// The miss filter, if any, says it may be present; the pack tried first was not stepped.
    Maybe,
    /// The miss filter, if any, says it may be present; the search of the index read first (the pack tried
    /// first, or without packs of their own the first multi-pack-index: [`Snapshot::warm_targets`]) stands at
    /// `Probe`.
    Probed(crate::idx::Probe),
}

/// The index a batch steps the searches of (`Snapshot::warm_targets`).
#[derive(Clone, Copy)]
pub(in crate::store) enum WarmTarget<'a> {
    /// The pack tried first.
    Pack(&'a LoadedPack),
    /// The first multi-pack-index, where there are no packs of their own.
    Midx(&'a LoadedMidx),
}

/// `filter_countdown` once the filter is installed (or none will be).
pub(in crate::store) const FILTER_DONE: u32 = u32::MAX;

impl Snapshot {
    /// The loaded index of `pack` in this snapshot, if it has it: the last hit's first (a reader asks about the
    /// pack a lookup just found its object in), else a scan of the others.
    pub(in crate::store) fn pack(&self, pack: crate::ids::PackId) -> Option<&LoadedPack> {
        if let Some(p) = self.packs.get(self.last_hit).filter(|p| p.id == pack) {
            return Some(p);
        }
        self.packs.iter().find(|p| p.id == pack).map(|p| &**p)
    }

    /// Search everything loaded so far (skipping the packs the miss filter covers when it says "absent"). No
    /// allocation, no shared writes (except on a bad entry, which records its error and goes on).
    #[inline]
    pub(in crate::store) fn search(&mut self, id: &[u8]) -> Option<Location> {
        if let Some(f) = &self.filter
            && !f.may_contain(id)
        {
            self.filter_answers += 1;
            return self.search_outside(id);
        }
        self.search_all(id)
    }

    /// Search what the filter does not cover: the packs outside it and the multi-pack-indices.
    #[inline]
    fn search_outside(&mut self, id: &[u8]) -> Option<Location> {
        if self.outside.is_empty() && self.midx.is_empty() {
            return None;
        }
        self.search_outside_slow(id)
    }

    #[inline(never)]
    fn search_outside_slow(&mut self, id: &[u8]) -> Option<Location> {
        for p in &self.outside {
            if let Some(loc) = pack_lookup(p, id, &mut self.bad_entry) {
                return Some(loc);
            }
        }
        for m in &self.midx {
            if let Some(loc) = m.lookup(id, &mut self.bad_entry) {
                return Some(loc);
            }
        }
        self.confirm_misses(id, true)
    }

    /// Every index missed: a miss is certain only where the ids are in order ([`PackIndex::confirm_miss`],
    /// [`LoadedMidx::confirm_miss`]). `outside`: the miss filter said "absent", which is certain for the packs
    /// it covers (it holds every id they list, in order or not): only the packs outside it are confirmed.
    ///
    /// [`PackIndex::confirm_miss`]: crate::idx::PackIndex::confirm_miss
    #[inline(always)]
    fn confirm_misses(&mut self, id: &[u8], outside: bool) -> Option<Location> {
        if !self.unconfirmed {
            return None;
        }
        self.confirm_misses_slow(id, outside)
    }

    #[inline(never)]
    fn confirm_misses_slow(&mut self, id: &[u8], outside: bool) -> Option<Location> {
        let packs = if outside { &self.outside } else { &self.packs };
        for p in packs {
            if !p.idx.all_in_order()
                && let Some(loc) = pack_answer(p, id, p.idx.confirm_miss(id), &mut self.bad_entry)
            {
                return Some(loc);
            }
        }
        for m in &self.midx {
            if !m.buckets.all_in_order()
                && let Some(loc) = m.confirm_miss(id, &mut self.bad_entry)
            {
                return Some(loc);
            }
        }
        // Once every bucket of every index is checked, misses skip this (a field of this snapshot).
        self.unconfirmed = self.packs.iter().any(|p| !p.idx.all_in_order())
            || self.midx.iter().any(|m| !m.buckets.all_in_order());
        None
    }

    /// What a batch of lookups warms before it searches (`Handle::locate_many`, `store/lookup/batch.rs`): the miss
    /// filter if installed, and the index a search reads first: the pack tried first (the last hit's), or
    /// without packs of their own (a multi-pack-index covers them all) the first multi-pack-index.
    pub(in crate::store) fn warm_targets(&self) -> (Option<&MissFilter>, Option<WarmTarget<'_>>) {
        let first = match self.packs.get(self.last_hit) {
            Some(p) => Some(WarmTarget::Pack(p)),
            None if self.packs.is_empty() => self.midx.first().map(|m| WarmTarget::Midx(m)),
            None => None,
        };
        (self.filter.as_deref(), first)
    }

    /// The pack a search tries first (the last hit's), as a value to compare: a batch's warm states for the
    /// searches of one group are used only while it is unchanged (`store/lookup/batch.rs`). It names the pack by its
    /// position, which stands for the same pack while no slow path runs (slots are added on slow paths only).
    #[inline(always)]
    pub(in crate::store) fn warm_key(&self) -> usize {
        self.last_hit
    }

    /// [`search`](Self::search), with what a batch's warming steps learnt of `id` on this snapshot (same
    /// [`warm_key`](Self::warm_key)): the filter's answer and the first pack's search steps are not made again.
    #[inline(always)]
    pub(in crate::store) fn search_warmed(&mut self, id: &[u8], w: Warm) -> Option<Location> {
        match w {
            Warm::Cold => self.search(id),
            Warm::Absent => {
                self.filter_answers += 1;
                self.search_outside(id)
            }
            Warm::Maybe => self.search_all(id),
            // The index read first: the pack tried first, or without packs of their own (which only a slow path
            // adds) the first multi-pack-index (`warm_targets`).
            Warm::Probed(probe) if self.packs.is_empty() => self.search_midx(id, Some(probe)),
            Warm::Probed(probe) => self.search_all_with(id, |idx| idx.find_entry(id, Some(probe))),
        }
    }

    /// Use `f` from now on: this snapshot holds every slot of the settled map `f` was published in.
    pub(in crate::store) fn install_filter(&mut self, f: Arc<MissFilter>) {
        self.outside = self
            .packs
            .iter()
            .filter(|p| !f.covers(p.id))
            .cloned()
            .collect();
        self.filter = Some(f);
        self.filter_countdown = FILTER_DONE;
        self.index_buckets();
    }

    /// Fill [`bucket_packs`](Self::bucket_packs) from the packs' fan-out tables (256 reads a pack), once this
    /// snapshot holds every pack of a settled map. With one pack there are no other packs to skip: nothing kept.
    pub(in crate::store) fn index_buckets(&mut self) {
        self.bucket_packs.clear();
        if self.packs.len() < 2 {
            return;
        }
        let w = self.packs.len().div_ceil(64);
        self.bucket_packs.resize(256 * w, 0);
        for (i, p) in self.packs.iter().enumerate() {
            for (b, row) in (0..=u8::MAX).zip(self.bucket_packs.chunks_mut(w)) {
                if !p.idx.bucket_is_empty(b)
                    && let Some(word) = row.get_mut(i / 64)
                {
                    *word |= 1u64 << (i % 64);
                }
            }
        }
    }

    /// The packs of this snapshot, as `(pack, ids)`.
    pub(in crate::store) fn pack_sizes(
        &self,
    ) -> impl Iterator<Item = (crate::ids::PackId, u32)> + '_ {
        self.packs.iter().map(|p| (p.id, p.idx.len()))
    }

    /// The packs of this snapshot.
    pub(in crate::store) fn pack_indices(
        &self,
    ) -> Vec<(crate::ids::PackId, &crate::idx::PackIndex)> {
        self.packs.iter().map(|p| (p.id, &p.idx)).collect()
    }

    #[inline]
    fn search_all(&mut self, id: &[u8]) -> Option<Location> {
        self.search_all_with(id, |idx| idx.find_entry(id, None))
    }

    /// [`search_all`](Self::search_all), with `first` the search of the pack tried first.
    #[inline(always)]
    fn search_all_with(
        &mut self,
        id: &[u8],
        first: impl FnOnce(&crate::idx::PackIndex) -> Found,
    ) -> Option<Location> {
        if let Some(p) = self.packs.get(self.last_hit)
            && let Some(loc) = pack_answer(p, id, first(&p.idx), &mut self.bad_entry)
        {
            return Some(loc);
        }
        if let Some(loc) = self.search_other_packs(id) {
            return Some(loc);
        }
        self.search_midx(id, None)
    }

    /// The end of [`search_all`](Self::search_all): the multi-pack-indices (the first one's search resumed from
    /// `first`, steps a batch ran ahead for `id`), then the misses confirmed.
    #[inline(always)]
    fn search_midx(&mut self, id: &[u8], first: Option<crate::idx::Probe>) -> Option<Location> {
        for (i, m) in self.midx.iter().enumerate() {
            let from = if i == 0 { first } else { None };
            let found = m.midx.find_entry(id, |p| m.bound(p), from);
            if let Some(loc) = m.answer(id, found, &mut self.bad_entry) {
                return Some(loc);
            }
        }
        self.confirm_misses(id, false)
    }

    /// Search the packs other than `last_hit`, in order, skipping those whose fan-out bucket for `id` is empty
    /// (their search would miss without reading an id). The packs with ids there come as a bit mask per 64
    /// packs: one word of [`bucket_packs`](Self::bucket_packs), where each pack's own table is a cache line of
    /// its own; while that is not built, the packs' tables tested without a branch (the loads overlap, where a
    /// test per pack inside its search would mispredict about as often as a pack has ids in the bucket, and pay
    /// a call). Only the packs with ids there are searched. This is what a false positive of the miss filter
    /// costs in a store of many small packs (123 ids a pack leave about 62% of the buckets empty), and the hit
    /// path past `last_hit`.
    #[inline(never)]
    fn search_other_packs(&mut self, id: &[u8]) -> Option<Location> {
        // An empty id is no object id: every search misses it.
        let &first = id.first()?;
        let w = self.packs.len().div_ceil(64);
        // The table, if it is built for these packs (else the packs' own tables, read without a branch).
        let row = (self.bucket_packs.len() == 256 * w)
            .then(|| self.bucket_packs.get(usize::from(first) * w..))
            .flatten();
        for (c, chunk) in self.packs.chunks(64).enumerate() {
            let mut has = match row.and_then(|r| r.get(c)) {
                Some(&bits) => bits,
                None => chunk.iter().enumerate().fold(0u64, |has, (j, p)| {
                    has | u64::from(!p.idx.bucket_is_empty(first)) << j
                }),
            };
            if self.last_hit / 64 == c {
                has &= !(1u64 << (self.last_hit % 64));
            }
            while has != 0 {
                let j = has.trailing_zeros() as usize;
                has &= has - 1;
                if let Some(p) = chunk.get(j)
                    && let Some(loc) = pack_lookup(p, id, &mut self.bad_entry)
                {
                    self.last_hit = c * 64 + j;
                    return Some(loc);
                }
            }
        }
        None
    }

    /// Add a newly visible slot's value; search it for `id`.
    pub(in crate::store) fn add(
        &mut self,
        g: &Listing,
        slot: usize,
        r: SlotRef<'_, Loaded>,
        id: &[u8],
    ) -> Option<Location> {
        match r {
            SlotRef::Ready(Loaded::Pack(p)) => {
                let at = self.packs.partition_point(|q| q.mtime > p.mtime);
                self.packs.insert(at, Arc::clone(p));
                self.bucket_packs.clear();
                if at <= self.last_hit && self.packs.len() > 1 {
                    self.last_hit += 1;
                }
                self.unconfirmed |= !p.idx.all_in_order();
                pack_lookup(p, id, &mut self.bad_entry)
                    .or_else(|| pack_answer(p, id, p.idx.confirm_miss(id), &mut self.bad_entry))
            }
            SlotRef::Ready(Loaded::Midx(m)) => {
                self.midx.push(Arc::clone(m));
                self.unconfirmed |= !m.buckets.all_in_order();
                m.lookup(id, &mut self.bad_entry)
                    .or_else(|| m.confirm_miss(id, &mut self.bad_entry))
            }
            SlotRef::Ready(Loaded::Failed { error, midx }) => {
                if !midx {
                    self.vanished |= error.is_vanished();
                    self.failed.push((slot_path(g, slot), Arc::clone(error)));
                }
                None
            }
            SlotRef::Ready(Loaded::Covered) | SlotRef::Pending => None,
            SlotRef::Abandoned => {
                let path = slot_path(g, slot);
                let is_midx = matches!(g.slots[slot], SlotSpec::Midx { .. });
                if !is_midx {
                    self.failed
                        .push((path.clone(), Arc::new(Error::LoaderPanicked { path })));
                }
                None
            }
        }
    }
}

/// Look `id` up in one pack's index: its location, or `None` (a miss, or an entry whose offset cannot be
/// right: then `bad` records why, naming the index).
#[inline(always)]
fn pack_lookup(
    p: &LoadedPack,
    id: &[u8],
    bad: &mut Option<(Box<[u8]>, Error)>,
) -> Option<Location> {
    pack_answer(p, id, p.idx.find_entry(id, None), bad)
}

/// What `found` (a search of `p` for `id`) answers.
#[inline(always)]
fn pack_answer(
    p: &LoadedPack,
    id: &[u8],
    found: Found,
    bad: &mut Option<(Box<[u8]>, Error)>,
) -> Option<Location> {
    match found {
        Found::At(offset) => Some(Location::Packed { pack: p.id, offset }),
        Found::Missing => None,
        Found::Bad(i) => {
            record_bad_idx_entry(p, id, i, bad);
            None
        }
    }
}

#[cold]
#[inline(never)]
fn record_bad_idx_entry(p: &LoadedPack, id: &[u8], i: u32, bad: &mut Option<(Box<[u8]>, Error)>) {
    if let Some(Err(problem)) = p.idx.checked_offset_at(i) {
        let e = Error::CorruptIndex {
            path: p.idx.path().to_path_buf(),
            problem,
        };
        *bad = Some((id.into(), e));
    }
}
