//! Pack index (`.idx`) files, versions 1 and 2, SHA-1 and SHA-256.
//!
//! A [`PackIndex`] maps object ids to offsets in the pack beside it. Opening validates, in constant time, what
//! git's `check_packed_git_idx` checks: the header and version, a monotonic fan-out table, and a file size
//! that fits the object count (so an index claiming 2^31 objects in a sparse file opens without reading its
//! tables). Whatever the file holds, no lookup reads out of bounds, panics or allocates.
//!
//! What a lookup uses is checked when it is used: [`PackIndex::find`] answers a typed [`IdxProblem`] for an
//! entry whose 64-bit offset reference lies outside the file's 64-bit offset table, or whose offset lies inside
//! the 12-byte pack header or (once the pack's length is known, `PackIndex::with_pack_len`) at or past the
//! pack's trailing checksum, as git's `use_pack` does; it never answers such an offset.
//! [`PackIndex::check_pack`] reads only the last hash-length bytes of the `.pack` and compares them with the
//! pack checksum the index records, as git does when it opens a pack. [`PackIndex::verify`] checks the whole
//! file: every offset as above, ids sorted and in their buckets, and the trailer checksum; a file whose ids are
//! not sorted can make lookups miss, never misreport an offset.
//!
//! One search, `PackIndex::search`, finds the id's fan-out bucket, then predicts its position inside the bucket
//! from its next bytes (object ids are uniformly distributed), corrects the prediction once from the id found
//! there, and confirms with a short gallop and binary search; one position function,
//! [`PackIndex::checked_offset_at`], turns the position found into an offset, with every bound a lookup
//! checks. `PackIndex::find_entry` is the two together, the store's hot path; [`PackIndex::find`] the same with
//! a typed error. `PackIndex::position_binary` is the plain binary search that git uses (an index that lists an
//! id twice answers as git's does), and the reference the fast search is tested against (property tests, the
//! fuzz target, git's own indexes; the test-only lookups are in `testing::PackIndexExt`).
//!
//! ```
//! use odb_index::idx::PackIndex;
//! use odb_index::{HashKind, ObjectId};
//! use std::process::Command;
//!
//! // A pack of one blob, written by git.
//! let repo = tempfile::tempdir()?;
//! let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
//! git(&["init", "-q"])?;
//! std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
//! git(&["add", "hello.txt"])?;
//! git(&["repack", "-adq"])?;
//! let pack_dir = repo.path().join(".git/objects/pack");
//! let idx_path = std::fs::read_dir(&pack_dir)?
//!     .map(|e| e.map(|e| e.path()))
//!     .find(|p| p.as_ref().is_ok_and(|p| p.extension().is_some_and(|x| x == "idx")))
//!     .expect("git wrote a pack")?;
//!
//! let idx = PackIndex::open(&idx_path, HashKind::Sha1)?;
//! assert_eq!(idx.len(), 1);
//! let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
//! assert_eq!(idx.find(hello.as_bytes())?, Some(12)); // the first entry follows the 12-byte pack header
//! assert_eq!(idx.find(HashKind::Sha1.digest(b"absent").as_bytes())?, None);
//! idx.check_pack(&idx_path.with_extension("pack"))?;
//! idx.verify()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The file is cut as gix-pack cuts its formats: the checks at open in `layout.rs` (the unchecked reads of the
//! search in `search.rs` rely on them, and each `// SAFETY:` there names the check), the accessors and lookups
//! here, the checks against the pack and of the whole file in `verify.rs`, the writer and the tests in `write.rs`
//! and `tests.rs`.

mod batch;
mod layout;
mod order;
mod prefix;
mod search;
pub(crate) use search::{Probe, Table};
mod verify;
#[cfg(any(test, feature = "test-support"))]
pub mod write;

use layout::Tables;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::bytes::{be32, be64};
use crate::data::{Data, LoadMode};
use crate::error::Error;
// Defined in src/error/idx.rs, below `Error`, which names it: this module returns `Error`, and the two would
// import each other if the problem lived here.
pub use crate::error::IdxProblem;
use crate::fanout::BucketState;
use crate::oid::{HashKind, ObjectId};

/// The first four bytes of a version 2 (or later) index.
const SIGNATURE: [u8; 4] = *b"\xfftOc";
/// Bytes in the fan-out table.
const FANOUT_LEN: u64 = 256 * 4;
/// Bytes in a pack's header (`PACK`, version, object count): no object starts before them.
pub(crate) const PACK_HEADER_LEN: u64 = 12;

/// Whether `offset` can be where an object starts in a pack of `pack_len` bytes whose trailing checksum is
/// `hash_len` bytes: `12 <= offset < pack_len - hash_len` (git's `use_pack` bounds).
#[inline]
#[cfg_attr(not(any(test, feature = "test-support")), allow(dead_code))]
pub(crate) fn offset_in_pack(offset: u64, pack_len: u64, hash_len: usize) -> bool {
    offset >= PACK_HEADER_LEN && offset < pack_len.saturating_sub(hash_len as u64)
}

/// What [`PackIndex::find_entry`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The index does not list the id.
    Missing,
    /// The object starts at this offset of the pack (checked as [`PackIndex::checked_offset_at`] checks it).
    At(u64),
    /// The index lists the id at this position, with an offset that cannot be right
    /// ([`PackIndex::checked_offset_at`] says why).
    Bad(u32),
}

/// A validated pack index file, mapped or read into memory.
///
/// Every accessor is bounds-checked against what was validated at open; none panics, whatever the file holds.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::idx::PackIndex;
/// use odb_index::{HashKind, ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?;
/// let idx = PackIndex::open(&store.pack_infos()[0].idx_path, HashKind::Sha1)?;
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// assert_eq!(idx.find(hello.as_bytes())?, Some(12));
/// assert_eq!(idx.len(), 1);
/// assert_eq!(idx.iter().next(), Some((hello, 12)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// Where the tables are, checked at open.
    t: Tables,
    /// Offsets must be below this: the pack's length minus its trailing checksum, or `u64::MAX` while the
    /// pack's length is not known.
    offset_end: u64,
    /// The pack's length, once known ([`PackIndex::with_pack_len`]).
    pack_len: Option<u64>,
    /// Which fan-out buckets were checked in order (a miss there is certain): see [`PackIndex::confirm_miss`].
    buckets: BucketState,
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
    pub(crate) fn open_with(
        path: &Path,
        kind: HashKind,
        mode: LoadMode,
    ) -> Result<PackIndex, Error> {
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
    pub(crate) fn open_for_pack(
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
    pub(crate) fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<PackIndex, Error> {
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
            .t
            .ids_at
            .checked_add((i as usize).checked_mul(self.t.stride)?)?;
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
    /// `with_pack_len` gave the pack's length) before the pack's trailing checksum.
    /// `None` if `i >= len()`. The one position function of the lookups ([`find`](Self::find), `find_entry`).
    #[inline(always)]
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
    /// if `i >= len()`. The addresses wrap rather than being checked for overflow (cheaper on the hit path):
    /// for `i < count` and a reference inside the 64-bit table they are inside the tables the layout checked at
    /// open, and every read is bounds-checked (`be32`, `be64`) whatever they are.
    #[inline(always)]
    fn raw_offset_at(&self, i: u32) -> Option<Result<u64, IdxProblem>> {
        if i >= self.count {
            return None;
        }
        let d: &[u8] = &self.data;
        if self.version == 1 {
            let at = (self.t.offsets_at).wrapping_add((i as usize).wrapping_mul(self.t.stride));
            return be32(d, at).map(|o| Ok(u64::from(o)));
        }
        let w = be32(
            d,
            self.t.offsets_at.wrapping_add((i as usize).wrapping_mul(4)),
        )?;
        if w & 0x8000_0000 == 0 {
            return Some(Ok(u64::from(w)));
        }
        // Checked here, not at open (a scan of the whole offset table): a reference past the table would read
        // the trailer or another entry's bytes as an offset.
        let index = w & 0x7fff_ffff;
        if u64::from(index) >= self.t.large_count {
            return Some(Err(IdxProblem::LargeOffsetOutOfRange {
                entry: i,
                index,
                count: self.t.large_count,
            }));
        }
        be64(d, self.t.large_at.wrapping_add(index as usize * 8)).map(Ok)
    }

    /// This index with the length of its `.pack` known: from now on an offset at or past the pack's trailing
    /// checksum (`pack_len - hash length`) is [`IdxProblem::OffsetPastPackEnd`] in [`find`](Self::find),
    /// [`checked_offset_at`](Self::checked_offset_at) and [`verify`](Self::verify), and is never answered by
    /// [`find_entry`](Self::find_entry).
    pub(crate) fn with_pack_len(mut self, pack_len: u64) -> Self {
        self.pack_len = Some(pack_len);
        self.offset_end = pack_len.saturating_sub(self.kind.len() as u64);
        self
    }

    /// The pack's length, if `with_pack_len` gave it.
    pub fn pack_len(&self) -> Option<u64> {
        self.pack_len
    }

    /// The CRC-32 of entry `i`'s packed bytes: version 2 only (`None` for version 1 or `i >= len()`).
    pub fn crc32_at(&self, i: u32) -> Option<u32> {
        if self.version == 1 || i >= self.count {
            return None;
        }
        be32(
            &self.data,
            self.t.crc_at.checked_add((i as usize).checked_mul(4)?)?,
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
        let at = self.t.trailer_at + skip;
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
        match self.find_entry(id, None) {
            Found::At(offset) => Ok(Some(offset)),
            Found::Missing => Ok(None),
            Found::Bad(i) => match self.checked_offset_at(i) {
                Some(Err(problem)) => Err(problem),
                // `find_entry` answers with `checked_offset_at`.
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

    /// [`find`](Self::find) in the shape of the hot path: [`search`](Self::search) (resumed from `from`, steps
    /// a batch ran ahead for `id`, `idx/batch.rs`, if given), then [`checked_offset_at`](Self::checked_offset_at)
    /// of the position found; a bad entry is only its position (`checked_offset_at` says what is wrong with
    /// it), so nothing large is built or returned on a hit.
    ///
    /// An index that lists `id` twice (a file that lies) has two offsets for it, maybe two objects': the entry
    /// git's binary search lands on answers (`bsearch_pack`, [`position_binary`](Self::position_binary)), so
    /// the object read is the one git reads.
    #[inline(always)]
    pub(crate) fn find_entry(&self, id: &[u8], from: Option<Probe>) -> Found {
        let Some(mut i) = self.search(id, from) else {
            return Found::Missing;
        };
        if self.repeated_at(i, id) {
            let Some(j) = self.position_binary(id) else {
                return Found::Missing;
            };
            i = j;
        }
        match self.checked_offset_at(i) {
            Some(Ok(offset)) => Found::At(offset),
            _ => Found::Bad(i),
        }
    }

    /// Whether a neighbour of position `i` (where `id` was found) holds `id` too.
    #[inline(always)]
    fn repeated_at(&self, i: u32, id: &[u8]) -> bool {
        let same = |j: u32| self.id_at(j) == Some(id);
        (i > 0 && same(i - 1)) || same(i + 1)
    }

    /// The position of `id` in sorted order, or `None` if the index does not list it (or `id` has the wrong
    /// length): the search of [`Table::position`], from the start or resumed from `from` (a probe of this
    /// index's search for `id`). Never a position past [`len`](Self::len), whatever the file holds.
    #[inline(always)]
    pub(crate) fn search(&self, id: &[u8], from: Option<Probe>) -> Option<u32> {
        self.table().position(id, from)
    }

    /// Like [`search`](Self::search), with git's plain binary search inside the fan-out bucket: what answers for
    /// an id the index lists twice, and the reference the fast search is tested against (`testing::PackIndexExt`
    /// has the lookups on top of both).
    ///
    /// ```
    /// use odb_index::idx::{PackIndex, write::{write_idx, Entry}};
    /// use odb_index::testing::PackIndexExt;
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
    pub(crate) fn position_binary(&self, id: &[u8]) -> Option<u32> {
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
}

/// The lookups the tests compare, defined once: the crate's own tests call them here, the other targets through
/// `testing::PackIndexExt`, which forwards to them.
#[cfg(any(test, feature = "test-support"))]
impl PackIndex {
    /// [`find`](Self::find) with a bad entry answered `None`.
    pub(crate) fn lookup(&self, id: &[u8]) -> Option<u64> {
        self.find(id).ok().flatten()
    }

    /// [`lookup`](Self::lookup) for an [`ObjectId`]; `None` if it is of another hash kind.
    pub(crate) fn lookup_id(&self, id: &ObjectId) -> Option<u64> {
        self.lookup(id.as_bytes())
    }

    /// [`lookup`](Self::lookup) by git's plain binary search ([`position_binary`](Self::position_binary)).
    pub(crate) fn lookup_binary(&self, id: &[u8]) -> Option<u64> {
        self.checked_offset_at(self.position_binary(id)?)?.ok()
    }

    /// The position of `id` in sorted order ([`search`](Self::search) from the start).
    pub(crate) fn position(&self, id: &[u8]) -> Option<u32> {
        self.search(id, None)
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
