//! Prefix search and positional access in a multi-pack-index.

use std::ops::Range;

use super::MultiPackIndex;
use crate::oid::ObjectId;
use crate::prefix::{Prefix, sorted_range};

impl MultiPackIndex {
    /// The id at position `i` (in file order, which is id order in a valid file), if `i < len()`.
    #[inline]
    pub fn id_at(&self, i: u32) -> Option<&[u8]> {
        let h = self.kind.len();
        let s = (i as usize).checked_mul(h)?;
        self.ids().get(s..s.checked_add(h)?)
    }

    /// The positions of the objects whose ids start with `prefix` (see [`id_at`](Self::id_at)): empty if none or if `prefix` is of another hash kind. No allocation.
    pub(crate) fn prefix_range(&self, prefix: &Prefix) -> Range<u32> {
        if prefix.kind() != self.kind {
            return 0..0;
        }
        let b = usize::from(prefix.as_id().first_byte());
        let lo = if b == 0 { 0 } else { self.chunks.fanout[b - 1] };
        sorted_range(prefix, lo, self.chunks.fanout[b], |i| self.id_at(i))
    }

    /// The trailer: the checksum of everything before it. An incremental layer is named after it
    /// (`multi-pack-index-<checksum>.midx`).
    pub fn checksum(&self) -> ObjectId {
        let h = self.kind.len();
        let d: &[u8] = &self.data;
        d.len()
            .checked_sub(h)
            .and_then(|at| ObjectId::from_bytes(&d[at..]))
            .unwrap_or(ObjectId::null(self.kind))
    }
}
