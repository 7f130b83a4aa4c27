//! Batched lookups in one index (a `.idx` or a multi-pack-index, through its [`Table`]): the steps of
//! [`Table::position`]'s interpolation search ([`Probe`]) run one at a time for a group of ids
//! (`Handle::locate_many`), each step prefetching the line the next one reads for every id of the group before
//! any of them waits for one. Each search is then resumed where its steps left it (`find_entry` given the
//! probe), so a step is never run twice and the answer is the one a search from the start gives (the same
//! steps in the same order).

use super::{Probe, Table};
use crate::oid::HashKind;
use crate::prefetch::{lines_for, prefetch_lines_unchecked, prefetch_unchecked};

impl Table<'_> {
    /// Step 1 for `id`: the predicted position (from the fan-out table copied at open, so nothing of the file is
    /// read), its entry prefetched.
    #[inline(always)]
    pub(crate) fn warm_start(&self, id: &[u8]) -> Probe {
        let probe = self.probe_start(id);
        if let Probe::Predicted { p, .. } = probe {
            self.prefetch_id(p);
        }
        probe
    }

    /// Step 2: read the predicted entry (warm after step 1) and correct; prefetch the entries the rest of the
    /// search reads when the answer is near the corrected one ([`NEAR`]), and the rows of the same entries
    /// around [`Probe::offset_at`] (the file's offsets, [`Table::with_rows`]).
    #[inline(always)]
    pub(crate) fn warm_next(&self, id: &[u8], probe: Probe) -> Probe {
        let probe = self.probe_next(id, probe);
        if let Probe::Corrected { p, .. } = probe {
            self.prefetch_near(p);
        }
        if let Some(i) = probe.offset_at()
            && self.row != 0
        {
            prefetch_near_rows(self.d, self.rows_at, self.row, i);
        }
        probe
    }

    /// Prefetch the ids of entries `i - NEAR ..= i + NEAR`: every entry the search's last step reads when the
    /// id lies within [`NEAR`] entries of its corrected probe `i`. Same contract as
    /// [`prefetch_id`](Self::prefetch_id); a position outside the table prefetches other lines of the mapping
    /// or none, harmlessly.
    #[inline(always)]
    fn prefetch_near(&self, i: u32) {
        let at = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        let from = at.wrapping_sub(NEAR.wrapping_mul(self.stride));
        // A constant line count per layout (prefetches at fixed displacements, no loop): SHA-1 version 2 and
        // the multi-pack-index (20-byte entries), SHA-1 version 1 (24), SHA-256 version 2 (32); any other
        // layout, SHA-256 version 1's 36-byte entries the largest, gets the count of the largest.
        match (self.stride, self.kind) {
            (20, HashKind::Sha1) => {
                prefetch_lines_unchecked::<{ near_lines(20, 20) }>(self.d, from)
            }
            (24, HashKind::Sha1) => {
                prefetch_lines_unchecked::<{ near_lines(24, 20) }>(self.d, from)
            }
            (32, HashKind::Sha256) => {
                prefetch_lines_unchecked::<{ near_lines(32, 32) }>(self.d, from)
            }
            _ => prefetch_lines_unchecked::<{ near_lines(MAX_STRIDE, 32) }>(self.d, from),
        }
    }

    /// Prefetch the id of entry `i` (its first and last byte: an id may straddle two lines). `i` comes from a
    /// search step, inside the file: the address is not checked ([`prefetch_unchecked`]).
    #[inline(always)]
    fn prefetch_id(&self, i: u32) {
        let at = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        prefetch_unchecked(self.d, at);
        prefetch_unchecked(self.d, at.wrapping_add(self.kind.len() - 1));
    }
}

/// How far around its corrected probe a batch warms an id's search ([`Table::warm_next`]), in entries. The
/// correction lands within 7 entries of the answer for about 91% of random hits in a 1 000 000-id index (the
/// bench's fixture; `bench/scripts/correction-error.py`), and the search's last step then reads only entries
/// within 7 of it (a gallop reading 1, 3 and 7 entries away, then a binary search between its last two reads).
/// Warming the lines of the corrected entry alone left most hits waiting on a line the warming had not
/// brought: a batch's hits were 0.52x-0.60x `locate`, warmed 7 entries around 0.36x-0.49x (five alternated
/// rounds, load 0.8; docs/BENCHMARKS.md, "Batches"). Six lines an id for SHA-1 version 2 and two of offsets,
/// about 8 instructions a hit more.
pub(crate) const NEAR: usize = 7;

/// Prefetch rows `i - NEAR ..= i + NEAR` of a table of `row`-byte rows at `table_at` in `d`: the offsets of the
/// entries [`Table::warm_next`] warmed (a `.idx`'s offset table, 4-byte rows; a multi-pack-index's `OOFF`
/// chunk, 8-byte rows; `row` is at most 8, any length other than 4 gets the count of 8). `i` comes from a
/// search step: the addresses are not checked ([`prefetch_lines_unchecked`]).
#[inline(always)]
fn prefetch_near_rows(d: &[u8], table_at: usize, row: usize, i: u32) {
    let from = table_at.wrapping_add((i as usize).wrapping_sub(NEAR).wrapping_mul(row));
    match row {
        4 => prefetch_lines_unchecked::<{ lines_for(4 * (2 * NEAR + 1) - 1) }>(d, from),
        _ => prefetch_lines_unchecked::<{ lines_for(8 * (2 * NEAR + 1) - 1) }>(d, from),
    }
}

/// The largest entry of an id table: SHA-256 version 1 (a 4-byte offset, then the id).
const MAX_STRIDE: usize = 36;

/// Lines that hold entries `i - NEAR ..= i + NEAR`'s ids, entries of `stride` bytes and ids of `h`.
const fn near_lines(stride: usize, h: usize) -> usize {
    lines_for(2 * NEAR * stride + h - 1)
}

impl Probe {
    /// The entry whose offset the search reads if it ends near here: the corrected probe, or the position found.
    #[inline(always)]
    pub(crate) fn offset_at(self) -> Option<u32> {
        match self {
            Probe::Corrected { p, .. } | Probe::Done(Some(p)) => Some(p),
            Probe::Done(None) | Probe::Predicted { .. } => None,
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::write::{Entry, write_idx};
    use crate::idx::Found;
    use crate::idx::PackIndex;
    use crate::oid::HashKind;

    /// A search resumed from each of its steps answers as the search run at once, on a sorted file and on one
    /// whose ids are out of order in many places (where the steps taken decide what is found and what is
    /// missed): every listed id and as many absent ones, version 1 and 2, SHA-1 and SHA-256. Fails if a step is
    /// not the one `find_entry` takes (a different correction, a resumed search that starts over elsewhere).
    #[test]
    fn a_search_resumed_from_any_step_answers_as_find_entry() {
        for (version, kind) in [
            (1, HashKind::Sha1),
            (2, HashKind::Sha1),
            (2, HashKind::Sha256),
        ] {
            let entries: Vec<Entry> = (0u64..2000)
                .map(|i| Entry {
                    id: kind.digest(&i.to_le_bytes()),
                    offset: 12 + 10 * i,
                    crc32: 0,
                })
                .collect();
            let good = write_idx(version, kind, &entries, &kind.digest(b"pack")).unwrap();
            let mut bad = good.clone();
            for k in (0..1990).step_by(7) {
                bad = odb_index_testkit::idx_with_entries_swapped(&bad, version, kind.len(), k);
            }
            for (what, bytes) in [("sorted", good), ("out of order", bad)] {
                let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
                let absent = (0u64..2000).map(|i| kind.digest(&(i + 1_000_000).to_le_bytes()));
                let mut missed = 0;
                for id in entries.iter().map(|e| e.id).chain(absent) {
                    let b = id.as_bytes();
                    let want = idx.find_entry(b, None);
                    missed += usize::from(want == Found::Missing);
                    let first = idx.table().warm_start(b);
                    assert_eq!(
                        idx.find_entry(b, Some(first)),
                        want,
                        "{what}, {id}, from {first:?}"
                    );
                    let second = idx.table().warm_next(b, first);
                    assert_eq!(
                        idx.find_entry(b, Some(second)),
                        want,
                        "{what}, {id}, from {second:?}"
                    );
                    assert_eq!(
                        idx.table().warm_next(b, second),
                        second,
                        "a later step is kept as it is"
                    );
                }
                if what == "sorted" {
                    assert_eq!(missed, 2000, "every listed id found");
                }
            }
        }
    }
}
