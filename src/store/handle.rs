//! A thread's access to the store: the [`Handle`] and its lookup loop.

use std::marker::PhantomData;
use std::path::PathBuf;

use super::listing::{Generation, Stamp, pack_path_in};
use super::load::{Loaded, Map, load_slot};
use super::options::RefreshMode;
use super::snapshot::Snapshot;
use super::{Location, Store};
use crate::error::Error;
use crate::ids::PackId;
use crate::oid::ObjectId;
use crate::protocol::{Settled, View};
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
            _not_sync: PhantomData,
        }
    }
}

/// One thread's access to a [`Store`]: cheap to make, `Send` but not `Sync`; lookups take `&mut self`.
///
/// A handle caches the indices it has seen and re-collects only when the store's state changed, so a hit
/// allocates nothing and a steady-state miss does one Acquire load of shared memory (plus the loose probe and,
/// under [`RefreshMode::OnMiss`], one `stat` per pack directory).
pub struct Handle {
    store: Arc<Store>,
    view: View<Loaded, Generation>,
    snap: Snapshot,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl Handle {
    /// The store this handle reads.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Where `id` is, or `None` if it is in no pack and no loose directory.
    ///
    /// Errors: [`Error::Incomplete`] when the object was not found and some index file could not be loaded (so
    /// "missing" cannot be claimed); [`Error::WrongIdHashKind`] for an id of the other hash kind; I/O errors of
    /// the loose probe other than "not found".
    pub fn locate(&mut self, id: &ObjectId) -> Result<Option<Location>, Error> {
        if id.kind() != self.store.kind {
            return Err(Error::WrongIdHashKind {
                objects_dir: self.store.objects_dir.clone(),
                expected: self.store.kind,
                found: id.kind(),
            });
        }
        let bytes = id.as_bytes();
        let mut refreshed = false;
        loop {
            // 1. Packs: what this handle has seen, then whatever became visible or is left to load.
            if let Some(loc) = self.snap.search(bytes) {
                // Hits notice a retired map too (one Acquire load), or a hit-only handle would keep the indices
                // of deleted packs mapped forever.
                if self.view.map().load().is_retired() {
                    self.move_to_current();
                    continue;
                }
                return Ok(Some(loc));
            }
            // A steady-state miss stops here: one Acquire load (P4).
            let settled = if self.view.is_settled() {
                Settled::Exhausted
            } else {
                self.settle(bytes)
            };
            match settled {
                // Like a snapshot hit: an answer from a map a refresh has replaced may name a deleted pack.
                Settled::Found(_) if self.view.map().load().is_retired() => {
                    self.move_to_current();
                    continue;
                }
                Settled::Found(loc) => return Ok(Some(loc)),
                Settled::Retired => {
                    self.move_to_current();
                    continue;
                }
                Settled::Exhausted => {}
            }
            if refreshed {
                break;
            }
            // 2. Loose objects (git's order: packs, loose, then re-read the pack directories).
            let g = self.view.map().meta();
            for (dir, l) in g.loose.iter().enumerate() {
                if l.contains(id)? {
                    return Ok(Some(Location::Loose { dir }));
                }
            }
            // 3. Refresh: only if a pack directory changed (or was listed too recently to trust).
            if self.store.options.refresh == RefreshMode::Never || !self.pack_dirs_changed() {
                break;
            }
            let map = sync::Arc::clone(self.view.map());
            self.store.refresh_from(&map, false)?;
            refreshed = true;
            if !sync::Arc::ptr_eq(&map, &self.store.current.get()) {
                self.move_to_current();
            }
            // 4. Search the packs again: a repack + prune-packed between steps 1 and 2 moved the object.
        }
        if self.snap.failed.is_empty() {
            Ok(None)
        } else {
            Err(Error::Incomplete {
                failed: self.snap.failed.clone(),
            })
        }
    }

    /// True if `id` is in the repository (see [`locate`](Self::locate)).
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
                load_slot(map, slot, store.kind, store.options.load, &store.loads)
            },
        )
    }

    fn move_to_current(&mut self) {
        self.view = View::new(self.store.current.get());
        self.snap = Snapshot::default();
    }

    fn pack_dirs_changed(&self) -> bool {
        let g = self.view.map().meta();
        if g.untrusted {
            return true;
        }
        g.pack_dirs
            .iter()
            .zip(g.pack_dir_stamps.iter())
            .any(|(d, s)| Stamp::of(d) != *s)
    }
}
