//! Listing the repository again after a miss: because a pack directory changed or an index vanished
//! ([`refresh_after_miss`](Handle::refresh_after_miss), [`load_all_relisted`](Handle::load_all_relisted)), or
//! because a system call failed on the way ([`relist_after_fault`](Handle::relist_after_fault)).
//!
//! The fault policy on a lookup's path (docs/RELIABILITY.md, "Faults: an error is never evidence that an object
//! is gone"): a failed system call that may pass (EIO, EMFILE, ENOMEM, EINTR, EACCES, ...: anything but "not
//! found" or "not a directory", [`Error::may_be_transient`]) never makes a miss. A lookup that found nothing
//! while such a failure was on its path (an index that failed to load, a directory that could not be read or
//! opened, a loose probe that failed) lists the repository again once, as git re-prepares its packs, and
//! searches again; the failures are not carried to the new listing (`successor.rs`), so each is tried again.
//! What still fails is the answer: [`Error::Incomplete`] naming the files (under the default
//! [`IncompleteMode::Error`](super::IncompleteMode::Error)), never "missing". Under
//! [`RefreshMode::Never`](super::RefreshMode::Never) nothing is listed again: the failure is the answer at once.

use super::freshness::MAX_RELISTS;
use super::lookup::handle::Handle;
use crate::error::Error;
use crate::store::hooks::{self, Point};
use crate::sync;

impl Handle {
    /// Re-list the pack directories after a miss ([`should_refresh`](Self::should_refresh) said so) and move
    /// this handle to the new listing if it changed.
    pub(super) fn refresh_after_miss(&mut self) -> Result<(), Error> {
        hooks::at(Point::BeforeRelist);
        // A file that vanished before it was loaded replaces the map whatever the listing says (its failure is
        // not carried over), so this handle leaves the snapshot that recorded it.
        self.relist(false, self.snap.vanished)?;
        hooks::at(Point::AfterRelist);
        Ok(())
    }

    /// Load every index of a listing none of whose files vanished before it was loaded, for prefix lookups and
    /// iteration (which need every index): while [`should_refresh`](Self::should_refresh) says an index vanished
    /// since its listing (or a pack directory changed), list the pack directories again and load the new
    /// listing. A second pass can be needed under maintenance: git may replace a pack of the new listing before
    /// it is loaded (`repack` renames its `.tmp-<pid>-pack-*` files away). At most [`MAX_RELISTS`] passes, each
    /// of which needs git to have replaced a pack meanwhile; what still failed to load is then reported by
    /// [`check_complete`](Self::check_complete).
    ///
    /// Returns whether the handle is on another listing than at the call: one this call made, or one another
    /// thread's refresh had already put in place (the first `load_all` moves to it from a retired map). The
    /// callers list the packs they have not seen when it is: "not re-listed here" does not mean "no new pack",
    /// because that other refresh drained the events of the pack git wrote, and its listing's token is current.
    pub(super) fn load_all_relisted(&mut self) -> Result<bool, Error> {
        let before = sync::Arc::clone(self.view.map());
        self.load_all();
        let mut relists = 0;
        while relists < MAX_RELISTS && self.should_refresh() {
            self.refresh_after_miss()?;
            relists += 1;
            self.load_all();
        }
        // A failed system call is no evidence of a miss: list again once (`relist.rs`).
        if self.relist_after_fault()? {
            self.load_all();
        }
        Ok(!sync::Arc::ptr_eq(&before, self.view.map()))
    }

    /// Whether this handle's last search met a failed system call that may pass: an index of its view that
    /// failed to load, a directory of its listing that could not be read, or a loose probe that failed.
    pub(super) fn fault_seen(&self) -> bool {
        !self.snap.loose_failed.is_empty() || self.failed_in_view(Error::may_be_transient)
    }

    /// Whether an index of this handle's view failed to load, or a directory of its listing could not be read, by
    /// a failed system call of the kinds that pass ([`Error::is_transient`]): a miss then is an error under
    /// `IncompleteMode::Miss` too.
    pub(super) fn transient_in_view(&self) -> bool {
        self.failed_in_view(Error::is_transient)
    }

    /// Whether an index of this handle's view failed to load, or a directory of its listing could not be read,
    /// with an error that `which` picks.
    fn failed_in_view(&self, which: fn(&Error) -> bool) -> bool {
        let meta = self.view.map().meta();
        self.snap.failed.iter().any(|(_, e)| which(e))
            || meta.unreadable.iter().any(|(_, e)| which(e))
    }

    /// After a search that found nothing: if [`fault_seen`](Self::fault_seen) and misses re-list
    /// (`RefreshMode::OnMiss`), list the repository again (the map is replaced whatever the listing says, so
    /// nothing that failed is carried over) and move this handle to the new listing. Whether it did: the caller
    /// then searches once more.
    pub(super) fn relist_after_fault(&mut self) -> Result<bool, Error> {
        if !self.shape.refresh_on_miss() || !self.fault_seen() {
            return Ok(false);
        }
        // `vanished`: never confirm the old listing, so its recorded failures go with it.
        self.relist(false, true)?;
        Ok(true)
    }

    /// List the repository again from this handle's map ([`Store::refresh_from`](crate::store::Store)'s `force`
    /// and `vanished`) and move this handle to the map that left current, if it is another.
    pub(in crate::store) fn relist(&mut self, force: bool, vanished: bool) -> Result<(), Error> {
        let seen = sync::Arc::clone(self.view.map());
        let now = self.store.refresh_from(&seen, force, vanished)?.map;
        if !sync::Arc::ptr_eq(&seen, &now) {
            self.move_to(now);
        }
        Ok(())
    }
}
