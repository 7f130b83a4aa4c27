//! The layout of a pack index, checked when it is opened (git's `check_packed_git_idx`): the header and version,
//! a monotonic fan-out table, and a file size that fits the object count; then where each table starts.

use std::path::PathBuf;

use super::{BucketState, FANOUT_LEN, IdxProblem, PackIndex, SIGNATURE, to_usize};
use crate::bytes::be32;
use crate::data::Data;
use crate::oid::HashKind;

/// Where the tables of a checked index are (byte offsets into the file), as [`PackIndex::parse`] found them.
#[derive(Debug)]
pub(super) struct Tables {
    /// Byte offset of the first id.
    pub(super) ids_at: usize,
    /// Bytes from one id to the next (the hash length for v2, hash length + 4 for v1).
    pub(super) stride: usize,
    /// v2: byte offset of the CRC table.
    pub(super) crc_at: usize,
    /// v1: byte offset of the first entry (whose first 4 bytes are the offset); v2: of the 32-bit offset table.
    pub(super) offsets_at: usize,
    /// v2: byte offset of the 64-bit offset table.
    pub(super) large_at: usize,
    /// v2: how many 64-bit offsets the file holds.
    pub(super) large_count: u64,
    /// Byte offset of the trailer (pack checksum, then index checksum).
    pub(super) trailer_at: usize,
}

/// The version of index `d` (1: no header), checked to fit at least an empty index of that version.
fn parse_version(d: &[u8], trailer: u64) -> Result<u32, IdxProblem> {
    let len = d.len() as u64;
    if len < FANOUT_LEN + trailer {
        return Err(IdxProblem::TooSmall {
            len,
            min: FANOUT_LEN + trailer,
        });
    }
    if d.get(..4) != Some(&SIGNATURE[..]) {
        return Ok(1);
    }
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
    Ok(2)
}

/// The fan-out table of index `d` of `version` (its length checked): `fanout[b + 1]` is the count of ids whose
/// first byte is at most `b`, checked monotonic; `fanout[0] == 0`.
fn parse_fanout(d: &[u8], version: u32) -> Result<[u32; 257], IdxProblem> {
    let fanout_at: usize = if version == 2 { 8 } else { 0 };
    let mut fanout = [0u32; 257];
    let mut previous = 0u32;
    // In bounds: the length was checked by `parse_version`.
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
    Ok(fanout)
}

/// The tables of a version 1 index of `len` bytes holding `count` ids: its size must be exactly theirs.
fn v1_tables(len: u64, count: u32, kind: HashKind) -> Result<Tables, IdxProblem> {
    let (h, n, trailer) = (kind.len() as u64, u64::from(count), 2 * kind.len() as u64);
    let bad_size = |expected| IdxProblem::SizeMismatch {
        expected,
        actual: len,
    };
    let expected = n
        .checked_mul(4 + h)
        .and_then(|v| v.checked_add(FANOUT_LEN + trailer))
        .ok_or(bad_size(u64::MAX))?;
    if expected != len {
        return Err(bad_size(expected));
    }
    let trailer_at = to_usize(len - trailer, len)?;
    Ok(Tables {
        ids_at: FANOUT_LEN as usize + 4,
        stride: kind.len() + 4,
        crc_at: 0,
        offsets_at: FANOUT_LEN as usize,
        large_at: trailer_at,
        large_count: 0,
        trailer_at,
    })
}

/// The tables of a version 2 index of `len` bytes holding `count` ids: its size must leave whole 64-bit offsets
/// (at most one per id but the first) between the 32-bit offsets and the trailer.
fn v2_tables(len: u64, count: u32, kind: HashKind) -> Result<Tables, IdxProblem> {
    let (h, n, trailer) = (kind.len() as u64, u64::from(count), 2 * kind.len() as u64);
    let bad_size = |expected| IdxProblem::SizeMismatch {
        expected,
        actual: len,
    };
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
    // All below `len`, which fits in usize: the data is in memory.
    Ok(Tables {
        ids_at: 8 + FANOUT_LEN as usize,
        stride: kind.len(),
        crc_at: to_usize(8 + FANOUT_LEN + n * h, len)?,
        offsets_at: to_usize(8 + FANOUT_LEN + n * (h + 4), len)?,
        large_at: to_usize(8 + FANOUT_LEN + n * (h + 8), len)?,
        large_count: large_len / 8,
        trailer_at: to_usize(len - trailer, len)?,
    })
}

impl PackIndex {
    /// Check the layout of `d`; returns a `PackIndex` with an empty placeholder for data and path.
    pub(super) fn parse(d: &[u8], kind: HashKind) -> Result<PackIndex, IdxProblem> {
        let len = d.len() as u64;
        let version = parse_version(d, 2 * kind.len() as u64)?;
        let fanout = parse_fanout(d, version)?;
        let count = fanout[256];
        let t = if version == 1 {
            v1_tables(len, count, kind)?
        } else {
            v2_tables(len, count, kind)?
        };
        Ok(PackIndex {
            data: Data::Vec(Vec::new()),
            path: PathBuf::new(),
            kind,
            version,
            count,
            fanout,
            t,
            offset_end: u64::MAX,
            pack_len: None,
            buckets: BucketState::default(),
        })
    }
}
