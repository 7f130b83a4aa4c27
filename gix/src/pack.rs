//! The packs an [`Objects`] has opened ([`Pack`], in `objects.rs`): found by id, their `.idx` (the store's) and
//! reverse index, a REF_DELTA's base in the same pack.

use std::sync::{Arc, OnceLock};

use odb_index::PackId;

use crate::Error;
use crate::convert::oid_from_gix;
use crate::objects::{Objects, Pack};
use crate::rev::RevIndex;

impl Objects {
    /// The pack `id` (its files are opened when first needed): this reader's, else the one a clone of it made
    /// (so its `.pack` is opened once for all of them), else a new one that the clones then share.
    pub(crate) fn pack(&self, id: PackId) -> Result<Arc<Pack>, Error> {
        if let Some(p) = self.packs.borrow().get(&id) {
            return Ok(Arc::clone(p));
        }
        let shared = self.shared.lock().get(&id).cloned();
        let pack = match shared {
            Some(p) => p,
            None => {
                // Asked of the store without the lock held; a clone that made the same pack meanwhile wins.
                let handle = self.handle.borrow();
                let info = handle.pack(id)?;
                let mapped = handle.pack_data(id);
                drop(handle);
                let made = Arc::new(Pack {
                    id,
                    path: info.pack_path.into(),
                    idx_path: info.idx_path,
                    kind: self.kind,
                    mapped,
                    data: OnceLock::new(),
                    rev: OnceLock::new(),
                    base_kinds: OnceLock::new(),
                });
                Arc::clone(self.shared.lock().entry(id).or_insert(made))
            }
        };
        self.packs.borrow_mut().insert(id, Arc::clone(&pack));
        Ok(pack)
    }

    /// `f` on the store's `.idx` of `pack` (the handle borrowed for the call only).
    pub(crate) fn with_index<R>(
        &self,
        pack: &Pack,
        f: impl FnOnce(&odb_index::idx::PackIndex) -> R,
    ) -> Result<R, Error> {
        Ok(self.handle.borrow_mut().with_pack_index(pack.id, f)?)
    }

    /// The reverse index of `pack`, made on first need: from its `.rev` file, or (none, or one that cannot be
    /// used: reported once through [`Objects::take_problems`]) from the `.idx`'s offsets.
    pub(crate) fn rev(&self, pack: &Pack) -> Result<Arc<RevIndex>, Error> {
        if let Some(r) = pack.rev.get() {
            return Ok(Arc::clone(r));
        }
        let rev_path = pack.path.with_extension("rev");
        let (rev, problem) =
            self.with_index(pack, |idx| RevIndex::open(idx, &rev_path, self.kind))?;
        self.problems.borrow_mut().extend(problem);
        Ok(Arc::clone(pack.rev.get_or_init(|| Arc::new(rev))))
    }

    /// The entry of a REF_DELTA's `base` if it is in the same pack (git's `find_pack_entry_one`), for gix-pack's
    /// resolver: the handle is borrowed for the lookup only, released before gix-pack decodes (and may call
    /// back).
    pub(crate) fn base_in(
        &self,
        pack: &Pack,
        base: &gix_hash::oid,
    ) -> gix_error::Result<Option<gix_pack::data::Entry>> {
        let offset = self
            .handle
            .borrow_mut()
            .locate_in_pack(pack.id, &oid_from_gix(base))
            .map_err(|e| gix_error::Error::from_error(Error::from(e)))?;
        offset
            .map(|o| pack.entry(o))
            .transpose()
            .map_err(gix_error::Error::from_error)
    }
}
