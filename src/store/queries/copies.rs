//! Another copy of an object ([`Handle::locate_other`]): where a reader goes when the copy a lookup answered
//! cannot be read (a corrupt pack entry), as git's `mark_bad_packed_object` and the retry after it do (git's
//! t5303): the other packs that list the object, in the listing's order, then the loose directories.

use crate::error::Error;
use crate::oid::ObjectId;
use crate::store::{Handle, Location};

impl Handle {
    /// A location of `id` that is none of `exclude` (copies the caller found unreadable), or `None` if the
    /// repository holds no other copy: every pack whose index lists `id` (its own `.idx`, also for a pack a
    /// multi-pack-index covers, which lists a duplicated object under one pack only), in the listing's order,
    /// then every loose directory, asked of the file system (a cached loose listing is not trusted here).
    ///
    /// A pack whose index cannot be loaded, or a loose directory that cannot be probed, is passed over: this is
    /// a fallback after a failed read, and the caller keeps the first error to report if no copy is left. When
    /// the listing holds no other copy and the refresh mode and change check say the pack directories changed,
    /// they are listed again first, as after a miss.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", true);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 1, "main");
    /// # let hex = odb_index_testkit::git(repo.path(), &["rev-parse", "main"]);
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(repo.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let id = hex.trim().parse()?;
    /// let first = handle.locate(&id)?.expect("packed");
    /// // Say its pack entry is corrupt: there is no other copy.
    /// assert_eq!(handle.locate_other(&id, &[first])?, None);
    /// // A second pack with the object: the other copy.
    /// odb_index_testkit::git_stdin(repo.path(), &["pack-objects", "-q", "objects/pack/pack"], hex.as_bytes());
    /// let other = handle.locate_other(&id, &[first])?.expect("in the second pack");
    /// assert!(matches!(other, Location::Packed { .. }) && other != first);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: [`Error::WrongIdHashKind`].
    pub fn locate_other(
        &mut self,
        id: &ObjectId,
        exclude: &[Location],
    ) -> Result<Option<Location>, Error> {
        self.check_kind(id)?;
        if let Some(found) = self.other_in_listing(id, exclude) {
            return Ok(Some(found));
        }
        // As a miss does: a pack written since the listing (git's retry after `mark_bad_packed_object` goes
        // through `reprepare_packed_git` the same way).
        if self.should_refresh() {
            self.refresh_after_miss()?;
            return Ok(self.other_in_listing(id, exclude));
        }
        Ok(None)
    }

    /// [`locate_other`](Self::locate_other) in this handle's listing as it is.
    fn other_in_listing(&mut self, id: &ObjectId, exclude: &[Location]) -> Option<Location> {
        let packs: Vec<_> = self.listing().packs.iter().map(|p| p.id).collect();
        for pack in packs {
            if exclude
                .iter()
                .any(|l| matches!(l, Location::Packed { pack: p, .. } if *p == pack))
            {
                continue;
            }
            if let Ok(Some(offset)) = self.locate_in_pack(pack, id) {
                return Some(Location::Packed { pack, offset });
            }
        }
        let listing = self.listing();
        listing
            .loose
            .iter()
            .zip(listing.dir_ids.iter())
            .map(|(source, &dir)| (source, Location::Loose { dir }))
            .find(|(source, loc)| !exclude.contains(loc) && source.probe(id).unwrap_or(false))
            .map(|(_, loc)| loc)
    }
}
