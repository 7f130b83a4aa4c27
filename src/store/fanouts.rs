//! A handle's own listings of watched fan-out directories ([`LooseMode::Watched`](super::LooseMode::Watched)):
//! what lets a miss answer loose objects without a system call while change events vouch for the listings.

use super::watch::Watch;
use crate::error::Error;
use crate::oid::ObjectId;
// plain: an `Arc` of values immutable once shared (a count, no protocol: slots and cells publish them).
use crate::sync::plain::Arc;

/// What a handle holds of one fan-out directory.
#[derive(Clone)]
enum Listed {
    /// Never looked at by this handle: the first miss in it probes (one `fstatat`), which is all a single
    /// miss needs; watching and listing the directory (two watches and a listing) pays off from the second.
    Unseen,
    /// Probed once, or its listing was dropped: the next miss watches and lists it.
    Probed,
    /// Listed at this version: its ids (sorted, zero-padded to 32 bytes).
    At(u64, Box<[[u8; 32]]>),
}

/// One handle's listings of watched fan-out directories: per objects directory, per fan-out byte, the version
/// of the directory it was listed at and its ids (sorted, zero-padded to 32 bytes). Kept across refreshes
/// while the change detector is the same.
#[derive(Default)]
pub(super) struct FanoutLists {
    /// The detector the versions are of.
    watch: Option<Arc<Watch>>,
    lists: Vec<Vec<Listed>>,
}

impl FanoutLists {
    /// Whether `id` is in directory `dir`'s listing. `None` when the listing is missing or stale and `fill` is
    /// false; with `fill`, lists the directory (watching it first). Without a watch on the directory (a
    /// fallback), a probe.
    #[inline(always)]
    pub(super) fn contains(
        &mut self,
        watch: &Arc<Watch>,
        dir: usize,
        db: &crate::loose::LooseDb,
        id: &ObjectId,
        fill: bool,
    ) -> Option<Result<bool, Error>> {
        let b = id.first_byte();
        if let Some(w) = &self.watch
            && Arc::ptr_eq(w, watch)
            && let Some(Listed::At(v, list)) = self.lists.get(dir).map(|l| &l[usize::from(b)])
            && watch.fanout_version(dir, b) == Some(*v)
        {
            return Some(Ok(list.binary_search(&crate::loose::key_of(id)).is_ok()));
        }
        if !fill {
            return None;
        }
        Some(self.fill(watch, dir, db, id))
    }

    #[cold]
    fn fill(
        &mut self,
        watch: &Arc<Watch>,
        dir: usize,
        db: &crate::loose::LooseDb,
        id: &ObjectId,
    ) -> Result<bool, Error> {
        if !self.watch.as_ref().is_some_and(|w| Arc::ptr_eq(w, watch)) {
            self.watch = Some(Arc::clone(watch));
            self.lists.clear();
        }
        if self.lists.len() <= dir {
            self.lists
                .resize_with(dir + 1, || vec![Listed::Unseen; 256]);
        }
        let b = id.first_byte();
        let slot = &mut self.lists[dir][usize::from(b)];
        if matches!(slot, Listed::Unseen) {
            *slot = Listed::Probed;
            return db.contains(id);
        }
        // The version is read before the directory is listed: an event after it makes the listing stale.
        let Some(v) = watch.watch_fanout(dir, db.path(), b) else {
            *slot = Listed::Probed;
            return db.contains(id);
        };
        let list = db.read_fanout(b)?;
        let found = list.binary_search(&crate::loose::key_of(id)).is_ok();
        *slot = Listed::At(v, list);
        Ok(found)
    }
}
