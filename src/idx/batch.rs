//! Batched lookups in one `.idx`: the first two probes of [`PackIndex::find_entry`]'s interpolation search, as
//! steps, so that a group of searches (`Handle::locate_many`) prefetches each step's line for every id of the
//! group before any of them waits for one (a third step that ran the whole search to prefetch the exact offset
//! doubled the instructions of a hit and was dropped: the offset is prefetched at the second probe). Hints only: every answer still comes from `find_entry`, so a step that
//! predicts a line wrongly costs time, never an answer.

use super::PackIndex;
use crate::prefetch::{prefetch, prefetch_at};

impl PackIndex {
    /// Step 1 for `id`: the first probe of the interpolation search (from the fan-out table copied at open, so
    /// nothing of the file is read), prefetched. `None`: `id`'s bucket is empty or `id` is not of this index's
    /// length (the search reads nothing then).
    #[inline]
    pub(crate) fn warm_first(&self, id: &[u8]) -> Option<u32> {
        if id.len() != self.kind.len() {
            return None;
        }
        let key = u64::from_be_bytes(*id.first_chunk::<8>()?);
        let b = usize::from(id[0]);
        let (l, r) = (self.fanout[b], self.fanout[b + 1]);
        if l >= r {
            return None;
        }
        // The prediction of `find_interpolated`: the 7 bytes after the first as a fraction of the bucket.
        let p = l.wrapping_add(((u128::from(key << 8) * u128::from(r - l)) >> 64) as u32);
        self.prefetch_id(p);
        Some(p)
    }

    /// Step 2: read the first probe `p` (warm after step 1) and prefetch the second, `find_interpolated`'s
    /// correction by the distance in id space at the bucket's density, with the offset of that entry (version 2;
    /// version 1 keeps it beside the id): the search ends there or a few entries away (a gallop from it), and
    /// the offsets of sixteen neighbours share a line. Only the offset when the first probe is `id`.
    #[inline]
    pub(crate) fn warm_second(&self, id: &[u8], p: u32) {
        let (Some(e), Some(k)) = (self.id_at(p), id.first_chunk::<8>()) else {
            return;
        };
        let Some(v) = e.first_chunk::<8>() else {
            return;
        };
        let (key, v) = (u64::from_be_bytes(*k), u64::from_be_bytes(*v));
        let b = usize::from(id[0]);
        let (mut l, mut r) = (self.fanout[b], self.fanout[b + 1]);
        match e.cmp(id) {
            std::cmp::Ordering::Equal => {
                self.prefetch_offset(p);
                return;
            }
            std::cmp::Ordering::Less => l = p + 1,
            std::cmp::Ordering::Greater => r = p,
        }
        if l >= r {
            return;
        }
        let n = self.fanout[b + 1] - self.fanout[b];
        let step = ((i128::from(key) - i128::from(v)) * i128::from(n)) >> 56;
        let q = (i128::from(p) + step).clamp(i128::from(l), i128::from(r) - 1) as u32;
        self.prefetch_id(q);
        self.prefetch_offset(q);
    }

    /// Prefetch the offset of entry `i` (version 2's offset table; nothing for version 1).
    #[inline(always)]
    fn prefetch_offset(&self, i: u32) {
        if self.version != 1 {
            prefetch_at(
                &self.data,
                self.offsets_at
                    .saturating_add((i as usize).saturating_mul(4)),
            );
        }
    }

    /// Prefetch the id of entry `i` (its first and last byte: an id may straddle two lines).
    #[inline(always)]
    fn prefetch_id(&self, i: u32) {
        if let Some(e) = self.id_at(i) {
            prefetch(e);
            if let Some(last) = e.last() {
                prefetch(last);
            }
        }
    }
}
