//! The lookups of a [`MultiPackIndex`], which rely on the checks made when it was opened (`layout.rs`): an id's
//! position (the `.idx`'s search), one entry's pack and offset within the bounds a caller gives, what is wrong
//! with an entry that is not answered, fanout buckets, and iteration.

use super::*;

/// What [`MultiPackIndex::find_entry`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MidxFound {
    /// The file does not list the id.
    Missing,
    /// The object is in the pack of this pack int id, at this offset (within the bounds the search was given,
    /// [`MultiPackIndex::entry`]).
    At(u32, u64),
    /// The file lists the id at this position, with an entry that cannot be right
    /// ([`MultiPackIndex::entry_problem`] says why).
    Bad(u32),
}

/// One object's entry as the file records it: its pack int id and its offset field (a 32-bit offset, or a
/// reference into `LOFF`).
#[derive(Clone, Copy)]
struct RawEntry {
    pack: u32,
    off: u32,
}

/// The bound ([`MultiPackIndex::entry`]) of a pack whose length is not known: every offset past the pack header.
/// `offset.wrapping_sub(PACK_HEADER_LEN) < UNBOUNDED` exactly when `offset >= PACK_HEADER_LEN` (an offset inside
/// the header wraps to one of the 12 largest values).
const UNBOUNDED: u64 = u64::MAX - (PACK_HEADER_LEN - 1);

impl MultiPackIndex {
    /// The raw entry of the object at position `i`, if `i < len()`.
    #[inline]
    fn raw_entry(&self, i: u32) -> Option<RawEntry> {
        let at = self
            .chunks
            .ooff
            .0
            .checked_add((i as usize).checked_mul(OOFF_ROW_LEN)?)?;
        if at >= self.chunks.ooff.1 {
            return None;
        }
        Some(RawEntry {
            pack: be32(&self.data, at)?,
            off: be32(&self.data, at.checked_add(4)?)?,
        })
    }

    /// Find `id` (its raw bytes, [`HashKind::len`] of them): the pack int id (an index into
    /// [`pack_names`](Self::pack_names)) and the offset of the object in that pack; `Ok(None)` if the file does
    /// not list it; `Err` if it lists it with a pack int id or an offset that cannot be right (never a wrong
    /// location). Ids of another length are never found. Does not allocate.
    ///
    /// The store's lookup (`find_entry`), every pack unbounded above (this type does not know the packs'
    /// lengths), and what is wrong as `entry_problem` says.
    #[inline]
    pub fn find(&self, id: &[u8]) -> Result<Option<(u32, u64)>, MidxProblem> {
        self.explain(self.find_entry(id, |p| self.bound_in(&[], p), None), &[])
    }

    /// `found` as [`find`](Self::find) answers it, a bad entry explained with the packs' lengths `pack_lens`
    /// (as [`offset_bounds`](Self::offset_bounds) takes them).
    pub(crate) fn explain(
        &self,
        found: MidxFound,
        pack_lens: &[u64],
    ) -> Result<Option<(u32, u64)>, MidxProblem> {
        match found {
            MidxFound::At(pack, offset) => Ok(Some((pack, offset))),
            MidxFound::Missing => Ok(None),
            // `entry` and `entry_problem` make the same checks: never `None` for a bad entry.
            MidxFound::Bad(i) => self.entry_problem(i, pack_lens).map_or(Ok(None), Err),
        }
    }

    /// The lookup: [`search`](Self::search) for `id` (resumed from `from`, steps of this file's search a batch
    /// ran ahead, `store/lookup/batch.rs`, if given), then [`entry`](Self::entry) of the position found, within
    /// `bound`. A bad entry is only its position ([`entry_problem`](Self::entry_problem) says what is wrong with
    /// it), so nothing large is built or returned on a hit.
    #[inline(always)]
    pub(crate) fn find_entry(
        &self,
        id: &[u8],
        bound: impl Fn(u32) -> Option<u64>,
        from: Option<Probe>,
    ) -> MidxFound {
        let Some(i) = self.search(id, from) else {
            return MidxFound::Missing;
        };
        match self.entry(i, bound) {
            Some((pack, offset)) => MidxFound::At(pack, offset),
            None => MidxFound::Bad(i),
        }
    }

    /// The entry of position `i` (pack int id, offset) if a lookup answers it: its id not repeated by a
    /// neighbour, and `bound(pack)` is some `b` (one per pack the file names: also the pack int id's range
    /// check) with `PACK_HEADER_LEN <= offset < PACK_HEADER_LEN + b`. `b` is [`offset_bound`](Self::offset_bound)
    /// of the pack's length (before its trailing checksum), or every offset past the header for a pack whose
    /// length is not known; [`offset_bounds`](Self::offset_bounds) makes them. `None` otherwise
    /// ([`entry_problem`](Self::entry_problem) says why). The one position function of the lookups.
    #[inline(always)]
    pub(crate) fn entry(&self, i: u32, bound: impl Fn(u32) -> Option<u64>) -> Option<(u32, u64)> {
        if self.repeated_at(i) {
            return None;
        }
        let RawEntry { pack, off } = self.raw_entry(i)?;
        let bound = bound(pack)?;
        let offset = self.offset_of(off)?;
        // Both bounds in one compare: an offset inside the header wraps to a huge value.
        (offset.wrapping_sub(PACK_HEADER_LEN) < bound).then_some((pack, offset))
    }

    /// The bounds [`entry`](Self::entry) takes, from the packs' lengths: one per pack the file names,
    /// [`offset_bound`](Self::offset_bound) of its length, every offset past the header beyond `pack_lens`.
    pub(crate) fn offset_bounds(&self, pack_lens: &[u64]) -> Box<[u64]> {
        (0..self.chunks.pack_names.len() as u32)
            .filter_map(|p| self.bound_in(pack_lens, p))
            .collect()
    }

    /// Pack `p`'s bound of [`offset_bounds`](Self::offset_bounds)`(pack_lens)`; `None` if the file names no
    /// pack `p`.
    #[inline(always)]
    pub(super) fn bound_in(&self, pack_lens: &[u64], p: u32) -> Option<u64> {
        if p as usize >= self.chunks.pack_names.len() {
            return None;
        }
        Some(
            pack_lens
                .get(p as usize)
                .map_or(UNBOUNDED, |&len| self.offset_bound(len)),
        )
    }

    /// The bound of one pack of `len` bytes: the number of usable offsets past the pack header and before its
    /// trailing checksum, `len - hash length - PACK_HEADER_LEN` (saturating).
    pub(crate) fn offset_bound(&self, len: u64) -> u64 {
        len.saturating_sub(self.kind.len() as u64)
            .saturating_sub(PACK_HEADER_LEN)
    }

    /// Whether the fast check of [`entry`](Self::entry) (the bounds of `pack_lens`) and the explaining one of
    /// [`entry_problem`](Self::entry_problem) agree on `id`'s lookup: a hit has no problem, a bad entry has one,
    /// a miss is a miss of the search. The property tests and the fuzz target check it on any file.
    #[cfg(any(test, fuzzing, feature = "test-support"))]
    pub(crate) fn checks_agree(&self, id: &[u8], pack_lens: &[u64]) -> bool {
        let bounds = self.offset_bounds(pack_lens);
        let found = self.find_entry(id, |p| bounds.get(p as usize).copied(), None);
        match (found, self.search(id, None)) {
            (MidxFound::Missing, None) => true,
            (MidxFound::At(..), Some(i)) => self.entry_problem(i, pack_lens).is_none(),
            (MidxFound::Bad(b), Some(i)) => b == i && self.entry_problem(i, pack_lens).is_some(),
            _ => false,
        }
    }

    /// The pack int id of the entry at position `i`, as written (not checked against the packs).
    pub(crate) fn pack_int_id_at(&self, i: u32) -> Option<u32> {
        Some(self.raw_entry(i)?.pack)
    }

    /// Check the ids of one fanout bucket (those whose first byte is `first`), as [`fanout::check_bucket`] does
    /// for a `.idx` too: then a binary search in the bucket cannot miss an id the file lists. `Err` names the
    /// first position that breaks it. O(ids in the bucket); [`verify`](Self::verify) checks every bucket (and
    /// more). For a caller that must trust a miss without scanning the whole file at open.
    pub(crate) fn check_bucket(&self, first: u8) -> Result<(), MidxProblem> {
        let b = usize::from(first);
        let start = if b == 0 {
            0
        } else {
            self.chunks.fanout[b - 1] as usize
        };
        fanout::check_bucket(
            self.fanout_ids(),
            first,
            start,
            self.chunks.fanout[b] as usize,
        )
        .map_err(bucket_problem)
    }

    /// The ids as [`fanout`] reads them.
    pub(super) fn fanout_ids(&self) -> fanout::Ids<'_> {
        fanout::Ids {
            bytes: self.ids(),
            stride: self.kind.len(),
            len: self.kind.len(),
            count: self.len(),
        }
    }

    /// What is wrong with the entry of the object at position `i` (with the packs' lengths `pack_lens`, as
    /// [`offset_bounds`](Self::offset_bounds) takes them), if anything: its id repeated by a neighbour
    /// ([`MidxProblem::IdsOutOfOrder`], naming the second of the two), a pack int id that names no pack, a
    /// large-offset reference past `LOFF`, an offset inside the pack header or at or past its pack's trailing
    /// checksum. `None` exactly where [`entry`](Self::entry), given the same packs' lengths, answers.
    pub(crate) fn entry_problem(&self, i: u32, pack_lens: &[u64]) -> Option<MidxProblem> {
        if self.repeated_at(i) {
            let before = i.checked_sub(1).and_then(|j| self.id_at(j)) == self.id_at(i);
            return Some(MidxProblem::IdsOutOfOrder {
                object: if before { i } else { i + 1 },
            });
        }
        let RawEntry { pack, off } = self.raw_entry(i)?;
        let packs = self.chunks.pack_names.len() as u32; // at most the u32 of the header
        if pack >= packs {
            return Some(MidxProblem::PackIdOutOfRange {
                object: i,
                pack,
                packs,
            });
        }
        // git's `nth_midxed_offset`: without a LOFF chunk, the 32-bit value is the offset, flag and all.
        if let Some((start, end)) = self.chunks.loff
            && off & LARGE_OFFSET_BIT != 0
        {
            let row = off & !LARGE_OFFSET_BIT;
            let rows = ((end - start) / LOFF_ROW_LEN) as u64;
            if u64::from(row) >= rows {
                return Some(MidxProblem::LargeOffsetOutOfRange {
                    object: i,
                    row,
                    rows,
                });
            }
        }
        let offset = self.offset_of(off)?;
        if offset < PACK_HEADER_LEN {
            return Some(MidxProblem::OffsetInPackHeader {
                object: i,
                pack,
                offset,
            });
        }
        match pack_lens.get(pack as usize) {
            Some(&pack_len) if offset >= pack_len.saturating_sub(self.kind.len() as u64) => {
                Some(MidxProblem::OffsetPastPackEnd {
                    object: i,
                    pack,
                    offset,
                    pack_len,
                })
            }
            _ => None,
        }
    }

    /// The positions of fanout bucket `first` (the ids whose first byte is `first`, if the file is right).
    pub(crate) fn bucket_range(&self, first: u8) -> std::ops::Range<u32> {
        let b = usize::from(first);
        let start = if b == 0 { 0 } else { self.chunks.fanout[b - 1] };
        start..self.chunks.fanout[b].max(start)
    }

    /// Whether a neighbour of position `i` holds its id too: the table repeats an id, which a file in order
    /// never does (each object once), so neither entry can be trusted to be that id's. On a hit it costs a
    /// compare of each neighbour's first 8 bytes (the rest only if those are equal).
    #[inline(always)]
    fn repeated_at(&self, i: u32) -> bool {
        let h = self.kind.len();
        let ids = self.ids();
        let at = i as usize * h;
        let Some(id) = ids.get(at..at + h) else {
            return false;
        };
        let key = head(id);
        let same = |s: usize| ids.get(s..s + h).is_some_and(|c| head(c) == key && c == id);
        (at >= h && same(at - h)) || same(at + h)
    }

    /// The offset an entry's offset field gives: the field itself, or the `LOFF` row it refers to (`None` if
    /// that row is not in the file).
    #[inline(always)]
    fn offset_of(&self, off: u32) -> Option<u64> {
        match self.chunks.loff {
            Some((start, end)) if off & LARGE_OFFSET_BIT != 0 => {
                let at = start.checked_add((off & !LARGE_OFFSET_BIT) as usize * LOFF_ROW_LEN)?;
                if at >= end {
                    return None;
                }
                be64(&self.data, at)
            }
            _ => Some(u64::from(off)),
        }
    }

    /// The position of `id` in the file, if it lists it: the search of a `.idx` ([`Table::position`]:
    /// interpolation in the fan-out bucket, one correction, a gallop, binary search), on the `OIDF` and `OIDL`
    /// chunks, from the start or resumed from `from` (a probe of this file's search for `id`). On a file whose
    /// ids are out of order it may miss an id (as git's binary search may), never answers another id's position
    /// (an answer is a position whose id equals `id`).
    #[inline(always)]
    pub(crate) fn search(&self, id: &[u8], from: Option<Probe>) -> Option<u32> {
        self.table().position(id, from)
    }

    /// The sorted table of ids the search reads (and the `OOFF` rows, which a batch's warming prefetches).
    #[inline(always)]
    pub(crate) fn table(&self) -> Table<'_> {
        // SAFETY: checked at open (`Chunks::check`): the `OIDL` chunk lies inside the file before its trailer and
        // is exactly `count * hash length` bytes (`count == fanout[255]`), so `count` ids of `kind.len()` bytes
        // follow one another from its start; the fan-out is monotonic, and `bounds` is 0 then the fan-out, so
        // `bounds[256] == count`.
        unsafe {
            Table::new(
                &self.data,
                self.chunks.oidl.0,
                self.kind.len(),
                self.chunks.fanout[255],
                &self.chunks.bounds,
                self.kind,
            )
            .with_rows(self.chunks.ooff.0, OOFF_ROW_LEN)
        }
    }

    /// Every object in file order (which is id order in a valid file): id, pack int id, offset. Entries that
    /// [`find`](Self::find) would reject are skipped (among them both copies of an id the table repeats).
    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, u32, u64)> + '_ {
        let h = self.kind.len();
        self.ids()
            .chunks_exact(h)
            .zip(0..self.len())
            .filter_map(|(raw, i)| {
                let id = ObjectId::from_bytes(raw)?;
                let (pack, off) = self.entry(i, |p| self.bound_in(&[], p))?;
                Some((id, pack, off))
            })
    }
}

/// A bucket fault ([`fanout::check_bucket`]) as the multi-pack-index reports it.
pub(super) fn bucket_problem(fault: BucketFault) -> MidxProblem {
    match fault {
        BucketFault::OutOfOrder(object) => MidxProblem::IdsOutOfOrder { object },
        BucketFault::NotInBucket { at, .. } => MidxProblem::IdNotInFanoutBucket { object: at },
    }
}
