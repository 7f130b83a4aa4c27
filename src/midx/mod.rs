//! The `multi-pack-index` file (`objects/pack/multi-pack-index`): one sorted table of the objects of many packs.
//!
//! The format is git's (`gitformat-pack(5)`, section "multi-pack-index (MIDX) files have the following format",
//! laid out as a chunk file, `gitformat-chunk(5)`):
//!
//! - a 12-byte header: `MIDX`, the file version (1 or 2), the object id version (1 = SHA-1, 2 = SHA-256), the
//!   number of chunks, the number of base multi-pack-index files (0: git writes 0 even in the layers of an
//!   incremental chain, which `chain` reads; another value is [`MidxProblem::IncrementalNotSupported`]) and the
//!   number of packs;
//! - a table of contents of `chunks + 1` rows of a 4-byte chunk id and an 8-byte offset, ending with id 0, whose
//!   offset is where the last chunk ends;
//! - the chunks: `PNAM` (the packs' `.idx` names, NUL-terminated, padded with up to 3 NULs), `OIDF` (256-entry
//!   fanout), `OIDL` (the sorted ids), `OOFF` (per object: pack int id and 32-bit offset), `LOFF` (optional 64-bit
//!   offsets); `BTMP` and `RIDX` are checked at open (sizes, the length of `BTMP`'s ranges; where they lie is
//!   [`MultiPackIndex::check_bitmapped_packs`], given the layers below) but not read by lookups; other
//!   chunks are skipped;
//! - a trailer: the checksum of everything before it.
//!
//! Version 1 requires the pack names to be in strictly increasing byte order; version 2 (written by newer git
//! with `midx.version = 2`, and needed by its multi-pack-index compaction) lets them appear in any order, which
//! is the only difference between the two. Names must be distinct in both (git's reader does not check this for
//! version 2; a repeated name can only be corruption). Names must also be plain file names (no `/`, `\`, `.`,
//! `..`, not empty), since the store joins them to the pack directory.
//!
//! [`MultiPackIndex::open`] checks the header, the chunk table, the chunk sizes, the fanout and the pack names,
//! in O(packs) whatever the number of objects: after it succeeds, no lookup reads outside the file. What one
//! object's entry holds is checked when it is used: [`MultiPackIndex::find`] answers a typed [`MidxProblem`] for
//! a pack int id that names no pack, a large-offset reference past the `LOFF` chunk, an offset inside the pack
//! header, or (the store's lookup, `MultiPackIndex::find_entry`, given the packs' lengths) an offset at or past
//! its pack's trailing checksum; it never answers such a location. One search (`MultiPackIndex::search`, the
//! `.idx`'s) finds an id's position, one position function (`MultiPackIndex::entry`, with its bounds) turns it
//! into a location, and `MultiPackIndex::entry_problem` says what is wrong with one it does not answer. The order of the ids, the trailer checksum and every entry are
//! checked by [`MultiPackIndex::verify`]; [`MultiPackIndex::verify_with_packs`] also checks every entry against
//! the `.idx` of its pack, as `git multi-pack-index verify` does. On a file whose ids are out of order, a lookup
//! may miss an object, but it never reports a location for an id that is not the one asked for.
//!
//! ```
//! use odb_index::midx::MultiPackIndex;
//! use odb_index::{HashKind, ObjectId};
//! use std::process::Command;
//!
//! // Two packs and their multi-pack-index, written by git.
//! let repo = tempfile::tempdir()?;
//! let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
//! git(&["init", "-q"])?;
//! for (file, text) in [("a.txt", "a\n"), ("hello.txt", "hello\n")] {
//!     std::fs::write(repo.path().join(file), text)?;
//!     git(&["add", file])?;
//!     git(&["repack", "-q"])?; // one more pack
//! }
//! git(&["multi-pack-index", "write"])?;
//!
//! let path = repo.path().join(".git/objects/pack/multi-pack-index");
//! let midx = MultiPackIndex::open(&path, HashKind::Sha1)?;
//! assert_eq!(midx.pack_names().len(), 2);
//! assert_eq!(midx.len(), 2);
//! let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
//! let (pack, offset) = midx.find(hello.as_bytes())?.expect("listed");
//! assert!(midx.pack_names()[pack as usize].as_encoded_bytes().starts_with(b"pack-"));
//! assert_eq!(offset, 12);
//! assert_eq!(midx.find(HashKind::Sha1.digest(b"absent").as_bytes())?, None);
//! midx.verify()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The file is cut as gix-pack cuts its formats: opening (the header, the chunk table and the checks at open) in
//! `layout.rs`, the lookups that rely on those checks in `access.rs`, the checks of `verify` in `verify.rs`; the
//! writer, the chain reader, prefix search and the tests are in files of their own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::bytes::{be32, be64, head};
use crate::data::{Data, LoadMode};
use crate::error::Error;
// Defined in src/error/midx.rs, below `Error`, which names it: this module returns `Error`, and the two would
// import each other if the problem lived here.
pub use crate::error::MidxProblem;
use crate::fanout::{self, BucketFault};
pub use crate::ids::ChunkId;
use crate::idx::{PACK_HEADER_LEN, Probe, Table};
use crate::oid::{HashKind, ObjectId};
use layout::{Chunks, parse_layout, parse_pack_names};

pub(crate) mod chain;
pub use chain::ChainProblem;
mod access;
pub(crate) use access::MidxFound;
mod layout;
mod prefix;
mod verify;
#[cfg(any(test, feature = "test-support"))]
pub mod write;

/// Signature at the start of every multi-pack-index.
const SIGNATURE: [u8; 4] = *b"MIDX";
/// Size of the fixed header.
const HEADER_LEN: usize = 12;
/// Size of one row of the chunk table.
const TOC_ROW_LEN: usize = 12;
/// Size of the fanout chunk.
const FANOUT_LEN: usize = 256 * 4;
/// Size of one `OOFF` row.
const OOFF_ROW_LEN: usize = 8;
/// Size of one `LOFF` row.
const LOFF_ROW_LEN: usize = 8;
/// The bit of an `OOFF` offset that marks an index into `LOFF` (when that chunk exists).
const LARGE_OFFSET_BIT: u32 = 0x8000_0000;

/// Chunk id of the pack names.
pub(crate) const CHUNK_PNAM: ChunkId = ChunkId(*b"PNAM");
/// Chunk id of the fanout table.
pub(crate) const CHUNK_OIDF: ChunkId = ChunkId(*b"OIDF");
/// Chunk id of the sorted object ids.
pub(crate) const CHUNK_OIDL: ChunkId = ChunkId(*b"OIDL");
/// Chunk id of the per-object pack ids and offsets.
pub(crate) const CHUNK_OOFF: ChunkId = ChunkId(*b"OOFF");
/// Chunk id of the large (64-bit) offsets.
pub(crate) const CHUNK_LOFF: ChunkId = ChunkId(*b"LOFF");
/// Chunk id of the bitmapped packs (per pack: its first bit position and its object count in the bitmap).
pub(crate) const CHUNK_BTMP: ChunkId = ChunkId(*b"BTMP");
/// The reverse index chunk (optional): one `u32` position per object, in pack order.
pub(crate) const CHUNK_RIDX: ChunkId = ChunkId(*b"RIDX");
/// Size of one `RIDX` row.
const RIDX_ROW_LEN: usize = 4;
/// Bytes per pack in `BTMP`: two big-endian `u32`s.
const BTMP_ROW_LEN: usize = 8;

/// A checked multi-pack-index, mapped or in memory.
///
/// All the checks a lookup relies on are made when it is opened; see the [module documentation](self).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::midx::MultiPackIndex;
/// use odb_index::{HashKind, ObjectId};
///
/// git(&["multi-pack-index", "write"])?;
/// let path = repo.path().join(".git/objects/pack/multi-pack-index");
/// let midx = MultiPackIndex::open(&path, HashKind::Sha1)?;
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// assert_eq!(midx.find(hello.as_bytes())?, Some((0, 12))); // pack 0 of midx.pack_names(), offset 12
/// assert_eq!(midx.pack_names().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MultiPackIndex {
    data: Data,
    path: PathBuf,
    kind: HashKind,
    /// Where its chunks are, and what opening read of them.
    chunks: Chunks,
}

/// `cargo fuzz` builds only (it sets `--cfg fuzzing`): the crate-private lookup internals that
/// `fuzz/fuzz_targets/midx.rs` checks against each other. Never in a user's build, so not part of the API.
#[cfg(fuzzing)]
impl MultiPackIndex {
    /// Whether the store's lookup with the bounds of `pack_lens` and the check that explains a bad entry agree
    /// on `id` (`checks_agree`).
    pub fn fuzz_bounds_agree(&self, id: &[u8], pack_lens: &[u64]) -> bool {
        self.checks_agree(id, pack_lens)
    }

    /// Whether fanout bucket `first` passes the store's miss confirmation (its ids in order).
    pub fn fuzz_bucket_in_order(&self, first: u8) -> bool {
        self.check_bucket(first).is_ok()
    }
}

impl MultiPackIndex {
    /// Map `path` and check it (see `MultiPackIndex::from_data`).
    pub fn open(path: &Path, kind: HashKind) -> Result<Self, Error> {
        Self::open_with(path, kind, LoadMode::Mmap)
    }

    /// Bring `path` into memory as `mode` says and check it (see [`MultiPackIndex::from_data`]).
    pub(crate) fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error> {
        let data = Data::open(path, mode).map_err(|e| Error::io(path, e))?;
        Self::from_data(data, path.to_owned(), kind)
    }

    /// Check `data`, the contents of the multi-pack-index at `path` (used in errors), for a repository using
    /// `kind`.
    ///
    /// Checks the header, the chunk table, the chunk sizes, the fanout and the pack names: O(packs), whatever
    /// the number of objects. Not checked here: each object's pack int id and offset (checked when used, see
    /// [`MultiPackIndex::find`]), the order of the ids and the checksum (see [`MultiPackIndex::verify`]).
    pub(crate) fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<Self, Error> {
        match Chunks::check(&data, kind) {
            Ok(chunks) => Ok(MultiPackIndex {
                data,
                path,
                kind,
                chunks,
            }),
            Err(e) => Err(e.into_error(&path, kind)),
        }
    }

    /// The packs' `.idx` file names by pack int id (git's `pack-<hash>.idx`; `PNAM`'s bytes, maybe not UTF-8).
    pub fn pack_names(&self) -> &[OsString] {
        &self.chunks.pack_names
    }

    /// The number of objects.
    pub fn len(&self) -> u32 {
        self.chunks.fanout[255]
    }

    /// Whether the file lists no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The file version: 1 or 2.
    pub fn version(&self) -> u32 {
        u32::from(self.chunks.version)
    }

    /// The hash kind of the ids.
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// The path given when the file was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[inline]
    fn ids(&self) -> &[u8] {
        self.data
            .get(self.chunks.oidl.0..self.chunks.oidl.1)
            .unwrap_or(&[])
    }
}

/// Read only the header, the chunk table and the pack names of the multi-pack-index at `path` (mapped, so only
/// those pages are read): the `.idx` names of the packs it covers, in pack int id order. (The store reads them
/// from the mapping its listing keeps, `pack_names_in`; this opening reader is for tests.)
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn read_pack_names(path: &Path, kind: HashKind) -> Result<Vec<OsString>, Error> {
    let data = Data::open(path, LoadMode::Mmap).map_err(|e| Error::io(path, e))?;
    pack_names_in(&data, path, kind)
}

/// The pack names of `data`, the contents of the multi-pack-index at `path` (used in errors), reading only its
/// header, chunk table and `PNAM` chunk (as [`read_pack_names`] does).
pub(crate) fn pack_names_in(
    data: &[u8],
    path: &Path,
    kind: HashKind,
) -> Result<Vec<OsString>, Error> {
    let l = parse_layout(data, kind).map_err(|e| e.into_error(path, kind))?;
    parse_pack_names(&data[l.pnam.0..l.pnam.1], l.num_packs, l.version).map_err(|problem| {
        Error::CorruptMultiPackIndex {
            path: path.to_owned(),
            problem,
        }
    })
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
