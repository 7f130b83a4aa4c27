//! Batched lookups in a multi-pack-index: the binary search of [`MultiPackIndex::position`] stepped one probe at
//! a time, so that a group of searches (`Handle::locate_many`) has every id's next probe in flight at once, each
//! step prefetching the line the next one reads. Hints only: every answer still comes from the file's own search
//! (`find_entry_within`), so a step that warms the wrong line costs time, never an answer.

use super::{MultiPackIndex, OOFF_ROW_LEN, prefix};
use crate::prefetch::{prefetch, prefetch_at};

/// Where one id's stepped search stands: the bracket `[lo, hi)` still to search; `lo == hi` when done.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Step {
    lo: u32,
    hi: u32,
}

impl Step {
    /// Whether the search is over (found, or the bracket empty).
    #[inline(always)]
    pub(crate) fn done(&self) -> bool {
        self.lo >= self.hi
    }
}

impl MultiPackIndex {
    /// The search of `id` before its first probe (the fan-out bucket, from the table copied at open), with the
    /// first probe's line prefetched. Done at once for an id of another length or an empty bucket.
    #[inline]
    pub(crate) fn warm_start(&self, id: &[u8]) -> Step {
        if id.len() != self.kind.len() {
            return Step::default();
        }
        let first = usize::from(id[0]);
        let lo = if first == 0 {
            0
        } else {
            self.fanout[first - 1]
        };
        let s = Step {
            lo,
            hi: self.fanout[first],
        };
        self.prefetch_mid(s);
        s
    }

    /// One probe of `position`'s binary search for `id` (its line warm after the previous step), then a
    /// prefetch of the next probe's line; once found, of the entry's `OOFF` row (what `find_entry_within` reads
    /// next).
    #[inline]
    pub(crate) fn warm_step(&self, id: &[u8], s: Step) -> Step {
        if s.done() {
            return s;
        }
        let h = self.kind.len();
        let mid = s.lo + (s.hi - s.lo) / 2;
        let start = (mid as usize).saturating_mul(h);
        let Some(cand) = self.ids().get(start..start.saturating_add(h)) else {
            return Step::default();
        };
        let ord = match prefix(id).cmp(&prefix(cand)) {
            std::cmp::Ordering::Equal => id[8..].cmp(&cand[8..]),
            o => o,
        };
        let next = match ord {
            std::cmp::Ordering::Less => Step { lo: s.lo, hi: mid },
            std::cmp::Ordering::Greater => Step {
                lo: mid + 1,
                hi: s.hi,
            },
            std::cmp::Ordering::Equal => {
                prefetch_at(
                    &self.data,
                    self.ooff
                        .0
                        .saturating_add((mid as usize).saturating_mul(OOFF_ROW_LEN)),
                );
                return Step::default();
            }
        };
        self.prefetch_mid(next);
        next
    }

    /// Prefetch the id the next probe of `s` reads.
    #[inline(always)]
    fn prefetch_mid(&self, s: Step) {
        if s.done() {
            return;
        }
        let h = self.kind.len();
        let start = ((s.lo + (s.hi - s.lo) / 2) as usize).saturating_mul(h);
        if let Some(e) = self.ids().get(start..start.saturating_add(h)) {
            prefetch(e);
            if let Some(last) = e.last() {
                prefetch(last);
            }
        }
    }
}
