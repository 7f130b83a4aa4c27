//! An id that a pack's `.idx` lists more than once (a file that lies: git's writers never list an id twice; an
//! index written without `--strict` from a pack holding an object twice may, and so may a corrupted one, where
//! one of the entries is another object's). git reads whichever entry its binary search finds, another
//! object's contents for one of the two; here the entry whose contents hash to the id is read, and if none
//! does, the answer is an error naming the index. The check costs one Relaxed load per read once the id's
//! fan-out bucket was found in order ([`PackIndex::repeated_entries`](odb_index::idx::PackIndex::repeated_entries)),
//! and nothing for a pack whose own index the lookup did not search (a multi-pack-index checks its own repeats).

use crate::Error;
use crate::convert::oid_to_gix;
use crate::objects::{Objects, Pack};
use crate::place::Place;

impl Objects {
    /// The offset of `id`'s entry in `pack`, given the one the lookup found: that one, unless the pack's index
    /// lists `id` more than once; then the first entry (the lookup's, then in file order) whose contents hash to
    /// `id`, else [`Error::Index`].
    pub(crate) fn entry_of_id(
        &self,
        pack: &Pack,
        id: &odb_index::ObjectId,
        offset: u64,
    ) -> Result<u64, Error> {
        let repeated = self
            .handle
            .borrow()
            .with_loaded_pack_index(pack.id, |idx| {
                idx.repeated_entries(id.as_bytes()).map(|at| {
                    at.iter()
                        .filter_map(|&i| idx.checked_offset_at(i)?.ok())
                        .collect::<Vec<u64>>()
                })
            })
            .flatten();
        let Some(mut offsets) = repeated else {
            return Ok(offset);
        };
        let n = offsets.len();
        // The lookup's entry first.
        offsets.sort_by_key(|&o| o != offset);
        let want = oid_to_gix(id);
        let mut data = Vec::new();
        for o in offsets {
            let place = Place::Packed {
                pack: pack.id,
                path: pack.path.clone(),
                offset: o,
            };
            let Ok(kind) = self.read_at(&place, &mut data) else {
                continue;
            };
            if gix_object::compute_hash(self.hash_kind(), kind, &data).is_ok_and(|h| h == want) {
                return Ok(o);
            }
        }
        Err(Error::Index {
            path: pack.idx_path.clone(),
            reason: format!(
                "lists {id} {n} times, and no entry of those holds an object whose contents hash to it"
            ),
        })
    }
}
