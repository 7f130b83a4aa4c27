//! What is wrong with a malformed `multi-pack-index` file (re-exported as `odb_index::midx::MidxProblem`).
//!
//! It lives below [`Error`](super::Error) so that the error type does not import the format module that
//! returns it.

use std::ffi::OsString;

use crate::ids::ChunkId;
use crate::oid::ObjectId;

/// The signature of a multi-pack-index (`MIDX`), for the message of [`MidxProblem::BadSignature`].
const SIGNATURE: [u8; 4] = *b"MIDX";

/// What is wrong with a malformed `multi-pack-index` file.
///
/// ```
/// use odb_index::midx::{MidxProblem, MultiPackIndex};
/// use odb_index::{Error, HashKind};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("multi-pack-index");
/// std::fs::write(&path, [b'X'; 200])?;
/// match MultiPackIndex::open(&path, HashKind::Sha1) {
///     Err(Error::CorruptMultiPackIndex { problem: MidxProblem::BadSignature { found }, .. }) => {
///         assert_eq!(&found, b"XXXX")
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MidxProblem {
    /// The file is shorter than the smallest valid multi-pack-index.
    #[error("file is too small ({len} bytes, a multi-pack-index has at least {min})")]
    TooSmall {
        /// The file's length.
        len: u64,
        /// The smallest possible length for this hash kind.
        min: u64,
    },
    /// The file does not start with `MIDX`.
    #[error(
        "bad signature 0x{:08x} (expected 0x{:08x}, \"MIDX\")",
        u32::from_be_bytes(*.found),
        u32::from_be_bytes(SIGNATURE)
    )]
    BadSignature {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// The file version is neither 1 nor 2.
    #[error("unsupported version {version} (only 1 and 2 are known)")]
    UnsupportedVersion {
        /// The version byte.
        version: u8,
    },
    /// The object id version is neither 1 (SHA-1) nor 2 (SHA-256).
    #[error("unknown object id version {id} (1 = SHA-1, 2 = SHA-256)")]
    UnknownHashVersion {
        /// The object id version byte.
        id: u8,
    },
    /// The file is one layer of an incremental chain (it names base files), which is not supported.
    #[error(
        "the file is a layer of an incremental chain ({bases} base files); chains are not supported"
    )]
    IncrementalNotSupported {
        /// The number of base multi-pack-index files in the header.
        bases: u8,
    },
    /// The chunk table does not fit in the file before the trailer.
    #[error(
        "the table of {chunks} chunks ends at {table_end}, past the trailer at {trailer_start}"
    )]
    ChunkTableTruncated {
        /// The number of chunks the header announces.
        chunks: u8,
        /// Where the table would end.
        table_end: u64,
        /// Where the trailer starts.
        trailer_start: u64,
    },
    /// A row of the chunk table before the last one has id 0 (the terminator comes too early).
    #[error("chunk table row {row} has id 0 before the announced number of chunks")]
    EarlyTerminator {
        /// The row (0-based).
        row: u8,
    },
    /// The row after the last chunk does not have id 0.
    #[error("chunk table is not terminated by id 0 (found {found})")]
    MissingTerminator {
        /// The id found there.
        found: ChunkId,
    },
    /// A chunk id appears twice in the table.
    #[error("chunk {id} appears twice in the chunk table")]
    DuplicateChunk {
        /// The chunk id.
        id: ChunkId,
    },
    /// A chunk starts inside the header or the chunk table.
    #[error(
        "chunk {id} starts at {offset}, inside the header or chunk table (which ends at {table_end})"
    )]
    ChunkOverlapsTable {
        /// The chunk id.
        id: ChunkId,
        /// Where the table says the chunk starts.
        offset: u64,
        /// Where the chunk table ends.
        table_end: u64,
    },
    /// A chunk ends before it starts (offsets decrease) or extends past the start of the trailer.
    #[error(
        "chunk {id} spans {offset}..{end}, which is not a range before the trailer at {trailer_start}"
    )]
    ChunkOutOfBounds {
        /// The chunk id.
        id: ChunkId,
        /// Where the chunk starts.
        offset: u64,
        /// Where the next row says it ends.
        end: u64,
        /// Where the trailer starts.
        trailer_start: u64,
    },
    /// A required chunk (`PNAM`, `OIDF`, `OIDL` or `OOFF`) is missing.
    #[error("required chunk {id} is missing")]
    MissingChunk {
        /// The chunk id.
        id: ChunkId,
    },
    /// A chunk has another size than its contents require.
    #[error("chunk {id} has {size} bytes, expected {expected}")]
    WrongChunkSize {
        /// The chunk id.
        id: ChunkId,
        /// Its size in the file.
        size: u64,
        /// The size it must have (for `LOFF`: a multiple of 8; this is the next smaller multiple).
        expected: u64,
    },
    /// A pack's bit range in the `BTMP` chunk (first position and count) goes past the object count: at open, a
    /// range longer than the file's objects or past 2^32 bits; by [`Store::verify`](crate::Store::verify), of a
    /// `multi-pack-index` that is not a layer of a chain, a range past its object count.
    #[error("BTMP: pack {pack}'s bits {pos}..{pos}+{nr} go past the object count {count}")]
    BitmapRangeOutOfBounds {
        /// The pack int id.
        pack: u32,
        /// Its first bit position.
        pos: u32,
        /// Its number of bits.
        nr: u32,
        /// The object count.
        count: u64,
    },
    /// A pack's bit range in the `BTMP` chunk of a layer of an incremental chain lies outside the layer's bits:
    /// a layer's positions count the objects of the layers below it (git's `midx_pack_order`: `i +
    /// num_objects_in_base`), so its packs' bits must lie in `first..end`, after the layers below and within
    /// its own objects. Found by [`Store::verify`](crate::Store::verify), which knows the layers below.
    #[error(
        "BTMP: pack {pack}'s bits {pos}..{pos}+{nr} lie outside the layer's bits {first}..{end}"
    )]
    BitmapRangeOutsideLayer {
        /// The pack int id (within the layer).
        pack: u32,
        /// Its first bit position.
        pos: u32,
        /// Its number of bits.
        nr: u32,
        /// The layer's first bit: the number of objects in the layers below it.
        first: u64,
        /// One past the layer's last bit: `first` plus its object count.
        end: u64,
    },
    /// The fanout table decreases.
    #[error("fanout decreases: entry {} = {prev} > entry {index} = {value}", .index.saturating_sub(1))]
    FanoutNotMonotonic {
        /// The entry (1..=255) that is smaller than the one before it.
        index: u8,
        /// The entry before.
        prev: u32,
        /// This entry.
        value: u32,
    },
    /// The `PNAM` chunk ends before all the packs the header announces are named.
    #[error("PNAM chunk holds {found} complete pack names, the header announces {expected}")]
    PackNamesTruncated {
        /// The number of complete names found.
        found: u32,
        /// The number of packs in the header.
        expected: u32,
    },
    /// After the last pack name, the `PNAM` chunk holds something other than up to 3 NUL padding bytes.
    #[error(
        "PNAM chunk has {extra} bytes after the last pack name that are not 0-3 NUL padding bytes"
    )]
    PackNamesTrailingBytes {
        /// The number of bytes after the last name's NUL.
        extra: u64,
    },
    /// A pack name is not UTF-8, off Unix (where a file name is not bytes; on Unix a name is its bytes, as git
    /// reads it).
    #[error("the name of pack {pack} is not UTF-8")]
    PackNameNotUtf8 {
        /// The pack int id of the name.
        pack: u32,
    },
    /// A pack name is empty, `.` or `..`, or contains `/` or `\` (it must be a file name in the pack directory).
    #[error("the name of pack {pack} ({name:?}) is not a file name")]
    BadPackName {
        /// The pack int id of the name.
        pack: u32,
        /// The name.
        name: OsString,
    },
    /// A version 1 file lists its packs out of strictly increasing order.
    #[error("version 1 pack names out of order: {prev:?} before {name:?} (pack {pack})")]
    PackNamesOutOfOrder {
        /// The pack int id of the name that is not greater than the previous one.
        pack: u32,
        /// The previous name.
        prev: OsString,
        /// This name.
        name: OsString,
    },
    /// A (version 2) file names the same pack twice.
    #[error("pack {name:?} is named twice")]
    DuplicatePackName {
        /// The name.
        name: OsString,
    },
    /// An object's pack int id is not less than the number of packs (found when the entry is used, and by
    /// `verify`).
    #[error("object {object} is in pack {pack}, but there are only {packs} packs")]
    PackIdOutOfRange {
        /// The object's position in the file.
        object: u32,
        /// Its pack int id.
        pack: u32,
        /// The number of packs.
        packs: u32,
    },
    /// An object's offset refers to a row of `LOFF` that does not exist (found when the entry is used, and by
    /// `verify`).
    #[error("object {object} refers to large offset {row}, but the LOFF chunk has {rows} rows")]
    LargeOffsetOutOfRange {
        /// The object's position in the file.
        object: u32,
        /// The `LOFF` row it refers to.
        row: u32,
        /// The number of rows in `LOFF`.
        rows: u64,
    },
    /// An object's offset lies inside the 12-byte pack header, where no object can start (found when the entry
    /// is used, and by `verify`).
    #[error("object {object} is at offset {offset} of pack {pack}, inside the 12-byte pack header")]
    OffsetInPackHeader {
        /// The object's position in the file.
        object: u32,
        /// Its pack int id.
        pack: u32,
        /// Its offset.
        offset: u64,
    },
    /// An object's offset lies at or past its pack's trailing checksum (found when the entry is used with the
    /// packs' lengths, and by `verify_with_packs`).
    #[error(
        "object {object} is at offset {offset} of pack {pack}, beyond the end of that {pack_len}-byte \
                 packfile"
    )]
    OffsetPastPackEnd {
        /// The object's position in the file.
        object: u32,
        /// Its pack int id.
        pack: u32,
        /// Its offset.
        offset: u64,
        /// The pack's length.
        pack_len: u64,
    },
    /// (verify with packs) A pack the file names is not in the pack directory, or its `.idx` could not be
    /// loaded (git: "failed to load pack in position").
    #[error("failed to load pack {pack} ({name:?})")]
    PackMissing {
        /// The pack int id.
        pack: u32,
        /// Its name in the file.
        name: OsString,
    },
    /// (verify with packs) The `.idx` of the object's pack does not list it (git: "failed to load pack entry").
    #[error("object {object} ({id}) is said to be in pack {pack}, whose index does not list it")]
    ObjectNotInPack {
        /// The object's position in the file.
        object: u32,
        /// Its id.
        id: ObjectId,
        /// The pack int id the file gives.
        pack: u32,
    },
    /// (verify with packs) The `.idx` of the object's pack gives another offset (git: "incorrect object
    /// offset").
    #[error(
        "incorrect offset for object {object} ({id}) in pack {pack}: {offset} != {idx_offset} (the \
                 pack's index)"
    )]
    OffsetMismatch {
        /// The object's position in the file.
        object: u32,
        /// Its id.
        id: ObjectId,
        /// The pack int id the file gives.
        pack: u32,
        /// The offset this file gives.
        offset: u64,
        /// The offset the pack's `.idx` gives.
        idx_offset: u64,
    },
    /// (pack-index check) The own `.idx` of a pack the file covers lists an object the file does not list (found
    /// under [`MidxCheck::PackIndex`](crate::MidxCheck::PackIndex), when a miss checks its fanout bucket against
    /// the packs' own indices).
    #[error("object {id} of pack {pack} (its .idx lists it) is not listed in the multi-pack-index")]
    ObjectNotListed {
        /// The object's id.
        id: ObjectId,
        /// The pack int id of the pack whose `.idx` lists it.
        pack: u32,
    },
    /// (verify) The trailer is not the checksum of the file's contents.
    #[error("checksum mismatch: trailer says {stored}, contents hash to {computed}")]
    ChecksumMismatch {
        /// The checksum stored in the trailer.
        stored: ObjectId,
        /// The checksum of the contents.
        computed: ObjectId,
    },
    /// (verify) The object ids are not strictly increasing.
    #[error("object ids out of order: id {object} is not greater than id {}", .object.saturating_sub(1))]
    IdsOutOfOrder {
        /// The position of the first id that is not greater than the one before it.
        object: u32,
    },
    /// (verify) An object id is not in the fanout bucket of its first byte.
    #[error("object id {object} is not in the fanout bucket of its first byte")]
    IdNotInFanoutBucket {
        /// The object's position.
        object: u32,
    },
}
