//! Batched lookups in one `.idx`: the steps of [`PackIndex::find_entry`]'s interpolation search
//! ([`Probe`]) run one at a time for a group of ids (`Handle::locate_many`), each step prefetching the line the
//! next one reads for every id of the group before any of them waits for one. Each search is then resumed where
//! its steps left it ([`PackIndex::find_entry_from`]), so a step is never run twice and the answer is the one
//! `find_entry` gives (the same steps in the same order).

use super::{PackIndex, Probe};
use crate::prefetch::prefetch_unchecked;

impl PackIndex {
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

    /// Step 2: read the predicted entry (warm after step 1) and correct; prefetch the corrected entry with its
    /// offset (version 2; version 1 keeps it beside the id): the search ends there or a few entries away (a
    /// gallop from it), and the offsets of sixteen neighbours share a line. Only the offset when the predicted
    /// entry is `id`.
    #[inline(always)]
    pub(crate) fn warm_next(&self, id: &[u8], probe: Probe) -> Probe {
        let probe = self.probe_next(id, probe);
        match probe {
            Probe::Corrected { p, .. } => {
                self.prefetch_id(p);
                self.prefetch_offset(p);
            }
            Probe::Done(Some(i)) => self.prefetch_offset(i),
            Probe::Done(None) | Probe::Predicted { .. } => {}
        }
        probe
    }

    /// Prefetch the offset of entry `i` (version 2's offset table; nothing for version 1). `i` comes from a
    /// search step, inside the file: the address is not checked ([`prefetch_unchecked`]).
    #[inline(always)]
    fn prefetch_offset(&self, i: u32) {
        if self.version != 1 {
            let at = self.offsets_at.wrapping_add((i as usize).wrapping_mul(4));
            prefetch_unchecked(&self.data, at);
        }
    }

    /// Prefetch the id of entry `i` (its first and last byte: an id may straddle two lines). As for the offset,
    /// unchecked.
    #[inline(always)]
    fn prefetch_id(&self, i: u32) {
        let d: &[u8] = &self.data;
        let at = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        prefetch_unchecked(d, at);
        prefetch_unchecked(d, at.wrapping_add(self.kind.len() - 1));
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::super::write::{Entry, write_idx};
    use super::PackIndex;
    use crate::idx::Found;
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
                    let want = idx.find_entry(b);
                    missed += usize::from(want == Found::Missing);
                    let first = idx.warm_start(b);
                    assert_eq!(
                        idx.find_entry_from(b, first),
                        want,
                        "{what}, {id}, from {first:?}"
                    );
                    let second = idx.warm_next(b, first);
                    assert_eq!(
                        idx.find_entry_from(b, second),
                        want,
                        "{what}, {id}, from {second:?}"
                    );
                    assert_eq!(
                        idx.warm_next(b, second),
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
