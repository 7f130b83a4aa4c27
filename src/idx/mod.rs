//! Pack index (`.idx`) files, versions 1 and 2, SHA-1 and SHA-256.
//!
//! A [`PackIndex`] maps object ids to offsets in the pack beside it. Opening validates everything a lookup
//! relies on (at least what git's `check_packed_git_idx` checks, plus every reference into the 64-bit offset
//! table), so that [`PackIndex::lookup`] can never read out of bounds, panic or allocate, whatever the file
//! holds. What opening does not check (that ids are sorted and the trailer checksum) is checked by
//! [`PackIndex::verify`]; a file that is not sorted can make lookups miss, never misreport an offset.
//!
//! Lookups find the id's fan-out bucket, then predict its position inside the bucket from its next bytes
//! (object ids are uniformly distributed), correct the prediction once from the id found there, and confirm
//! with a short gallop and binary search. [`PackIndex::lookup_binary`] is the plain binary search that git
//! uses, kept for comparison.
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
//! ```

mod prefix;
pub mod write;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::data::{Data, LoadMode};
use crate::error::Error;
pub use crate::error::IdxProblem;
use crate::oid::{HashKind, ObjectId};

/// The first four bytes of a version 2 (or later) index.
const SIGNATURE: [u8; 4] = *b"\xfftOc";
/// Bytes in the fan-out table.
const FANOUT_LEN: u64 = 256 * 4;

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
    /// Byte offset of the trailer (pack checksum, then index checksum).
    trailer_at: usize,
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
        for b in 0..256usize {
            // In bounds: the length was checked above.
            let n = be32(d, fanout_at + 4 * b).unwrap_or(0);
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
                trailer_at,
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
        let table = d.get(offsets_at..large_at).unwrap_or(&[]);
        // Every 64-bit offset reference must be in range, so that lookups cannot fail.
        for (entry, word) in table.chunks_exact(4).enumerate() {
            let w = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
            if w & 0x8000_0000 != 0 && u64::from(w & 0x7fff_ffff) >= large_count {
                return Err(IdxProblem::LargeOffsetOutOfRange {
                    entry: entry as u32,
                    index: w & 0x7fff_ffff,
                    count: large_count,
                });
            }
        }
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
            trailer_at,
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

    /// The pack offset of entry `i` (in sorted order), if `i < len()`.
    #[inline]
    pub fn offset_at(&self, i: u32) -> Option<u64> {
        if i >= self.count {
            return None;
        }
        let d: &[u8] = &self.data;
        if self.version == 1 {
            let at = self
                .offsets_at
                .checked_add((i as usize).checked_mul(self.stride)?)?;
            return be32(d, at).map(u64::from);
        }
        let w = be32(
            d,
            self.offsets_at.checked_add((i as usize).checked_mul(4)?)?,
        )?;
        if w & 0x8000_0000 == 0 {
            return Some(u64::from(w));
        }
        // In range: every reference was checked at open.
        let at = self
            .large_at
            .checked_add(((w & 0x7fff_ffff) as usize).checked_mul(8)?)?;
        be64(d, at)
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

    /// The pack offset of the object `id` (raw bytes of this index's hash kind), or `None` if the index does not
    /// list it or `id` has the wrong length.
    #[inline]
    pub fn lookup(&self, id: &[u8]) -> Option<u64> {
        self.offset_at(self.position(id)?)
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

    /// Like [`lookup`](Self::lookup), with git's plain binary search inside the fan-out bucket.
    /// For comparisons and benchmarks.
    #[doc(hidden)]
    pub fn lookup_binary(&self, id: &[u8]) -> Option<u64> {
        self.offset_at(self.position_binary(id)?)
    }

    /// Like [`position`](Self::position), with git's plain binary search inside the fan-out bucket.
    #[doc(hidden)]
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

    /// Check the whole file: ids strictly increasing and each in the fan-out bucket of its first byte, and the
    /// trailer checksum equal to the hash of everything before it. Reads every byte; not for the hot path.
    pub fn verify(&self) -> Result<(), Error> {
        self.verify_problem()
            .map_err(|problem| Error::CorruptIndex {
                path: self.path.clone(),
                problem,
            })
    }

    fn verify_problem(&self) -> Result<(), IdxProblem> {
        let mut prev: Option<&[u8]> = None;
        for b in 0..256usize {
            for at in self.fanout[b]..self.fanout[b + 1] {
                // Present: `at < count`, checked at open.
                let Some(id) = self.id_at(at) else { break };
                if prev.is_some_and(|p| p >= id) {
                    return Err(IdxProblem::UnsortedIds { at });
                }
                if usize::from(id[0]) != b {
                    return Err(IdxProblem::IdOutsideBucket {
                        at,
                        bucket: b as u8,
                        first_byte: id[0],
                    });
                }
                prev = Some(id);
            }
        }
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

#[cfg(test)]
mod tests;
