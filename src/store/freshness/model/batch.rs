//! B1 under loom (docs/FRESHNESS.md, section 2): one change check per batch. The real `Freshness::listing`,
//! `steady`, `changed` and `confirm` (`src/store/freshness.rs`) on loom's atomics, with the file system behind
//! the module's `Fs` seam; the model file system and store are `model.rs`'s (one pack directory under
//! a loom mutex, whose writes queue an event for each detector with events made on it, inside the lock; the
//! refresh as `Store::refresh_from` makes it): this file is a module inside that one, so the two share them.
//! The batch is stood in for by the steps of `Handle::locate_many` (`src/store/lookup/batch.rs`): search every id in the
//! listing the batch starts from, holding the misses; then one check for them all (`steady`, then `changed`); if
//! it is not quiet, refresh and search each held miss in the listing then current.
//!
//! The property, B1: an object renamed into place before the batch began is found by it, whatever a concurrent
//! refresh is doing. What would go wrong: a batch that answers its misses from a check made before it began (a
//! handle that keeps the answer of its last check, "one check per handle" instead of "per batch"), or from none
//! ("a settled miss is certain"): the pack's event is then never asked about, and the misses are false.
//! `witness_batch_check_before_the_batch` (loom-tests/main.rs) runs that mutant and must find the false miss.

use std::path::Path;

use super::super::{Detector, Tally};
use super::{Listing, ModelFs, Store};
use crate::store::watch::Check;

impl Store {
    /// A batch asking for the objects of `ids` (pack numbers), from listing `l`: every search first, the misses
    /// held; then the batch's one check, `check` (`None`: made now, after the searches, as `locate_many` makes
    /// it; `Some`: an answer of `steady` taken earlier, the mutant). Which ids it found.
    fn batch(&self, l: &Listing, ids: &[u32], check: Option<Check>) -> Vec<bool> {
        let mut found: Vec<bool> = ids.iter().map(|n| l.packs.contains(n)).collect();
        if found.iter().all(|&f| f) {
            return found;
        }
        let quiet = check.unwrap_or_else(|| l.fresh.steady()) == Check::Quiet;
        if quiet || !l.fresh.changed(&Tally::default(), 1, &self.fs) {
            return found;
        }
        self.refresh();
        let now = self.current();
        for (f, n) in found.iter_mut().zip(ids) {
            *f = *f || now.packs.contains(n);
        }
        found
    }
}

/// One execution of B1: a store listed pack 0 with `detector`; a writer renames pack 1 into place while another
/// thread refreshes; after the write returned, a batch asks for packs 0 and 1 from the listing then current.
/// `early`: the mutant, whose batch uses an answer of `steady` taken before the write (before the batch began).
fn batch_after_a_write(objects: &Path, detector: Detector, early: bool) {
    let fs = ModelFs::new(objects, &[0]);
    let store = std::sync::Arc::new(Store::open(fs, detector));
    let before = early.then(|| store.current().fresh.steady());
    let refresher = super::write_pack_during_a_refresh(&store);
    // The batch begins after the write returned.
    let l = store.current();
    let found = store.batch(&l, &[0, 1], before);
    refresher.join().unwrap();
    // Asserted after every thread joined (a panic with loom threads alive may abort the test binary).
    assert!(
        found == [true, true],
        "false miss: pack 1, renamed into place before the batch began, missed (found {found:?}, listing \
         token {})",
        l.fresh.token()
    );
}

/// B1 with events (inotify): the batch's one `ioctl`, made after its searches.
pub fn events_batch_finds_a_pack_written_before_it(objects: &Path) {
    batch_after_a_write(objects, Detector::Events, false);
}

/// B1 with the `stat` detector: the batch's one `stat` of the pack directory.
pub fn stat_batch_finds_a_pack_written_before_it(objects: &Path) {
    batch_after_a_write(objects, Detector::Stat, false);
}

/// The mutant: the batch answers its misses from a check made before it began. loom must find the false miss.
pub fn events_batch_with_an_earlier_check_misses(objects: &Path) {
    batch_after_a_write(objects, Detector::Events, true);
}
