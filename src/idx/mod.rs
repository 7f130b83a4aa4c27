//! Pack index (`.idx`) files, versions 1 and 2, SHA-1 and SHA-256.
//!
//! A [`PackIndex`] maps object ids to offsets in the pack beside it. Opening validates, in constant time, what
//! git's `check_packed_git_idx` checks: the header and version, a monotonic fan-out table, and a file size
//! that fits the object count (so an index claiming 2^31 objects in a sparse file opens without reading its
//! tables). Whatever the file holds, no lookup reads out of bounds, panics or allocates.
//!
//! What a lookup uses is checked when it is used: [`PackIndex::find`] answers a typed [`IdxProblem`] for an
//! entry whose 64-bit offset reference lies outside the file's 64-bit offset table, or whose offset lies inside
//! the 12-byte pack header or (once the pack's length is known, [`PackIndex::with_pack_len`]) at or past the
//! pack's trailing checksum, as git's `use_pack` does; it never answers such an offset.
//! [`PackIndex::check_pack`] reads only the last hash-length bytes of the `.pack` and compares them with the
//! pack checksum the index records, as git does when it opens a pack. [`PackIndex::verify`] checks the whole
//! file: every offset as above, ids sorted and in their buckets, and the trailer checksum; a file whose ids are
//! not sorted can make lookups miss, never misreport an offset.
//!
//! Lookups find the id's fan-out bucket, then predict its position inside the bucket from its next bytes
//! (object ids are uniformly distributed), correct the prediction once from the id found there, and confirm
//! with a short gallop and binary search. [`PackIndex::lookup_binary`] and [`PackIndex::position_binary`] are
//! the plain binary search that git uses: the reference the fast search is tested against (property tests,
//! the fuzz target, git's own indexes), public so a user can cross-check it too.
//!
//! ```
//! use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
//! use odb_index::HashKind;
//!
//! let kind = HashKind::Sha1;
//! let entries: Vec<Entry> = (0u64..100)
//!     .map(|i| Entry { id: kind.digest(&i.to_le_bytes()), offset: 12 + 100 * i, crc32: 0 })
//!     .collect();
//! let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
//! let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
//! assert_eq!(idx.len(), 100);
//! assert_eq!(idx.lookup_id(&entries[7].id), Some(712));
//! assert_eq!(idx.lookup(kind.digest(b"absent").as_bytes()), None);
//! idx.verify().unwrap();
//!
//! // Knowing the pack's length, offsets at or past its trailing checksum are errors, never answers.
//! let idx = idx.with_pack_len(500);
//! assert_eq!(idx.find(entries[4].id.as_bytes()), Ok(Some(412)));
//! assert!(matches!(
//!     idx.find(entries[7].id.as_bytes()),
//!     Err(odb_index::idx::IdxProblem::OffsetPastPackEnd { offset: 712, pack_len: 500, .. })
//! ));
//! assert!(idx.verify().is_err());
//! ```
//!
//! (Why one file of this size: the parser, the checks at open and at use, and the search whose unchecked reads
//! rely on those checks belong together, so that a reader can see each `unsafe` read beside the check at open
//! that makes it sound. The writer and the tests live in `write.rs` and `tests.rs`.)

mod batch;
mod order;
mod prefix;
pub mod write;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::data::{Data, FileProblem, LoadMode};
use crate::error::Error;
pub use crate::error::IdxProblem;
use crate::fanout::BucketState;
use crate::oid::{HashKind, ObjectId};

/// The first four bytes of a version 2 (or later) index.
const SIGNATURE: [u8; 4] = *b"\xfftOc";
/// Bytes in the fan-out table.
const FANOUT_LEN: u64 = 256 * 4;
/// Bytes in a pack's header (`PACK`, version, object count): no object starts before them.
pub const PACK_HEADER_LEN: u64 = 12;

/// Whether `offset` can be where an object starts in a pack of `pack_len` bytes whose trailing checksum is
/// `hash_len` bytes: `12 <= offset < pack_len - hash_len` (git's `use_pack` bounds).
#[inline]
pub fn offset_in_pack(offset: u64, pack_len: u64, hash_len: usize) -> bool {
    offset >= PACK_HEADER_LEN && offset < pack_len.saturating_sub(hash_len as u64)
}

/// What [`PackIndex::find_entry`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The index does not list the id.
    Missing,
    /// The object starts at this offset of the pack (checked as [`PackIndex::find`] checks it).
    At(u64),
    /// The index lists the id at this position, with an offset that cannot be right
    /// ([`PackIndex::checked_offset_at`] says why).
    Bad(u32),
}

/// A validated pack index file, mapped or read into memory.
///
/// Every accessor is bounds-checked against what was validated at open; none panics, whatever the file holds.
#[derive(Debug)]
pub struct PackIndex {
    data: Data,
    path: PathBuf,
    kind: HashKind,
    version: u32,
    count: u32,
    /// `fanout[b]..fanout[b + 1]` is the range of entries whose first byte is `b`; `fanout[0] == 0`.
    /// Monotonic, and `fanout[256] == count`.
    fanout: [u32; 257],
    /// Byte offset of the first id.
    ids_at: usize,
    /// Bytes from one id to the next (the hash length for v2, hash length + 4 for v1).
    stride: usize,
    /// v2: byte offset of the CRC table.
    crc_at: usize,
    /// v1: byte offset of the first entry (whose first 4 bytes are the offset); v2: of the 32-bit offset table.
    offsets_at: usize,
    /// v2: byte offset of the 64-bit offset table.
    large_at: usize,
    /// v2: how many 64-bit offsets the file holds.
    large_count: u64,
    /// Offsets must be below this: the pack's length minus its trailing checksum, or `u64::MAX` while the
    /// pack's length is not known.
    offset_end: u64,
    /// The pack's length, once known ([`PackIndex::with_pack_len`]).
    pack_len: Option<u64>,
    /// Byte offset of the trailer (pack checksum, then index checksum).
    trailer_at: usize,
    /// Which fan-out buckets were checked in order (a miss there is certain): see [`PackIndex::confirm_miss`].
    buckets: BucketState,
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}

fn be64(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    Some(u64::from_be_bytes(b.try_into().ok()?))
}

/// Overflow while computing sizes: the file cannot be that large, so it is reported as a size problem.
fn to_usize(v: u64, len: u64) -> Result<usize, IdxProblem> {
    usize::try_from(v).map_err(|_| IdxProblem::SizeMismatch {
        expected: v,
        actual: len,
    })
}

impl PackIndex {
    /// Map and validate the index at `path`, whose ids are of `kind`.
    pub fn open(path: &Path, kind: HashKind) -> Result<PackIndex, Error> {
        Self::open_with(path, kind, LoadMode::Mmap)
    }

    /// Load (as `mode` says) and validate the index at `path`, whose ids are of `kind`.
    pub fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<PackIndex, Error> {
        let data = Data::open(path, mode).map_err(|e| Error::io(path, e))?;
        Self::from_data(data, path.to_owned(), kind)
    }

    /// Open a pack's own `.idx` and check it against the `.pack` beside it (same name, `.pack` for `.idx`): the
    /// one way the store, [`Handle::locate_in_pack`](crate::store::Handle::locate_in_pack) and `verify` open
    /// a pack's index. [`open_with`](Self::open_with), then [`check_pack`](Self::check_pack) (the pack's trailing
    /// checksum and its header's object count, as git when it opens a pack), then
    /// [`with_pack_len`](Self::with_pack_len) so that every offset is checked against the pack's length.
    ///
    /// Errors: those of [`open_with`](Self::open_with) and [`check_pack`](Self::check_pack); a valid index of
    /// the other hash function is [`Error::WrongHashKind`] rather than "corrupt".
    pub fn open_for_pack(
        idx_path: &Path,
        kind: HashKind,
        mode: LoadMode,
    ) -> Result<PackIndex, Error> {
        let idx = PackIndex::open_with(idx_path, kind, mode)
            .map_err(|e| name_wrong_hash_kind(e, idx_path, kind, mode))?;
        let pack_len = idx.check_pack(&idx_path.with_extension("pack"))?;
        Ok(idx.with_pack_len(pack_len))
    }

    /// Validate `data` as an index of `kind`; `path` names it in errors.
    pub fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<PackIndex, Error> {
        match Self::parse(&data, kind) {
            Ok(layout) => Ok(PackIndex {
                data,
                path,
                kind,
                ..layout
            }),
            Err(problem) => Err(Error::CorruptIndex { path, problem }),
        }
    }

    /// Check the layout of `d`; returns a `PackIndex` with an empty placeholder for data and path.
    fn parse(d: &[u8], kind: HashKind) -> Result<PackIndex, IdxProblem> {
        let h = kind.len() as u64;
        let len = d.len() as u64;
        let trailer = 2 * h;
        if len < FANOUT_LEN + trailer {
            return Err(IdxProblem::TooSmall {
                len,
                min: FANOUT_LEN + trailer,
            });
        }
        let version = if d.get(..4) == Some(&SIGNATURE[..]) {
            let v = be32(d, 4).unwrap_or(0);
            if v != 2 {
                return Err(IdxProblem::UnsupportedVersion(v));
            }
            if len < 8 + FANOUT_LEN + trailer {
                return Err(IdxProblem::TooSmall {
                    len,
                    min: 8 + FANOUT_LEN + trailer,
                });
            }
            2
        } else {
            1
        };
        let fanout_at: usize = if version == 2 { 8 } else { 0 };
        let mut fanout = [0u32; 257];
        let mut previous = 0u32;
        // In bounds: the length was checked above.
        let table = d
            .get(fanout_at..fanout_at + FANOUT_LEN as usize)
            .unwrap_or(&[]);
        for (b, word) in table.as_chunks::<4>().0.iter().enumerate() {
            let n = u32::from_be_bytes(*word);
            if n < previous {
                return Err(IdxProblem::NonMonotonicFanout {
                    bucket: b as u8,
                    count: n,
                    previous,
                });
            }
            fanout[b + 1] = n;
            previous = n;
        }
        let count = previous;
        let n = u64::from(count);
        let bad_size = |expected| IdxProblem::SizeMismatch {
            expected,
            actual: len,
        };
        let hu = kind.len();
        if version == 1 {
            let expected = n
                .checked_mul(4 + h)
                .and_then(|v| v.checked_add(FANOUT_LEN + trailer))
                .ok_or(bad_size(u64::MAX))?;
            if expected != len {
                return Err(bad_size(expected));
            }
            let trailer_at = to_usize(len - trailer, len)?;
            return Ok(PackIndex {
                data: Data::Vec(Vec::new()),
                path: PathBuf::new(),
                kind,
                version,
                count,
                fanout,
                ids_at: FANOUT_LEN as usize + 4,
                stride: hu + 4,
                crc_at: 0,
                offsets_at: FANOUT_LEN as usize,
                large_at: trailer_at,
                large_count: 0,
                offset_end: u64::MAX,
                pack_len: None,
                trailer_at,
                buckets: BucketState::default(),
            });
        }
        let min = n
            .checked_mul(h + 8)
            .and_then(|v| v.checked_add(8 + FANOUT_LEN + trailer))
            .ok_or(bad_size(u64::MAX))?;
        let max = n
            .saturating_sub(1)
            .checked_mul(8)
            .and_then(|v| v.checked_add(min))
            .ok_or(bad_size(u64::MAX))?;
        if len < min || len > max {
            return Err(IdxProblem::SizeOutOfRange {
                min,
                max,
                actual: len,
            });
        }
        let large_len = len - min;
        if !large_len.is_multiple_of(8) {
            return Err(IdxProblem::MisalignedLargeOffsets { len: large_len });
        }
        let large_count = large_len / 8;
        let ids_at = 8 + FANOUT_LEN as usize;
        // All below `len`, which fits in usize: the data is in memory.
        let crc_at = to_usize(8 + FANOUT_LEN + n * h, len)?;
        let offsets_at = to_usize(8 + FANOUT_LEN + n * (h + 4), len)?;
        let large_at = to_usize(8 + FANOUT_LEN + n * (h + 8), len)?;
        let trailer_at = to_usize(len - trailer, len)?;
        Ok(PackIndex {
            data: Data::Vec(Vec::new()),
            path: PathBuf::new(),
            kind,
            version,
            count,
            fanout,
            ids_at,
            stride: hu,
            crc_at,
            offsets_at,
            large_at,
            large_count,
            offset_end: u64::MAX,
            pack_len: None,
            trailer_at,
            buckets: BucketState::default(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file format version: 1 or 2.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The hash kind of the ids.
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// How many objects the index lists.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether the index lists no object.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The id of entry `i` (in sorted order), if `i < len()`.
    #[inline]
    pub fn id_at(&self, i: u32) -> Option<&[u8]> {
        if i >= self.count {
            return None;
        }
        let s = self
            .ids_at
            .checked_add((i as usize).checked_mul(self.stride)?)?;
        self.data.get(s..s.checked_add(self.kind.len())?)
    }

    /// The pack offset of entry `i` (in sorted order) as the file records it, if `i < len()` and, for a
    /// 64-bit offset, the reference is inside the file's 64-bit offset table. Not checked against the pack (see
    /// [`checked_offset_at`](Self::checked_offset_at)).
    #[inline]
    pub fn offset_at(&self, i: u32) -> Option<u64> {
        self.raw_offset_at(i)?.ok()
    }

    /// The pack offset of entry `i`, checked as a lookup uses it: the 64-bit offset reference is inside the
    /// file's table, and the offset is past the 12-byte pack header and (once
    /// [`with_pack_len`](Self::with_pack_len) gave the pack's length) before the pack's trailing checksum.
    /// `None` if `i >= len()`.
    #[inline]
    pub fn checked_offset_at(&self, i: u32) -> Option<Result<u64, IdxProblem>> {
        Some(self.raw_offset_at(i)?.and_then(|offset| {
            if offset < PACK_HEADER_LEN {
                return Err(IdxProblem::OffsetInPackHeader { entry: i, offset });
            }
            // `offset_end` is u64::MAX while the pack's length is unknown: then nothing is past the end.
            if offset >= self.offset_end
                && let Some(pack_len) = self.pack_len
            {
                return Err(IdxProblem::OffsetPastPackEnd {
                    entry: i,
                    offset,
                    pack_len,
                });
            }
            Ok(offset)
        }))
    }

    /// Entry `i`'s offset as recorded; `Err` for a 64-bit reference outside the 64-bit offset table; `None`
    /// if `i >= len()`.
    #[inline]
    fn raw_offset_at(&self, i: u32) -> Option<Result<u64, IdxProblem>> {
        if i >= self.count {
            return None;
        }
        let d: &[u8] = &self.data;
        if self.version == 1 {
            let at = self
                .offsets_at
                .checked_add((i as usize).checked_mul(self.stride)?)?;
            return be32(d, at).map(|o| Ok(u64::from(o)));
        }
        let w = be32(
            d,
            self.offsets_at.checked_add((i as usize).checked_mul(4)?)?,
        )?;
        if w & 0x8000_0000 == 0 {
            return Some(Ok(u64::from(w)));
        }
        // Checked here, not at open (a scan of the whole offset table): a reference past the table would read
        // the trailer or another entry's bytes as an offset.
        let index = w & 0x7fff_ffff;
        if u64::from(index) >= self.large_count {
            return Some(Err(IdxProblem::LargeOffsetOutOfRange {
                entry: i,
                index,
                count: self.large_count,
            }));
        }
        let at = self
            .large_at
            .checked_add((index as usize).checked_mul(8)?)?;
        be64(d, at).map(Ok)
    }

    /// This index with the length of its `.pack` known: from now on an offset at or past the pack's trailing
    /// checksum (`pack_len - hash length`) is [`IdxProblem::OffsetPastPackEnd`] in [`find`](Self::find),
    /// [`checked_offset_at`](Self::checked_offset_at) and [`verify`](Self::verify), and is never answered by
    /// [`lookup`](Self::lookup).
    pub fn with_pack_len(mut self, pack_len: u64) -> Self {
        self.pack_len = Some(pack_len);
        self.offset_end = pack_len.saturating_sub(self.kind.len() as u64);
        self
    }

    /// The pack's length, if [`with_pack_len`](Self::with_pack_len) gave it.
    pub fn pack_len(&self) -> Option<u64> {
        self.pack_len
    }

    /// Check that the `.pack` at `pack` is the one this index describes, as git does when it opens a pack: read
    /// only its last hash-length bytes (one positioned read; the pack is never hashed) and compare them with
    /// [`pack_checksum`](Self::pack_checksum). Returns the pack's length (give it to
    /// [`with_pack_len`](Self::with_pack_len)).
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

    /// The CRC-32 of entry `i`'s packed bytes: version 2 only (`None` for version 1 or `i >= len()`).
    pub fn crc32_at(&self, i: u32) -> Option<u32> {
        if self.version == 1 || i >= self.count {
            return None;
        }
        be32(
            &self.data,
            self.crc_at.checked_add((i as usize).checked_mul(4)?)?,
        )
    }

    /// The checksum of the pack this index describes (the first half of the trailer).
    pub fn pack_checksum(&self) -> ObjectId {
        self.trailer_id(0)
    }

    /// The index file's own checksum (the last bytes of the file).
    pub fn index_checksum(&self) -> ObjectId {
        self.trailer_id(self.kind.len())
    }

    fn trailer_id(&self, skip: usize) -> ObjectId {
        let at = self.trailer_at + skip;
        self.data
            .get(at..at + self.kind.len())
            .and_then(ObjectId::from_bytes)
            .unwrap_or(ObjectId::null(self.kind))
    }

    /// Every `(id, offset)` in sorted id order.
    pub fn iter(&self) -> impl Iterator<Item = (ObjectId, u64)> + '_ {
        (0..self.count).filter_map(move |i| {
            let id = ObjectId::from_bytes(self.id_at(i)?)?;
            Some((id, self.offset_at(i)?))
        })
    }

    /// Where the object `id` (raw bytes of this index's hash kind) starts in the pack: `Ok(None)` if the index
    /// does not list it (or `id` has the wrong length), `Err` if it lists it with an offset that cannot be
    /// right (see [`checked_offset_at`](Self::checked_offset_at)): never a wrong offset.
    #[inline]
    pub fn find(&self, id: &[u8]) -> Result<Option<u64>, IdxProblem> {
        match self.find_entry(id) {
            Found::At(offset) => Ok(Some(offset)),
            Found::Missing => Ok(None),
            Found::Bad(i) => match self.checked_offset_at(i) {
                Some(Err(problem)) => Err(problem),
                // `find_entry` and `checked_offset_at` make the same checks.
                other => Ok(other.and_then(Result::ok)),
            },
        }
    }

    /// Whether the fan-out bucket of ids beginning with byte `first` holds no entry:
    /// [`find_entry`](Self::find_entry) then misses without reading the ids (and so does every search of this
    /// file for such an id). Two loads from the table copied at open, no branch.
    #[inline(always)]
    pub(crate) fn bucket_is_empty(&self, first: u8) -> bool {
        let b = usize::from(first);
        self.fanout[b] >= self.fanout[b + 1]
    }

    /// The positions of fan-out bucket `first` (the ids whose first byte is `first`, if the file is right).
    pub(crate) fn bucket_range(&self, first: u8) -> std::ops::Range<u32> {
        let b = usize::from(first);
        self.fanout[b]..self.fanout[b + 1].max(self.fanout[b])
    }

    /// [`find`](Self::find) in the shape of the hot path: the same checks, but a bad entry is only its position
    /// ([`checked_offset_at`](Self::checked_offset_at) says what is wrong with it), so nothing large is built
    /// or returned on a hit.
    #[inline]
    pub fn find_entry(&self, id: &[u8]) -> Found {
        let Some(i) = self.position(id) else {
            return Found::Missing;
        };
        match self.usable_offset(i) {
            Some(offset) => Found::At(offset),
            None => Found::Bad(i),
        }
    }

    /// Entry `i`'s offset if [`checked_offset_at`](Self::checked_offset_at) would accept it, without building
    /// a problem otherwise.
    #[inline(always)]
    fn usable_offset(&self, i: u32) -> Option<u64> {
        let d: &[u8] = &self.data;
        let offset = if self.version == 1 {
            u64::from(be32(
                d,
                self.offsets_at
                    .wrapping_add((i as usize).wrapping_mul(self.stride)),
            )?)
        } else {
            let w = be32(
                d,
                self.offsets_at.wrapping_add((i as usize).wrapping_mul(4)),
            )?;
            if w & 0x8000_0000 == 0 {
                u64::from(w)
            } else {
                let index = w & 0x7fff_ffff;
                if u64::from(index) >= self.large_count {
                    return None;
                }
                be64(d, self.large_at.wrapping_add(index as usize * 8))?
            }
        };
        (offset >= PACK_HEADER_LEN && (offset < self.offset_end || self.pack_len.is_none()))
            .then_some(offset)
    }

    /// The pack offset of the object `id` (raw bytes of this index's hash kind), or `None` if the index does not
    /// list it, `id` has the wrong length, or its entry's offset cannot be right ([`find`](Self::find) says
    /// why).
    #[inline]
    pub fn lookup(&self, id: &[u8]) -> Option<u64> {
        self.find(id).ok().flatten()
    }

    /// [`lookup`](Self::lookup) for an [`ObjectId`]; `None` if it is of another hash kind.
    #[inline]
    pub fn lookup_id(&self, id: &ObjectId) -> Option<u64> {
        self.lookup(id.as_bytes())
    }

    /// The position of `id` in sorted order, or `None` if the index does not list it.
    #[inline]
    pub fn position(&self, id: &[u8]) -> Option<u32> {
        match self.kind {
            HashKind::Sha1 => self.find_interpolated::<20>(id.try_into().ok()?),
            HashKind::Sha256 => self.find_interpolated::<32>(id.try_into().ok()?),
        }
    }

    /// Like [`lookup`](Self::lookup), with git's plain binary search inside the fan-out bucket
    /// (`bsearch_hash`, under `find_pack_entry_one`) instead of the interpolation search: the reference the fast search is checked
    /// against. On an index whose ids are sorted (every index [`verify`](Self::verify) accepts) both give the
    /// same answer for every id; on one whose ids are not, either may miss an id the other finds, never
    /// misreport an offset. Same bounds checks, no allocation, no panic.
    ///
    /// ```
    /// use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
    /// use odb_index::HashKind;
    ///
    /// let kind = HashKind::Sha1;
    /// let entries: Vec<Entry> = (0u64..50)
    ///     .map(|i| Entry { id: kind.digest(&i.to_le_bytes()), offset: 12 + 10 * i, crc32: 0 })
    ///     .collect();
    /// let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
    /// let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
    /// for e in &entries {
    ///     assert_eq!(idx.lookup_binary(e.id.as_bytes()), Some(e.offset));
    ///     assert_eq!(idx.lookup_binary(e.id.as_bytes()), idx.lookup(e.id.as_bytes()));
    /// }
    /// assert_eq!(idx.lookup_binary(kind.digest(b"absent").as_bytes()), None);
    /// assert_eq!(idx.lookup_binary(b"too short"), None);
    /// ```
    pub fn lookup_binary(&self, id: &[u8]) -> Option<u64> {
        self.checked_offset_at(self.position_binary(id)?)?.ok()
    }

    /// Like [`position`](Self::position), with git's plain binary search inside the fan-out bucket: the
    /// reference for it, as [`lookup_binary`](Self::lookup_binary) is for [`lookup`](Self::lookup).
    ///
    /// ```
    /// use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
    /// use odb_index::HashKind;
    ///
    /// let kind = HashKind::Sha256;
    /// let mut entries: Vec<Entry> = (0u64..50)
    ///     .map(|i| Entry { id: kind.digest(&i.to_le_bytes()), offset: 12 + 10 * i, crc32: 0 })
    ///     .collect();
    /// let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
    /// let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind).unwrap();
    /// entries.sort_by(|a, b| a.id.as_bytes().cmp(b.id.as_bytes()));
    /// for (i, e) in entries.iter().enumerate() {
    ///     assert_eq!(idx.position_binary(e.id.as_bytes()), Some(i as u32));
    ///     assert_eq!(idx.position(e.id.as_bytes()), Some(i as u32));
    /// }
    /// assert_eq!(idx.position_binary(kind.digest(b"absent").as_bytes()), None);
    /// ```
    pub fn position_binary(&self, id: &[u8]) -> Option<u32> {
        if id.len() != self.kind.len() {
            return None;
        }
        let b = usize::from(*id.first()?);
        let (mut lo, mut hi) = (self.fanout[b], self.fanout[b + 1]);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id_at(mid)?.cmp(id) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The id bytes of entry `i`, without a bounds check.
    ///
    /// # Safety
    /// `i < self.count`, `d` is `self.data`, and `H == self.kind.len()`.
    #[inline(always)]
    unsafe fn entry<'a, const H: usize>(&self, d: &'a [u8], i: u32) -> &'a [u8; H] {
        // No overflow and in bounds: `parse` checked that the file holds `count` entries of `stride` bytes from
        // `ids_at`, each beginning with an id of `kind.len() == H` bytes (v2: the ids end where the CRC table
        // begins, `ids_at + count * H <= len`; v1: `ids_at - 4 + count * (H + 4) <= len - trailer`).
        let s = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        debug_assert!(i < self.count && s + H <= d.len());
        // SAFETY: by the caller's contract and the layout checked at open (above), `s..s + H` is in `d`; a
        // `[u8; H]` has alignment 1.
        unsafe { &*d.as_ptr().add(s).cast::<[u8; H]>() }
    }

    /// The first 8 bytes of entry `i` (big-endian), and whether the entry is less than, equal to or greater than
    /// `id` (whose first 8 bytes are `key`).
    ///
    /// # Safety
    /// As [`entry`](Self::entry).
    #[inline(always)]
    unsafe fn cmp_entry<const H: usize>(
        &self,
        d: &[u8],
        i: u32,
        key: u64,
        id: &[u8; H],
    ) -> (u64, Ordering) {
        // SAFETY: forwarded to the caller.
        let e = unsafe { self.entry::<H>(d, i) };
        let (head, tail) = e.split_at(8);
        let mut p = [0u8; 8];
        p.copy_from_slice(head);
        let p = u64::from_be_bytes(p);
        let o = match p.cmp(&key) {
            Ordering::Equal => tail.cmp(&id[8..]),
            o => o,
        };
        (p, o)
    }

    /// Interpolation search inside the fan-out bucket: predict, correct once, gallop, then binary search.
    ///
    /// Terminates and stays in bounds for any file: every probe lies in the bracket `[l, r)`, which shrinks
    /// with every probe, and the bracket starts as a fan-out bucket, inside `[0, count)` (the fan-out was
    /// checked monotonic with `fanout[256] == count` at open). It finds `id` whenever the ids are sorted (the
    /// bracket holds everything that can equal it). No bounds checks in the loop: every probe index is below
    /// `r <= count` (the `// SAFETY` comments name the invariant at each probe).
    #[inline]
    fn find_interpolated<const H: usize>(&self, id: &[u8; H]) -> Option<u32> {
        debug_assert_eq!(H, self.kind.len());
        let d: &[u8] = &self.data;
        let b = usize::from(id[0]);
        let (mut l, mut r) = (self.fanout[b], self.fanout[b + 1]);
        if l >= r {
            return None;
        }
        let key = u64::from_be_bytes(*id.first_chunk::<8>()?);
        let n = r - l;
        // The 7 bytes after the first, as a fraction of the bucket (scaled to 2^64): below n, so p < r.
        let frac = key << 8;
        let mut p = l.wrapping_add(((u128::from(frac) * u128::from(n)) >> 64) as u32);
        // SAFETY: l <= p < r <= count.
        let (v, o) = unsafe { self.cmp_entry::<H>(d, p, key, id) };
        match o {
            Ordering::Equal => return Some(p),
            Ordering::Less => l = p + 1,
            Ordering::Greater => r = p,
        }
        if l >= r {
            return None;
        }
        // A correction by the distance in id space from the id found at p, at the bucket's density (n ids per
        // 2^56): |diff| < 2^64 and n <= 2^32, so the product fits in i128; clamped into the bracket.
        let diff = i128::from(key) - i128::from(v);
        let step = (diff * i128::from(n)) >> 56;
        p = (i128::from(p) + step).clamp(i128::from(l), i128::from(r) - 1) as u32;
        // SAFETY: l <= p < r <= count (clamped).
        let forward = match unsafe { self.cmp_entry::<H>(d, p, key, id) }.1 {
            Ordering::Equal => return Some(p),
            Ordering::Less => {
                l = p + 1;
                true
            }
            Ordering::Greater => {
                r = p;
                false
            }
        };
        if l >= r {
            return None;
        }
        self.gallop::<H>(d, id, key, p, l, r, forward)
    }

    /// Gallop away from the last probe `p` in the direction of `id` (doubling the step), then binary search
    /// the bracket `[l, r)` (with `r <= count`). Every probe `q` is checked to lie in `[l, r)` before it is read.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn gallop<const H: usize>(
        &self,
        d: &[u8],
        id: &[u8; H],
        key: u64,
        mut p: u32,
        mut l: u32,
        mut r: u32,
        forward: bool,
    ) -> Option<u32> {
        let mut step = 1u32;
        if forward {
            // Entries up to p are < id.
            loop {
                let q = match p.checked_add(step) {
                    Some(q) if q < r => q,
                    _ => break,
                };
                // SAFETY: q < r <= count.
                match unsafe { self.cmp_entry::<H>(d, q, key, id) }.1 {
                    Ordering::Equal => return Some(q),
                    Ordering::Less => {
                        l = q + 1;
                        p = q;
                        step = step.saturating_mul(2);
                    }
                    Ordering::Greater => {
                        r = q;
                        break;
                    }
                }
            }
        } else {
            // Entries from p on are > id.
            loop {
                let q = match p.checked_sub(step) {
                    Some(q) if q >= l => q,
                    _ => break,
                };
                // SAFETY: l <= q < p == r <= count (going backwards, r is always the last probe).
                match unsafe { self.cmp_entry::<H>(d, q, key, id) }.1 {
                    Ordering::Equal => return Some(q),
                    Ordering::Greater => {
                        r = q;
                        p = q;
                        step = step.saturating_mul(2);
                    }
                    Ordering::Less => {
                        l = q + 1;
                        break;
                    }
                }
            }
        }
        while l < r {
            let mid = l + (r - l) / 2;
            // SAFETY: l <= mid < r <= count.
            match unsafe { self.cmp_entry::<H>(d, mid, key, id) }.1 {
                Ordering::Less => l = mid + 1,
                Ordering::Greater => r = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
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
        let body_len = self.trailer_at + h;
        let expected = self.index_checksum();
        let actual = self.kind.digest(self.data.get(..body_len).unwrap_or(&[]));
        if expected != actual {
            return Err(IdxProblem::ChecksumMismatch { expected, actual });
        }
        Ok(())
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;

/// A `.idx` carries no hash id: one written for the other hash function just looks malformed. If it is a
/// valid index of the other kind, say so instead of "corrupt" (only on this failure path).
fn name_wrong_hash_kind(e: Error, path: &Path, kind: HashKind, mode: LoadMode) -> Error {
    let other = match kind {
        HashKind::Sha1 => HashKind::Sha256,
        HashKind::Sha256 => HashKind::Sha1,
    };
    match e {
        Error::CorruptIndex { .. } if PackIndex::open_with(path, other, mode).is_ok() => {
            Error::WrongHashKind {
                path: path.to_path_buf(),
                expected: kind,
                found: other,
            }
        }
        e => e,
    }
}
