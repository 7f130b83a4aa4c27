//! A handle's snapshot: the loaded indices it has seen, searched without touching shared memory.

use std::path::PathBuf;

use super::Location;
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
}

impl Snapshot {
    /// Search everything loaded so far. No allocation, no shared writes.
    #[inline]
    pub(super) fn search(&mut self, id: &[u8]) -> Option<Location> {
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
