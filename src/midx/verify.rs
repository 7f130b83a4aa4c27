//! Checking a multi-pack-index beyond what opening checks ([`MultiPackIndex::verify`]): the trailer checksum,
//! the order of the ids, every entry, and ([`MultiPackIndex::verify_with_packs`]) every entry against the `.idx`
//! of its pack, as `git multi-pack-index verify` does.

use super::access::bucket_problem;
use super::{MidxProblem, MultiPackIndex};
use crate::error::Error;
use crate::fanout;
use crate::idx::PackIndex;
use crate::oid::ObjectId;

impl MultiPackIndex {
    /// Check the trailer: the hash of everything before it (what `git multi-pack-index verify` checks first).
    /// Reads the whole file; [`verify`](Self::verify) starts with it, and a store opened with
    /// [`Options::midx_checksum`](crate::Options::midx_checksum) runs it once per file before the file answers.
    pub(crate) fn verify_checksum(&self) -> Result<(), Error> {
        let data: &[u8] = &self.data;
        // Opening checked that the file holds a trailer.
        let (body, trailer) = data.split_at(data.len() - self.kind.len());
        let computed = self.kind.digest(body);
        if computed.as_bytes() == trailer {
            return Ok(());
        }
        let stored = ObjectId::from_bytes(trailer).unwrap_or(ObjectId::null(self.kind));
        Err(Error::CorruptMultiPackIndex {
            path: self.path.clone(),
            problem: MidxProblem::ChecksumMismatch { stored, computed },
        })
    }

    /// Check what opening does not: the trailer checksum, that the ids are strictly increasing and that each is
    /// in its fanout bucket, and every object's entry as [`find`](Self::find) checks it (pack int id, large
    /// offset reference, offset past the pack header). Reads the whole file.
    pub fn verify(&self) -> Result<(), Error> {
        let corrupt = |problem| Error::CorruptMultiPackIndex {
            path: self.path.clone(),
            problem,
        };
        self.verify_checksum()?;
        fanout::check_all(self.fanout_ids(), |b| self.chunks.fanout[usize::from(b)])
            .map_err(|f| corrupt(bucket_problem(f)))?;
        for i in 0..self.len() {
            if let Some(problem) = self.entry_problem(i, &[]) {
                return Err(corrupt(problem));
            }
        }
        Ok(())
    }

    /// Everything [`verify`](Self::verify) checks, then what `git multi-pack-index verify` checks against the
    /// packs: every pack the file names is present (`packs[i]` is the loaded `.idx` of pack int id `i`, `None`
    /// if the pack is missing or its index could not be loaded), and every object is listed by the `.idx` of
    /// its pack at the same offset, which lies before the pack's trailing checksum when the index knows the
    /// pack's length (`PackIndex::with_pack_len`). Reports the first problem found.
    ///
    /// ```
    /// use odb_index::idx::PackIndex;
    /// use odb_index::midx::{MidxProblem, MultiPackIndex};
    /// use odb_index::{Error, HashKind};
    /// use std::process::Command;
    ///
    /// // One pack and its multi-pack-index, written by git.
    /// let repo = tempfile::tempdir()?;
    /// let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// git(&["init", "-q"])?;
    /// std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// git(&["add", "hello.txt"])?;
    /// git(&["repack", "-adq"])?;
    /// git(&["multi-pack-index", "write"])?;
    /// let pack_dir = repo.path().join(".git/objects/pack");
    /// let midx = MultiPackIndex::open(&pack_dir.join("multi-pack-index"), HashKind::Sha1)?;
    /// let idx = PackIndex::open(&pack_dir.join(&midx.pack_names()[0]), HashKind::Sha1)?;
    ///
    /// midx.verify_with_packs(&[Some(&idx)])?; // every entry agrees with the pack's index
    /// let e = midx.verify_with_packs(&[None]).unwrap_err(); // the pack's index is not there
    /// assert!(matches!(e, Error::CorruptMultiPackIndex { problem: MidxProblem::PackMissing { pack: 0, .. }, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify_with_packs(&self, packs: &[Option<&PackIndex>]) -> Result<(), Error> {
        self.verify()?;
        self.verify_packs_problem(packs)
            .map_err(|problem| Error::CorruptMultiPackIndex {
                path: self.path.clone(),
                problem,
            })
    }

    fn verify_packs_problem(&self, packs: &[Option<&PackIndex>]) -> Result<(), MidxProblem> {
        for (pack, name) in self.chunks.pack_names.iter().enumerate() {
            if packs.get(pack).copied().flatten().is_none() {
                return Err(MidxProblem::PackMissing {
                    pack: pack as u32,
                    name: name.clone(),
                });
            }
        }
        let lens: Vec<u64> = packs
            .iter()
            .map(|p| p.and_then(PackIndex::pack_len).unwrap_or(u64::MAX))
            .collect();
        let h = self.kind.len();
        for (i, raw) in self.ids().chunks_exact(h).enumerate() {
            let object = i as u32;
            if let Some(problem) = self.entry_problem(object, &lens) {
                return Err(problem);
            }
            let Some((pack, offset)) = self.entry(object, |p| self.bound_in(&lens, p)) else {
                break;
            };
            let id = ObjectId::from_bytes(raw).unwrap_or(ObjectId::null(self.kind));
            // Present: every pack int id below the number of names has an index (checked above).
            let Some(index) = packs.get(pack as usize).copied().flatten() else {
                continue;
            };
            let Some(at) = index.search(raw, None) else {
                return Err(MidxProblem::ObjectNotInPack { object, id, pack });
            };
            let idx_offset = index.offset_at(at).unwrap_or(u64::MAX);
            if idx_offset != offset {
                return Err(MidxProblem::OffsetMismatch {
                    object,
                    id,
                    pack,
                    offset,
                    idx_offset,
                });
            }
        }
        Ok(())
    }

    /// Check where the `BTMP` chunk (if any) puts each pack's bits, given `base_objects`, the number of objects
    /// in the layers below this file in its incremental chain (0 for a `multi-pack-index` that is not a layer,
    /// and for the base layer). git numbers a layer's bits after those of the layers below (its
    /// `midx_pack_order`: `i + num_objects_in_base`), so each pack with bits must lie in `base_objects ..
    /// base_objects + len()`: [`MidxProblem::BitmapRangeOutOfBounds`] (not a layer) or
    /// [`MidxProblem::BitmapRangeOutsideLayer`] otherwise. Opening checks only what a file alone can say (each
    /// range no longer than its objects, within 2^32 bits); lookups never read the chunk. O(packs).
    ///
    /// ```
    /// use odb_index::midx::MultiPackIndex;
    /// use odb_index::HashKind;
    /// use std::process::Command;
    ///
    /// let repo = tempfile::tempdir()?;
    /// let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// git(&["init", "-q"])?;
    /// std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// git(&["add", "hello.txt"])?;
    /// git(&["repack", "-adq"])?;
    /// git(&["multi-pack-index", "write", "--bitmap"])?; // BTMP: pack 0 has bits 0..1
    /// let path = repo.path().join(".git/objects/pack/multi-pack-index");
    /// let midx = MultiPackIndex::open(&path, HashKind::Sha1)?;
    /// midx.check_bitmapped_packs(0)?;
    /// assert!(midx.check_bitmapped_packs(5).is_err()); // as a layer over 5 objects, its bits would start at 5
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_bitmapped_packs(&self, base_objects: u64) -> Result<(), Error> {
        let Some((start, end)) = self.chunks.btmp else {
            return Ok(());
        };
        let count = u64::from(self.len());
        let (first, last) = (base_objects, base_objects.saturating_add(count));
        for (pack, pos, nr) in super::layout::bitmapped_packs(&self.data[start..end]) {
            if nr == 0 || (u64::from(pos) >= first && u64::from(pos) + u64::from(nr) <= last) {
                continue;
            }
            let problem = if base_objects == 0 {
                MidxProblem::BitmapRangeOutOfBounds {
                    pack,
                    pos,
                    nr,
                    count,
                }
            } else {
                MidxProblem::BitmapRangeOutsideLayer {
                    pack,
                    pos,
                    nr,
                    first,
                    end: last,
                }
            };
            return Err(Error::CorruptMultiPackIndex {
                path: self.path.clone(),
                problem,
            });
        }
        Ok(())
    }
}
