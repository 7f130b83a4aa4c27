//! Checking a pack index beyond what opening checks: against its pack ([`PackIndex::check_pack`], as git does
//! when it opens a pack) and as a whole ([`PackIndex::verify`]: every entry, the order of the ids, the checksum).

use std::path::Path;

use super::{IdxProblem, PACK_HEADER_LEN, PackIndex};
use crate::data::FileProblem;
use crate::error::Error;
use crate::oid::ObjectId;

impl PackIndex {
    /// Check that the `.pack` at `pack` is the one this index describes, as git does when it opens a pack: read
    /// only its last hash-length bytes (one positioned read; the pack is never hashed) and compare them with
    /// [`pack_checksum`](Self::pack_checksum). Returns the pack's length (give it to
    /// `with_pack_len`).
    ///
    /// The pack is opened without blocking and must be a regular file. Errors: [`Error::Io`] naming the pack
    /// (not found: the pack was removed; not a regular file: carries a [`FileProblem`]);
    /// [`Error::CorruptIndex`] naming this index with [`IdxProblem::PackTooSmall`] or
    /// [`IdxProblem::PackMismatch`], [`IdxProblem::PackBadHeader`] or [`IdxProblem::PackObjectCount`] (which
    /// name the pack).
    pub fn check_pack(&self, pack: &Path) -> Result<u64, Error> {
        let h = self.kind.len();
        let corrupt = |problem| Error::CorruptIndex {
            path: self.path.clone(),
            problem,
        };
        let min = PACK_HEADER_LEN + h as u64;
        let (len, head, tail) = match crate::data::read_ends(pack, PACK_HEADER_LEN as usize, h) {
            Ok(t) => t,
            Err(e) => {
                return Err(match crate::data::file_problem(&e) {
                    Some(FileProblem::TooShort { len, .. }) => corrupt(IdxProblem::PackTooSmall {
                        pack: pack.to_owned(),
                        len: *len,
                        min,
                    }),
                    _ => Error::io(pack, e),
                });
            }
        };
        if len < min {
            return Err(corrupt(IdxProblem::PackTooSmall {
                pack: pack.to_owned(),
                len,
                min,
            }));
        }
        let found = ObjectId::from_bytes(&tail).unwrap_or(ObjectId::null(self.kind));
        let recorded = self.pack_checksum();
        if found != recorded {
            return Err(corrupt(IdxProblem::PackMismatch {
                pack: pack.to_owned(),
                recorded,
                found,
            }));
        }
        // git's `open_packed_git_1`: the header is `PACK`, version 2 or 3, and counts the objects the index lists.
        let word = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        if &head[..4] != b"PACK" || !matches!(word(4), 2 | 3) {
            return Err(corrupt(IdxProblem::PackBadHeader {
                pack: pack.to_owned(),
            }));
        }
        if word(8) != self.count {
            return Err(corrupt(IdxProblem::PackObjectCount {
                pack: pack.to_owned(),
                claimed: word(8),
                indexed: self.count,
            }));
        }
        Ok(len)
    }

    /// Check the whole file: every entry's offset as [`checked_offset_at`](Self::checked_offset_at) does (64-bit
    /// references inside the table, past the pack header, and before the pack's end when its length is known),
    /// ids strictly increasing and each in the fan-out bucket of its first byte, and the trailer checksum equal
    /// to the hash of everything before it. Reads every byte; not for the hot path.
    pub fn verify(&self) -> Result<(), Error> {
        self.verify_problem()
            .map_err(|problem| Error::CorruptIndex {
                path: self.path.clone(),
                problem,
            })
    }

    fn verify_problem(&self) -> Result<(), IdxProblem> {
        for i in 0..self.count {
            if let Some(Err(problem)) = self.checked_offset_at(i) {
                return Err(problem);
            }
        }
        self.check_order()?;
        let h = self.kind.len();
        let body_len = self.t.trailer_at + h;
        let expected = self.index_checksum();
        let actual = self.kind.digest(self.data.get(..body_len).unwrap_or(&[]));
        if expected != actual {
            return Err(IdxProblem::ChecksumMismatch { expected, actual });
        }
        Ok(())
    }
}
