//! Prefix search in a pack index: the entries whose ids start with a [`Prefix`].

use std::ops::Range;

use super::PackIndex;
use crate::prefix::{Prefix, sorted_range};

impl PackIndex {
    /// The positions (in sorted order, for [`id_at`](Self::id_at) and [`offset_at`](Self::offset_at)) of the
    /// entries whose ids start with `prefix`: empty if none, or if `prefix` is of another hash kind. Two binary
    /// searches inside the fan-out bucket; no allocation.
    ///
    /// ```
    /// use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
    /// use odb_index::testing::PackIndexExt;
    /// use odb_index::{HashKind, Prefix};
    ///
    /// let kind = HashKind::Sha1;
    /// let mut entries: Vec<Entry> = ["abcd01", "abcd02", "abce00"].iter().enumerate()
    ///     .map(|(i, h)| Entry { id: format!("{h:0<40}").parse().unwrap(), offset: 12 + i as u64, crc32: 0 })
    ///     .collect();
    /// entries.sort_by_key(|e| e.id);
    /// let idx = PackIndex::from_data(write_idx(2, kind, &entries, &kind.digest(b"p")).unwrap().into(),
    ///     "pack-x.idx".into(), kind).unwrap();
    /// assert_eq!(idx.prefix_range(&Prefix::from_hex("abcd", kind)?), 0..2);
    /// assert_eq!(idx.prefix_range(&Prefix::from_hex("abce0", kind)?), 2..3);
    /// assert!(idx.prefix_range(&Prefix::from_hex("abcf", kind)?).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub(crate) fn prefix_range(&self, prefix: &Prefix) -> Range<u32> {
        if prefix.kind() != self.kind {
            return 0..0;
        }
        let b = usize::from(prefix.as_id().first_byte());
        sorted_range(prefix, self.fanout[b], self.fanout[b + 1], |i| {
            self.id_at(i)
        })
    }
}
