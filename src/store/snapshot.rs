//! A handle's snapshot: the loaded indices it has seen, searched without touching shared memory.

use std::path::PathBuf;

use super::Location;
use super::filter::MissFilter;
use super::listing::{Generation, SlotSpec, slot_path};
use super::load::{Loaded, LoadedMidx, LoadedPack};
use crate::error::Error;
use crate::protocol::SlotRef;
use crate::sync::plain::Arc;

/// One thread's cached picture of the store: the loaded indices it has seen, in search order.
#[derive(Default)]
pub(super) struct Snapshot {
    /// Single-pack indices, newest pack first.
    pub(super) packs: Vec<Arc<LoadedPack>>,
    /// Multi-pack-indices.
    pub(super) midx: Vec<Arc<LoadedMidx>>,
    /// Index files that failed to load (not counting a multi-pack-index, whose packs are searched instead).
    pub(super) failed: Vec<(PathBuf, Arc<Error>)>,
    /// Position in `packs` of the last hit: tried first.
    last_hit: usize,
    /// The map's miss filter, once this snapshot is complete and the filter is published.
    filter: Option<Arc<MissFilter>>,
    /// The packs of `packs` outside `filter` (searched even when the filter says "absent").
    outside: Vec<Arc<LoadedPack>>,
    /// Settled misses to go before this handle builds the filter; [`FILTER_DONE`] once decided.
    pub(super) filter_countdown: u32,
    /// The countdown was started (the next time it reaches zero, build).
    pub(super) filter_armed: bool,
}

/// `filter_countdown` once the filter is installed (or none will be).
pub(super) const FILTER_DONE: u32 = u32::MAX;

impl Snapshot {
    /// Search everything loaded so far (skipping the packs the miss filter covers when it says "absent"). No
    /// allocation, no shared writes.
    #[inline]
    pub(super) fn search(&mut self, id: &[u8]) -> Option<Location> {
        if let Some(f) = &self.filter
            && !f.may_contain(id)
        {
            return self.search_outside(id);
        }
        self.search_all(id)
    }

    /// Search what the filter does not cover: the packs outside it and the multi-pack-indices.
    #[inline]
    fn search_outside(&self, id: &[u8]) -> Option<Location> {
        if self.outside.is_empty() && self.midx.is_empty() {
            return None;
        }
        self.search_outside_slow(id)
    }

    #[inline(never)]
    fn search_outside_slow(&self, id: &[u8]) -> Option<Location> {
        for p in &self.outside {
            if let Some(offset) = p.idx.lookup(id) {
                return Some(Location::Packed { pack: p.id, offset });
            }
        }
        self.midx.iter().find_map(|m| m.lookup(id))
    }

    /// Use `f` from now on: this snapshot holds every slot of the settled map `f` was published in.
    pub(super) fn install_filter(&mut self, f: Arc<MissFilter>) {
        self.outside = self
            .packs
            .iter()
            .filter(|p| !f.covers(p.id))
            .cloned()
            .collect();
        self.filter = Some(f);
        self.filter_countdown = FILTER_DONE;
    }

    /// The packs of this snapshot, as `(pack, ids)`.
    pub(super) fn pack_sizes(&self) -> impl Iterator<Item = (crate::ids::PackId, u32)> + '_ {
        self.packs.iter().map(|p| (p.id, p.idx.len()))
    }

    /// The packs of this snapshot.
    pub(super) fn pack_indices(&self) -> Vec<(crate::ids::PackId, &crate::idx::PackIndex)> {
        self.packs.iter().map(|p| (p.id, &p.idx)).collect()
    }

    #[inline]
    fn search_all(&mut self, id: &[u8]) -> Option<Location> {
        if let Some(p) = self.packs.get(self.last_hit)
            && let Some(offset) = p.idx.lookup(id)
        {
            return Some(Location::Packed { pack: p.id, offset });
        }
        for (i, p) in self.packs.iter().enumerate() {
            if i == self.last_hit {
                continue;
            }
            if let Some(offset) = p.idx.lookup(id) {
                self.last_hit = i;
                return Some(Location::Packed { pack: p.id, offset });
            }
        }
        for m in &self.midx {
            if let Some(loc) = m.lookup(id) {
                return Some(loc);
            }
        }
        None
    }

    /// Add a newly visible slot's value; search it for `id`.
    pub(super) fn add(
        &mut self,
        g: &Generation,
        slot: usize,
        r: SlotRef<'_, Loaded>,
        id: &[u8],
    ) -> Option<Location> {
        match r {
            SlotRef::Ready(Loaded::Pack(p)) => {
                let at = self.packs.partition_point(|q| q.mtime > p.mtime);
                self.packs.insert(at, Arc::clone(p));
                if at <= self.last_hit && self.packs.len() > 1 {
                    self.last_hit += 1;
                }
                p.idx
                    .lookup(id)
                    .map(|offset| Location::Packed { pack: p.id, offset })
            }
            SlotRef::Ready(Loaded::Midx(m)) => {
                self.midx.push(Arc::clone(m));
                m.lookup(id)
            }
            SlotRef::Ready(Loaded::Failed { error, midx }) => {
                if !midx {
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

impl LoadedMidx {
    #[inline]
    fn lookup(&self, id: &[u8]) -> Option<Location> {
        let (pack, offset) = self.midx.lookup(id)?;
        let pack = (*self.packs.get(pack as usize)?)?;
        Some(Location::Packed { pack, offset })
    }
}
