//! Lookup within one pack ([`Handle::locate_in_pack`]), as git's `find_pack_entry_one`: a `REF_DELTA`'s base is
//! looked up in the pack that holds the delta.

use crate::error::Error;
use crate::ids::PackId;
use crate::idx::PackIndex;
use crate::oid::ObjectId;
use crate::protocol::SlotRef;
use crate::store::listing::load::Loaded;
use crate::store::listing::plan::SlotSpec;
use crate::store::{Handle, Location};
use crate::sync::plain::Arc;

impl Handle {
    /// The offset of `id` in pack `pack`, or `None` if that pack's index does not list it (it may be in another
    /// pack: [`locate`](Self::locate) searches everywhere).
    ///
    /// Answers from the pack's own `.idx` if this handle has loaded it, else from a multi-pack-index that places
    /// the object in this pack, else by loading the pack's `.idx` (once per handle): a multi-pack-index lists an
    /// object stored in several packs under one of them only.
    ///
    /// Errors: [`Error::StalePack`] if the pack is no longer in the repository; [`Error::WrongIdHashKind`];
    /// the error of loading the pack's `.idx`.
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
    /// # git(&["init", "-q", "--bare", "."]);
    /// # let id = git(&["hash-object", "-w", "--stdin"]);
    /// # let pack_objects = |ids: &str| {
    /// #     use std::io::Write;
    /// #     let mut c = Command::new("git").args(["pack-objects", "-q", "objects/pack/pack"]).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1")
    /// #         .stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).spawn().unwrap();
    /// #     c.stdin.take().unwrap().write_all(ids.as_bytes()).unwrap();
    /// #     assert!(c.wait().unwrap().success());
    /// # };
    /// # pack_objects(&id);
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let id = id.trim().parse()?;
    /// let Some(Location::Packed { pack, offset }) = handle.locate(&id)? else { panic!() };
    /// assert_eq!(handle.locate_in_pack(pack, &id)?, Some(offset));
    /// let absent = "0123456789012345678901234567890123456789".parse()?;
    /// assert_eq!(handle.locate_in_pack(pack, &absent)?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn locate_in_pack(&mut self, pack: PackId, id: &ObjectId) -> Result<Option<u64>, Error> {
        self.check_kind(id)?;
        self.check_listed(pack)?;
        let bytes = id.as_bytes();
        if let Some(answer) = self.in_loaded(pack, bytes) {
            return answer;
        }
        // Not loaded yet by this handle: load every index (once), then ask again.
        self.load_all();
        if let Some(answer) = self.in_loaded(pack, bytes) {
            return answer;
        }
        // Covered by a multi-pack-index that lists the object under another pack (or not at all): the pack's
        // own index decides.
        find_in(&*self.own_index(pack)?, bytes)
    }

    /// Run `f` on pack `pack`'s own `.idx`: the one the store loaded (checked against its pack), else (a pack a
    /// multi-pack-index covers) the one opened for [`locate_in_pack`](Self::locate_in_pack), once per handle.
    /// For readers that need the pack's entries in offset order (a reverse index: git's `%(objectsize:disk)`,
    /// an `OFS_DELTA`'s base id) without mapping the file a second time.
    ///
    /// Errors: those of [`locate_in_pack`](Self::locate_in_pack).
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", false);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 10, 1, "main");
    /// # let id = odb_index_testkit::git(repo.path(), &["rev-parse", "main"]);
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(repo.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let Some(Location::Packed { pack, offset }) = handle.locate(&id.trim().parse()?)? else { panic!() };
    /// // The pack's entries in offset order (a reverse index), from the index the store loaded.
    /// let offsets = handle.with_pack_index(pack, |idx| {
    ///     let mut o: Vec<u64> = (0..idx.len()).filter_map(|i| idx.offset_at(i)).collect();
    ///     o.sort_unstable();
    ///     o
    /// })?;
    /// assert_eq!(offsets.len(), 10 + 10 + 1 + 1); // blobs, their directories, the root tree, the commit
    /// assert!(offsets.binary_search(&offset).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_pack_index<R>(
        &mut self,
        pack: PackId,
        f: impl FnOnce(&PackIndex) -> R,
    ) -> Result<R, Error> {
        self.check_listed(pack)?;
        if let Some(p) = self.snapshot().pack(pack) {
            return Ok(f(&p.idx));
        }
        self.load_all();
        if let Some(p) = self.snapshot().pack(pack) {
            return Ok(f(&p.idx));
        }
        let idx = self.own_index(pack)?;
        Ok(f(&idx))
    }

    /// `f` on the `.idx` of `pack` if this handle has searched it (loaded, and in its view), else `None`: loads
    /// nothing and asks nothing of the file system (a pack covered by a multi-pack-index whose own index was
    /// never needed answers `None`). For a reader that checks what a location came from, on every read.
    pub fn with_loaded_pack_index<R>(
        &self,
        pack: PackId,
        f: impl FnOnce(&PackIndex) -> R,
    ) -> Option<R> {
        let p = self.snapshot().pack(pack)?;
        Some(f(&p.idx))
    }

    /// The `.pack` of `pack` as mapped when its index was loaded, under
    /// [`Options::pack_data`](crate::store::Options::pack_data): from the indices this handle has searched, else from
    /// the store's current listing (an index another handle loaded). `None` without the option, for a pack whose
    /// own index is not loaded (not yet searched, or covered by a multi-pack-index), or if the file could not be
    /// mapped then. Asks nothing of the file system and loads nothing. Example:
    /// [`Options::pack_data`](crate::store::Options::pack_data).
    pub fn pack_data(&self, pack: PackId) -> Option<Arc<crate::data::Data>> {
        if let Some(p) = self.snapshot().pack(pack) {
            return p.data.clone();
        }
        let map = self.store().current.get();
        let listing = map.meta();
        let listed = *listing.pack_by_id.get(&pack)?;
        let slot = listing
            .slots
            .iter()
            .position(|s| matches!(s, SlotSpec::Pack { pack, .. } if *pack == listed))?;
        match map.get(slot) {
            SlotRef::Ready(Loaded::Pack(p)) => p.data.clone(),
            _ => None,
        }
    }

    /// [`Error::WrongIdHashKind`] unless `id` is of the store's hash kind.
    pub(in crate::store) fn check_kind(&self, id: &ObjectId) -> Result<(), Error> {
        let store = self.store();
        if id.kind() != store.hash_kind() {
            return Err(Error::WrongIdHashKind {
                objects_dir: store.objects_dir().to_path_buf(),
                expected: store.hash_kind(),
                found: id.kind(),
            });
        }
        Ok(())
    }

    /// `Ok` if `pack` is in this handle's listing, or in the store's current one (a pack newer than the handle's).
    fn check_listed(&mut self, pack: PackId) -> Result<(), Error> {
        if !self.listing().pack_by_id.contains_key(&pack) {
            self.move_to_current();
            if !self.listing().pack_by_id.contains_key(&pack) {
                return Err(Error::StalePack { pack });
            }
        }
        Ok(())
    }

    /// The pack's own `.idx` opened by this handle (for a pack a multi-pack-index covers), opened on first need.
    fn own_index(&mut self, pack: PackId) -> Result<Arc<PackIndex>, Error> {
        if let Some((_, idx)) = self.own_indices.iter().find(|(p, _)| *p == pack) {
            return Ok(Arc::clone(idx));
        }
        let store = Arc::clone(self.store());
        let listing = self.listing();
        let listed = listing.pack_by_id.get(&pack).map(|&i| &listing.packs[i]);
        let Some(listed) = listed else {
            return Err(Error::StalePack { pack });
        };
        // The one opener of a pack's own index: checked against its pack, offsets bounded by its length.
        let idx = Arc::new(PackIndex::open_for_pack(
            &listed.idx_path,
            store.hash_kind(),
            store.options.load,
        )?);
        self.own_indices.push((pack, Arc::clone(&idx)));
        Ok(idx)
    }

    /// The answer from what this handle has loaded: `Some(answer)` if the pack's own index is loaded (or a
    /// multi-pack-index places the object in it, with the bounds [`locate`](Self::locate) applies), `None` if
    /// that does not decide.
    fn in_loaded(&self, pack: PackId, id: &[u8]) -> Option<Result<Option<u64>, Error>> {
        let snap = self.snapshot();
        if let Some(p) = snap.pack(pack) {
            return Some(find_in(&p.idx, id));
        }
        for m in &snap.midx {
            let mut bad = None;
            if let Some(Location::Packed { pack: p, offset }) = m.lookup(id, &mut bad)
                && p == pack
            {
                return Some(Ok(Some(offset)));
            }
        }
        None
    }
}

/// `id`'s offset in `idx`: an entry whose offset cannot be right (past the pack's end, in its header) is a
/// typed error naming the index, never an offset.
fn find_in(idx: &PackIndex, id: &[u8]) -> Result<Option<u64>, Error> {
    idx.find(id).map_err(|problem| Error::CorruptIndex {
        path: idx.path().to_path_buf(),
        problem,
    })
}
