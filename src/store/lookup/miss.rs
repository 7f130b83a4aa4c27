//! The answer for an id a lookup found nowhere (in the packs, the loose objects, and after the change check):
//! `None`, as git answers, or an error when the search could not be complete. An entry for the id whose offset
//! cannot be right is the answer first (a typed error naming the index, never a location); then a loose probe
//! that failed; then, as [`IncompleteMode`] says, indices that failed to load and directories that could not be
//! read. Under either mode a failure that may pass (a failed system call) is never taken for a miss
//! (docs/RELIABILITY.md, "Faults").

use std::path::PathBuf;

use super::handle::Handle;
use crate::error::Error;
use crate::store::Location;
use crate::store::options::IncompleteMode;
use crate::sync::plain::Arc;

impl Handle {
    /// The answer for `bytes` found nowhere.
    pub(in crate::store) fn not_found(&mut self, bytes: &[u8]) -> Result<Option<Location>, Error> {
        // Found nowhere. An entry for it whose offset cannot be right is the answer (a typed error naming the
        // index, never a location); then indices that failed to load, directories that could not be read.
        if self
            .snap
            .bad_entry
            .as_ref()
            .is_some_and(|(bad_id, _)| **bad_id == *bytes)
            && let Some((_, e)) = self.snap.bad_entry.take()
        {
            return Err(e);
        }
        // A loose probe that failed is never a miss under `Error`; under `Miss` neither, once it may pass (the
        // fault policy: a failed system call is no evidence that the object is gone).
        if !self.snap.loose_failed.is_empty()
            && (self.store.options.incomplete == IncompleteMode::Error
                || self
                    .snap
                    .loose_failed
                    .iter()
                    .any(|(_, e)| e.may_be_transient()))
        {
            let mut failed = self.incomplete_list();
            failed.append(&mut self.snap.loose_failed);
            return Err(Error::Incomplete { failed });
        }
        self.miss()
    }

    /// The answer for an object found nowhere: `Ok(None)`, or [`Error::Incomplete`] if some index failed to load
    /// (or a directory could not be read) and the store was opened with [`IncompleteMode::Error`].
    pub(in crate::store) fn miss<T>(&self) -> Result<Option<T>, Error> {
        self.check_complete()?;
        Ok(None)
    }

    /// [`Error::Incomplete`] if some index this handle has seen failed to load, or some pack directory or
    /// alternate could not be read, and the store was opened with [`IncompleteMode::Error`]; under
    /// [`IncompleteMode::Miss`] too when one of those failures was a system call that may pass
    /// ([`Error::is_transient`]: the fault policy, docs/RELIABILITY.md "Faults"): only a file that is there
    /// but cannot be used (corrupt, of the wrong kind) makes git's `missing`.
    pub(in crate::store) fn check_complete(&self) -> Result<(), Error> {
        let certain = self.snap.failed.iter().all(|f| self.gone_is_absent(f))
            && self.view.map().meta().unreadable.is_empty();
        if certain
            || (self.store.options.incomplete == IncompleteMode::Miss && !self.transient_in_view())
        {
            Ok(())
        } else {
            Err(Error::Incomplete {
                failed: self.incomplete_list(),
            })
        }
    }

    /// Whether failure `f` (an index that did not load) leaves a miss certain: its file vanished since the listing
    /// (git replaced or removed it, as `repack` does) and misses list the repository again
    /// (`RefreshMode::OnMiss`), so the objects it held are found where git moved them, or are gone. git never
    /// reports such a file either. Under `RefreshMode::Never` nothing is listed again: it makes a miss
    /// [`Error::Incomplete`].
    fn gone_is_absent(&self, f: &(PathBuf, Arc<Error>)) -> bool {
        self.shape.refresh_on_miss() && f.1.is_vanished()
    }

    /// The index files that failed to load (as this handle has seen them), then the directories and files of
    /// the listing that could not be read.
    fn incomplete_list(&self) -> Vec<(PathBuf, Arc<Error>)> {
        let mut failed: Vec<_> = self
            .snap
            .failed
            .iter()
            .filter(|f| !self.gone_is_absent(f))
            .cloned()
            .collect();
        failed.extend(self.view.map().meta().unreadable.iter().cloned());
        failed
    }
}
