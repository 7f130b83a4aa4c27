//! What is wrong with a malformed `.idx` file (re-exported as `odb_index::idx::IdxProblem`).
//!
//! It lives below [`Error`](super::Error) so that the error type does not import the format module that
//! returns it.

use std::path::PathBuf;

use crate::oid::ObjectId;

/// What is wrong with a malformed `.idx` file.
///
/// ```
/// use odb_index::idx::{IdxProblem, PackIndex};
/// use odb_index::{Error, HashKind};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pack-1.idx");
/// std::fs::write(&path, b"too short")?;
/// match PackIndex::open(&path, HashKind::Sha1) {
///     Err(Error::CorruptIndex { path: named, problem: IdxProblem::TooSmall { .. } }) => assert_eq!(named, path),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdxProblem {
    /// The file is shorter than the smallest valid index (a fan-out table and the trailer, plus the header
    /// for version 2).
    #[error("file is too small ({len} bytes, at least {min} needed)")]
    TooSmall {
        /// The file's length.
        len: u64,
        /// The smallest valid length.
        min: u64,
    },
    /// The file starts with the version 2 signature but has another version number.
    #[error("index version {0} is not supported (only 1 and 2)")]
    UnsupportedVersion(u32),
    /// A fan-out entry is smaller than the one before it.
    #[error(
        "non-monotonic fan-out table: bucket {bucket:#04x} counts {count} objects, the bucket before \
                 it {previous}"
    )]
    NonMonotonicFanout {
        /// The bucket whose count is smaller than the previous bucket's.
        bucket: u8,
        /// Its cumulative count.
        count: u32,
        /// The previous bucket's cumulative count.
        previous: u32,
    },
    /// A version 1 file whose length is not what its object count implies.
    #[error("wrong version 1 file size: {actual} bytes, but the fan-out table implies {expected}")]
    SizeMismatch {
        /// `256 * 4 + count * (4 + hash) + 2 * hash`.
        expected: u64,
        /// The file's length.
        actual: u64,
    },
    /// A version 2 file whose length is outside what its object count allows (no 64-bit offsets at the least,
    /// `count - 1` of them at the most, as git checks).
    #[error(
        "wrong version 2 file size: {actual} bytes, but the fan-out table implies {min} to {max}"
    )]
    SizeOutOfRange {
        /// The length without 64-bit offsets.
        min: u64,
        /// The length with `count - 1` 64-bit offsets.
        max: u64,
        /// The file's length.
        actual: u64,
    },
    /// The bytes between the 32-bit offset table and the trailer are not a whole number of 64-bit offsets.
    #[error("the 64-bit offset table is {len} bytes long, not a multiple of 8")]
    MisalignedLargeOffsets {
        /// How many bytes there are.
        len: u64,
    },
    /// A 32-bit offset refers to a 64-bit offset that the file does not hold.
    #[error("entry {entry} refers to 64-bit offset {index}, but the file holds only {count}")]
    LargeOffsetOutOfRange {
        /// The entry (position in sorted order) holding the reference.
        entry: u32,
        /// The 64-bit table index it refers to.
        index: u32,
        /// How many 64-bit offsets the file holds.
        count: u64,
    },
    /// An entry's offset lies inside the 12-byte pack header, where no object can start (found when the entry
    /// is used, and by `verify`).
    #[error("entry {entry} has offset {offset}, inside the 12-byte pack header")]
    OffsetInPackHeader {
        /// The entry (position in sorted order).
        entry: u32,
        /// Its offset.
        offset: u64,
    },
    /// An entry's offset lies at or past the start of the pack's trailing checksum (found when the entry is
    /// used, and by `verify`, once the pack's length is known: git's "offset beyond end of packfile").
    #[error("entry {entry} has offset {offset}, beyond the end of the {pack_len}-byte packfile")]
    OffsetPastPackEnd {
        /// The entry (position in sorted order).
        entry: u32,
        /// Its offset.
        offset: u64,
        /// The pack's length.
        pack_len: u64,
    },
    /// The `.pack` is shorter than a pack header and its trailing checksum.
    #[error("packfile {} is too small ({len} bytes, at least {min} needed)", .pack.display())]
    PackTooSmall {
        /// The `.pack` file.
        pack: PathBuf,
        /// Its length.
        len: u64,
        /// The smallest valid length (12 + the hash length).
        min: u64,
    },
    /// The `.pack` does not end with the pack checksum this index records: the index describes another pack
    /// (git: "packfile ... does not match index").
    #[error("packfile {} does not match index: the index records pack checksum {recorded}, the pack ends \
                 with {found}", .pack.display())]
    PackMismatch {
        /// The `.pack` file.
        pack: PathBuf,
        /// The checksum the index records.
        recorded: ObjectId,
        /// The last hash-length bytes of the `.pack`.
        found: ObjectId,
    },
    /// The `.pack` does not start with a pack header (`PACK`, version 2 or 3): git "file ... is not a GIT
    /// packfile" or "is version ... and not supported".
    #[error("file {} is not a GIT packfile of version 2 or 3", .pack.display())]
    PackBadHeader {
        /// The `.pack` file.
        pack: PathBuf,
    },
    /// The `.pack`'s header counts another number of objects than the index lists (git: "packfile ... claims
    /// to have N objects while index indicates M objects"): the pack is not used.
    #[error("packfile {} claims to have {claimed} objects while index indicates {indexed} objects", .pack.display())]
    PackObjectCount {
        /// The `.pack` file.
        pack: PathBuf,
        /// The count in the pack's header.
        claimed: u32,
        /// The entries of the index.
        indexed: u32,
    },
    /// (Found by `verify`, or by a lookup that missed in its fan-out bucket.) The id at this position is not
    /// greater than the one before it.
    #[error("object ids are not sorted: entry {at} is not greater than the one before")]
    UnsortedIds {
        /// The entry's position.
        at: u32,
    },
    /// (Found by `verify`, or by a lookup that missed in a fan-out bucket it is or should be in.) The id at this
    /// position lies in another fan-out bucket than its first byte says.
    #[error("entry {at} starts with {first_byte:#04x} but lies in fan-out bucket {bucket:#04x}")]
    IdOutsideBucket {
        /// The entry's position.
        at: u32,
        /// The bucket the fan-out table puts it in.
        bucket: u8,
        /// The id's first byte.
        first_byte: u8,
    },
    /// (Found by `verify`.) The trailer checksum is not the hash of the bytes before it.
    #[error("trailer checksum mismatch: the file says {expected}, its contents hash to {actual}")]
    ChecksumMismatch {
        /// The checksum stored in the file.
        expected: ObjectId,
        /// The hash of the file's contents.
        actual: ObjectId,
    },
}
