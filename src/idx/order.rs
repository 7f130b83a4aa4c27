//! Whether a miss in a `.idx` is certain: its fan-out bucket checked in order once ([`crate::fanout`]), and for
//! a bucket out of order (a file that lies; git's search misses there) a linear scan that finds what the file
//! lists.

use super::{Found, IdxProblem, PackIndex};
use crate::fanout::{self, BucketFault, Confirmed, Ids};

impl PackIndex {
    /// The ids as [`fanout`] reads them.
    fn fanout_ids(&self) -> Ids<'_> {
        Ids {
            bytes: self.data.get(self.t.ids_at..).unwrap_or(&[]),
            stride: self.t.stride,
            len: self.kind.len(),
            count: self.count,
        }
    }

    fn bucket_problem(&self, fault: BucketFault) -> IdxProblem {
        match fault {
            BucketFault::OutOfOrder(at) => IdxProblem::UnsortedIds { at },
            BucketFault::NotInBucket { at, first_byte } => IdxProblem::IdOutsideBucket {
                at,
                // The bucket of position `at`: the first whose end is past it.
                bucket: self.fanout[1..].partition_point(|&end| end <= at).min(255) as u8,
                first_byte,
            },
        }
    }

    /// Check fan-out bucket `first` ([`fanout::check_bucket`]): then a search in it cannot miss an id the file
    /// lists. O(ids in the bucket).
    pub(crate) fn check_bucket(&self, first: u8) -> Result<(), IdxProblem> {
        let b = usize::from(first);
        let (start, end) = (self.fanout[b] as usize, self.fanout[b + 1] as usize);
        fanout::check_bucket(self.fanout_ids(), first, start, end)
            .map_err(|f| self.bucket_problem(f))
    }

    /// The positions at which this index lists `id`, when it lists it more than once: a file that lies (git's
    /// writers never list an id twice; an index written without `--strict` from a pack that holds an object
    /// twice may, and so may a corrupted one, where one of the entries is another object's). `None` in the
    /// common case: `id`'s fan-out bucket is in order (checked the first time, O(bucket), as a miss checks it;
    /// then one Relaxed load), so no id of it is listed twice. A reader that reads the object at a position of
    /// such an id reads the one whose contents hash to it (the adapter does); git reads whichever its binary
    /// search finds, another object's contents for one of the two.
    ///
    /// ```
    /// use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
    /// use odb_index::testing::PackIndexExt; // `from_data`: an index from bytes
    /// use odb_index::HashKind;
    ///
    /// let kind = HashKind::Sha1;
    /// let (a, b) = (kind.digest(b"a"), kind.digest(b"b"));
    /// let entries = [Entry { id: a, offset: 12, crc32: 0 }, Entry { id: b, offset: 40, crc32: 0 }];
    /// let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
    /// let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
    /// assert_eq!(idx.repeated_entries(a.as_bytes()), None);
    /// // The same file with `b`'s id written over by `a`'s (and its checksum made again): `a` at both
    /// // positions, one of them `b`'s entry.
    /// let mut bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
    /// let ids = 8 + 256 * 4; // after the header and the fan-out table
    /// for at in [ids, ids + 20] {
    ///     bytes[at..at + 20].copy_from_slice(a.as_bytes());
    /// }
    /// let n = bytes.len() - 20;
    /// let sum = kind.digest(&bytes[..n]);
    /// bytes[n..].copy_from_slice(sum.as_bytes());
    /// let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
    /// assert_eq!(idx.repeated_entries(a.as_bytes()), Some(vec![0, 1]));
    /// ```
    pub fn repeated_entries(&self, id: &[u8]) -> Option<Vec<u32>> {
        let &first = id.first()?;
        if id.len() != self.kind.len()
            || matches!(
                self.buckets.confirm(first, || self.check_bucket(first)),
                Confirmed::Certain
            )
        {
            return None;
        }
        self.repeated_entries_slow(id)
    }

    #[cold]
    #[inline(never)]
    fn repeated_entries_slow(&self, id: &[u8]) -> Option<Vec<u32>> {
        // Every position listing `id`: the search's, then its neighbours while they list it too (a sorted
        // file keeps them together); in a file out of order, a scan of the whole bucket as well.
        let mut at: Vec<u32> = self
            .bucket_range(id[0])
            .filter(|&i| self.id_at(i) == Some(id))
            .collect();
        if let Some(i) = self.search(id, None).or_else(|| self.position_binary(id)) {
            at.push(i);
            let mut j = i;
            while j > 0 && self.id_at(j - 1) == Some(id) {
                j -= 1;
                at.push(j);
            }
            let mut j = i + 1;
            while self.id_at(j) == Some(id) {
                at.push(j);
                j += 1;
            }
        }
        at.sort_unstable();
        at.dedup();
        (at.len() > 1).then_some(at)
    }

    /// Every bucket checked (for [`verify`](Self::verify)): the first problem in file order.
    pub(super) fn check_order(&self) -> Result<(), IdxProblem> {
        fanout::check_all(self.fanout_ids(), |b| self.fanout[usize::from(b) + 1])
            .map_err(|f| self.bucket_problem(f))
    }

    /// Whether every fan-out bucket was checked and found in order (then every miss is certain).
    #[inline(always)]
    pub(crate) fn all_in_order(&self) -> bool {
        self.buckets.all_in_order()
    }

    /// A search for `id` ([`find_entry`](Self::find_entry)) missed: the miss is certain if `id`'s bucket is in
    /// order, which is checked the first time (O(bucket)); after that a miss there costs one Relaxed load. In
    /// a bucket out of order, the answer of a linear scan of the whole file (O(ids): an id out of order may
    /// even sit in another bucket; not in a file of more than 16 Mi ids, answered as git's search answers), so that an
    /// object the file lists is found where git's search misses it.
    #[inline]
    pub(crate) fn confirm_miss(&self, id: &[u8]) -> Found {
        match id.first() {
            Some(&first) if !self.buckets.in_order(first) => self.unchecked_bucket_miss(id, first),
            _ => Found::Missing,
        }
    }

    #[cold]
    #[inline(never)]
    fn unchecked_bucket_miss(&self, id: &[u8], first: u8) -> Found {
        if id.len() != self.kind.len() {
            return Found::Missing;
        }
        if let Confirmed::Certain = self.buckets.confirm(first, || self.check_bucket(first)) {
            return Found::Missing;
        }
        // A file claiming more ids than this (a sparse file can claim 2^31: 40 GB of holes) is not scanned: the
        // miss is answered as git's search answers it, never after minutes of reading.
        if self.count > MAX_LINEAR_SCAN {
            return Found::Missing;
        }
        let Some(i) = fanout::position_linear(self.fanout_ids(), id) else {
            return Found::Missing;
        };
        match self.checked_offset_at(i) {
            Some(Ok(offset)) => Found::At(offset),
            _ => Found::Bad(i),
        }
    }

    /// [`find_entry`](Self::find_entry), its miss confirmed ([`confirm_miss`](Self::confirm_miss)).
    pub(crate) fn find_entry_confirmed(&self, id: &[u8]) -> Found {
        match self.find_entry(id, None) {
            Found::Missing => self.confirm_miss(id),
            found => found,
        }
    }

    /// What is wrong in each bucket found out of order so far (by a miss there).
    pub(crate) fn bucket_problems(&self) -> Vec<IdxProblem> {
        self.buckets
            .out_of_order_buckets()
            .filter_map(|b| self.check_bucket(b).err())
            .collect()
    }

    /// Call `f` with every id in file order, checking the buckets' order on the way (one compare per id) and
    /// marking those found in order, as [`confirm_miss`](Self::confirm_miss) would after checking them
    /// ([`fanout::for_each_checking_order`]). For a caller that reads every id anyway (the store's miss filter).
    pub(crate) fn for_each_id_checking_order(&self, f: impl FnMut(&[u8])) {
        fanout::for_each_checking_order(
            self.fanout_ids(),
            |b| self.fanout[usize::from(b) + 1],
            &self.buckets,
            f,
        );
    }
}

/// The most ids a miss in a bucket out of order scans linearly (16 Mi ids: at most 320 MB of SHA-1 ids, a
/// fraction of a second); a larger file's miss there is answered as git's binary search answers it.
const MAX_LINEAR_SCAN: u32 = 1 << 24;
