//! A multi-pack-index searched from a handle's snapshot (`snapshot.rs`): its answer for an id, its misses
//! confirmed where its ids may be out of order, and entries that cannot be right answered from the covered packs'
//! own indices (a typed error naming the file if none has the id: never a wrong location).

use crate::error::{Error, MidxProblem};
use crate::fanout::Confirmed;
use crate::idx::Found;
use crate::midx::MidxFound;
use crate::oid::ObjectId;
use crate::store::Location;
use crate::store::listing::load::LoadedMidx;
use crate::store::options::MidxCheck;
use crate::sync::plain::Arc;

impl LoadedMidx {
    /// Look `id` up: its location in a pack the listing has, or `None` (a miss, or a pack the listing does not
    /// have). An entry that names no pack of the file or lies outside its pack, and under
    /// [`MidxCheck::PackIndex`] an entry its pack's own index contradicts, is answered from the covered packs'
    /// own indices instead (the entry is reported by `Store::problems`); if none has the id, `bad` records why,
    /// naming the multi-pack-index. A miss here is confirmed by [`confirm_miss`](Self::confirm_miss) once every
    /// index missed (off the hit path).
    #[inline]
    pub(in crate::store) fn lookup(
        &self,
        id: &[u8],
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        self.answer(id, self.midx.find_entry(id, |p| self.bound(p), None), bad)
    }

    /// What `found` (this file's search for `id`) answers, as [`lookup`](Self::lookup) says.
    #[inline(always)]
    pub(in crate::store) fn answer(
        &self,
        id: &[u8],
        found: MidxFound,
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        match found {
            MidxFound::At(pack, offset) => {
                if self.check == MidxCheck::PackIndex {
                    return self.checked(id, pack, offset, bad);
                }
                let pack = (*self.packs.get(pack as usize)?)?;
                Some(Location::Packed { pack, offset })
            }
            MidxFound::Missing => None,
            // Out of bounds because its pack's length was not read yet (the listing did not `stat` it): read it
            // and search once more; out of bounds then, the entry is wrong.
            MidxFound::Bad(i) if self.read_len_at(i) => {
                match self.midx.find_entry(id, |p| self.bound(p), None) {
                    MidxFound::Bad(i) => self.bad_entry(id, i, bad),
                    found => self.answer(id, found, bad),
                }
            }
            MidxFound::Bad(i) => self.bad_entry(id, i, bad),
        }
    }

    /// A search that misses is certain only where the file's ids are in order: its fanout bucket is checked once
    /// (O(bucket)), after which a miss there costs one Relaxed load more. Ids out of order (a file that lies; git
    /// misses such objects) send misses in their bucket to the packs' own indices.
    #[inline]
    pub(in crate::store) fn confirm_miss(
        &self,
        id: &[u8],
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        let &first = id.first()?;
        if self.buckets.in_order(first) {
            return None;
        }
        self.unchecked_bucket_miss(id, first, bad)
    }

    #[cold]
    #[inline(never)]
    fn unchecked_bucket_miss(
        &self,
        id: &[u8],
        first: u8,
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        if id.len() != self.midx.hash_kind().len() {
            return None;
        }
        match self.buckets.confirm(first, || self.check_bucket(first)) {
            Confirmed::Certain => return None,
            Confirmed::OutOfOrder(Some(problem)) => {
                self.record_wrong(Arc::new(Error::CorruptMultiPackIndex {
                    path: self.midx.path().to_path_buf(),
                    problem,
                }))
            }
            Confirmed::OutOfOrder(None) => {}
        }
        self.search_own(id, bad, None)
    }

    /// [`MidxCheck::PackIndex`]: the entry says `pack`, `offset`; its pack's own index must say the same. Out of
    /// line (and cold for the layout): the default mode's hit path stays one search and one branch longer.
    #[cold]
    #[inline(never)]
    fn checked(
        &self,
        id: &[u8],
        pack: u32,
        offset: u64,
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        let pack_id = (*self.packs.get(pack as usize)?)?;
        // Only for the report: a second search, paid only when the entry is wrong.
        let object = || self.midx.search(id, None).unwrap_or(u32::MAX);
        let oid = || ObjectId::from_bytes(id).unwrap_or(ObjectId::null(self.midx.hash_kind()));
        let problem = match self.own_index(pack)? {
            Ok(own) => match own.idx.find_entry(id, None) {
                Found::At(o) if o == offset => {
                    return Some(Location::Packed {
                        pack: pack_id,
                        offset,
                    });
                }
                Found::At(idx_offset) => MidxProblem::OffsetMismatch {
                    object: object(),
                    id: oid(),
                    pack,
                    offset,
                    idx_offset,
                },
                Found::Missing | Found::Bad(_) => MidxProblem::ObjectNotInPack {
                    object: object(),
                    id: oid(),
                    pack,
                },
            },
            // The pack's own index cannot say (it does not load): report why, and answer as written, as
            // `MidxCheck::Bounds` does (the entry passed the bounds checks). Searching the other packs' indices
            // instead could turn a right answer into a miss.
            Err(e) => {
                self.record_wrong(Arc::clone(e));
                return Some(Location::Packed {
                    pack: pack_id,
                    offset,
                });
            }
        };
        let e = Error::CorruptMultiPackIndex {
            path: self.midx.path().to_path_buf(),
            problem,
        };
        self.search_own(id, bad, Some(e))
    }

    /// The entry at position `i` names no pack of the file or lies outside its pack.
    #[cold]
    #[inline(never)]
    fn bad_entry(
        &self,
        id: &[u8],
        i: u32,
        bad: &mut Option<(Box<[u8]>, Error)>,
    ) -> Option<Location> {
        let e = self
            .midx
            .entry_problem(i, &self.pack_lens_now())
            .map(|problem| Error::CorruptMultiPackIndex {
                path: self.midx.path().to_path_buf(),
                problem,
            });
        self.search_own(id, bad, e)
    }

    /// Look `id` up in the own index of every pack the file covers (opening them as needed), after the file's
    /// entry for it proved wrong (`wrong`, recorded for `Store::problems` if the object is found, else as the
    /// lookup's error).
    #[cold]
    fn search_own(
        &self,
        id: &[u8],
        bad: &mut Option<(Box<[u8]>, Error)>,
        wrong: Option<Error>,
    ) -> Option<Location> {
        // Own indices that failed to load by a failure that may pass: the id may be in one of them, so not
        // finding it is no miss (the fault policy) but the lookup's error.
        let mut failed = Vec::new();
        for pack in 0..self.pack_count() {
            let own = match self.own_index(pack) {
                Some(Ok(own)) => own,
                Some(Err(e)) if e.is_transient() => {
                    failed.push((self.own_index_path(pack), Arc::clone(e)));
                    continue;
                }
                _ => continue,
            };
            if let Found::At(offset) = own.idx.find_entry_confirmed(id) {
                if let Some(e) = wrong {
                    self.record_wrong(Arc::new(e));
                }
                return Some(Location::Packed {
                    pack: own.id,
                    offset,
                });
            }
        }
        if !failed.is_empty() {
            *bad = Some((id.into(), Error::Incomplete { failed }));
        } else if let Some(e) = wrong {
            *bad = Some((id.into(), e));
        }
        None
    }
}
