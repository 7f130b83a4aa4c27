//! Writing pack index files (versions 1 and 2), for tests, fuzzing and tools.
//!
//! The writer produces exactly the layout git's `write_idx_file` does: entries sorted by id, offsets of
//! `2^31` and above in version 2's 64-bit table (one table entry per such object, in id order), and a trailer
//! holding the pack checksum and the hash of everything before it.
//!
//! ```
//! use odb_index::idx::write::{write_idx, Entry};
//! use odb_index::HashKind;
//!
//! let id = HashKind::Sha1.digest(b"some object");
//! let entries = [Entry { id, offset: 12, crc32: 0xdead_beef }];
//! let pack = HashKind::Sha1.digest(b"pack");
//! let bytes = write_idx(2, HashKind::Sha1, &entries, &pack).unwrap();
//! assert_eq!(bytes.len(), 8 + 1024 + 20 + 4 + 4 + 40);
//! // Version 1 cannot hold offsets of 2^32 and above.
//! let big = [Entry { id, offset: 1 << 32, crc32: 0 }];
//! assert!(write_idx(1, HashKind::Sha1, &big, &pack).is_err());
//! ```

use std::fmt;

use crate::oid::{HashKind, ObjectId};

/// One object of the index to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The object's id; its kind must be the index's kind.
    pub id: ObjectId,
    /// Where the object starts in the pack.
    pub offset: u64,
    /// CRC-32 of the object's packed bytes (stored by version 2 only).
    pub crc32: u32,
}

/// Why [`write_idx`] refused to write an index.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// Only versions 1 and 2 exist.
    UnsupportedVersion(u32),
    /// An id (or the pack checksum) is of another hash kind than the index.
    WrongHashKind {
        /// The offending id.
        id: ObjectId,
        /// The index's hash kind.
        expected: HashKind,
    },
    /// The same id appears twice.
    DuplicateId(ObjectId),
    /// An offset does not fit the version: version 1 stores 32-bit offsets only.
    OffsetTooLarge {
        /// The object.
        id: ObjectId,
        /// Its offset.
        offset: u64,
        /// The version asked for.
        version: u32,
    },
    /// Version 2, and every offset needs the 64-bit table. git rejects such a file (it allows at most `count - 1`
    /// 64-bit offsets: a pack's first object is at offset 12), and so does [`PackIndex`](super::PackIndex).
    NoSmallOffset,
    /// More entries than an index can count (`u32::MAX`), or more large offsets than version 2 can
    /// reference (`2^31`).
    TooManyEntries {
        /// How many were given.
        count: usize,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::UnsupportedVersion(v) => {
                write!(f, "pack index version {v} is not supported (only 1 and 2)")
            }
            WriteError::WrongHashKind { id, expected } => {
                write!(f, "{id} is a {} id but the index is {expected}", id.kind())
            }
            WriteError::DuplicateId(id) => write!(f, "object {id} is listed twice"),
            WriteError::OffsetTooLarge {
                id,
                offset,
                version,
            } => write!(
                f,
                "object {id} is at offset {offset}, which a version {version} index cannot hold"
            ),
            WriteError::NoSmallOffset => write!(
                f,
                "every offset is 2^31 or more, but a version 2 index must hold at least one below (git rejects it)"
            ),
            WriteError::TooManyEntries { count } => {
                write!(f, "{count} entries are more than a pack index can hold")
            }
        }
    }
}

impl std::error::Error for WriteError {}

/// Largest offset version 2 stores in its 32-bit table; larger ones go to the 64-bit table.
const MAX_SMALL_OFFSET: u64 = 0x7fff_ffff;

/// Serialize a pack index of `version` (1 or 2) for ids of `kind`.
///
/// `entries` may be in any order (they are sorted by id); ids must be distinct. Version 1 rejects offsets of
/// `2^32` and above with [`WriteError::OffsetTooLarge`]; version 2 stores offsets above `2^31 - 1` in its
/// 64-bit table, and needs at least one offset below `2^31` ([`WriteError::NoSmallOffset`]), as every real
/// pack has (its first object is at offset 12). The trailer is `pack_checksum` followed by `kind`'s hash of all preceding bytes.
pub fn write_idx(
    version: u32,
    kind: HashKind,
    entries: &[Entry],
    pack_checksum: &ObjectId,
) -> Result<Vec<u8>, WriteError> {
    let sorted = checked_sorted(version, kind, entries, pack_checksum)?;
    let h = kind.len();
    let mut out = Vec::new();
    if version == 2 {
        out.extend_from_slice(b"\xfftOc");
        out.extend_from_slice(&2u32.to_be_bytes());
    }
    let mut fanout = [0u32; 256];
    for e in &sorted {
        fanout[usize::from(e.id.first_byte())] += 1;
    }
    let mut total = 0u32;
    for n in fanout {
        // Cannot overflow: the total is entries.len(), checked above to fit in u32.
        total += n;
        out.extend_from_slice(&total.to_be_bytes());
    }
    if version == 1 {
        for e in &sorted {
            // Checked above: every offset fits in 32 bits.
            let off = u32::try_from(e.offset).unwrap_or(u32::MAX);
            out.extend_from_slice(&off.to_be_bytes());
            out.extend_from_slice(e.id.as_bytes());
        }
    } else {
        v2_tables(&mut out, &sorted)?;
    }
    debug_assert_eq!(h, pack_checksum.as_bytes().len());
    out.extend_from_slice(pack_checksum.as_bytes());
    let sum = kind.digest(&out);
    out.extend_from_slice(sum.as_bytes());
    Ok(out)
}

/// `entries` sorted by id, once `version`, the hash kinds, the count, distinct ids and the offsets `version` can
/// store are checked.
fn checked_sorted<'a>(
    version: u32,
    kind: HashKind,
    entries: &'a [Entry],
    pack_checksum: &ObjectId,
) -> Result<Vec<&'a Entry>, WriteError> {
    if version != 1 && version != 2 {
        return Err(WriteError::UnsupportedVersion(version));
    }
    if pack_checksum.kind() != kind {
        return Err(WriteError::WrongHashKind {
            id: *pack_checksum,
            expected: kind,
        });
    }
    if u32::try_from(entries.len()).is_err() {
        return Err(WriteError::TooManyEntries {
            count: entries.len(),
        });
    }
    if let Some(e) = entries.iter().find(|e| e.id.kind() != kind) {
        return Err(WriteError::WrongHashKind {
            id: e.id,
            expected: kind,
        });
    }
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_unstable_by_key(|e| e.id);
    if let Some(w) = sorted.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(WriteError::DuplicateId(w[0].id));
    }
    if version == 1
        && let Some(e) = sorted.iter().find(|e| e.offset > u64::from(u32::MAX))
    {
        return Err(WriteError::OffsetTooLarge {
            id: e.id,
            offset: e.offset,
            version,
        });
    }

    if version == 2 && !sorted.is_empty() && sorted.iter().all(|e| e.offset > MAX_SMALL_OFFSET) {
        return Err(WriteError::NoSmallOffset);
    }
    Ok(sorted)
}

/// A version 2 index's tables after the fan-out: ids, CRCs, 32-bit offsets, then the 64-bit ones.
fn v2_tables(out: &mut Vec<u8>, sorted: &[&Entry]) -> Result<(), WriteError> {
    for e in sorted {
        out.extend_from_slice(e.id.as_bytes());
    }
    for e in sorted {
        out.extend_from_slice(&e.crc32.to_be_bytes());
    }
    let mut large: Vec<u64> = Vec::new();
    for e in sorted {
        let word = if e.offset > MAX_SMALL_OFFSET {
            let index = u32::try_from(large.len())
                .ok()
                .filter(|&i| u64::from(i) <= MAX_SMALL_OFFSET)
                .ok_or(WriteError::TooManyEntries {
                    count: sorted.len(),
                })?;
            large.push(e.offset);
            index | 0x8000_0000
        } else {
            // Checked by the branch: the offset is below 2^31.
            u32::try_from(e.offset).unwrap_or(0)
        };
        out.extend_from_slice(&word.to_be_bytes());
    }
    for off in large {
        out.extend_from_slice(&off.to_be_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(kind: HashKind, first: u8, last: u8) -> ObjectId {
        let mut b = vec![0u8; kind.len()];
        b[0] = first;
        b[kind.len() - 1] = last;
        ObjectId::from_bytes(&b).unwrap()
    }

    #[test]
    fn rejects_bad_input() {
        let k = HashKind::Sha1;
        let pack = id(k, 0, 0);
        let e = |first, off| Entry {
            id: id(k, first, 1),
            offset: off,
            crc32: 0,
        };
        assert_eq!(
            write_idx(3, k, &[], &pack),
            Err(WriteError::UnsupportedVersion(3))
        );
        assert_eq!(
            write_idx(2, HashKind::Sha256, &[], &pack),
            Err(WriteError::WrongHashKind {
                id: pack,
                expected: HashKind::Sha256
            })
        );
        assert_eq!(
            write_idx(2, k, &[e(1, 5), e(1, 6)], &pack),
            Err(WriteError::DuplicateId(id(k, 1, 1)))
        );
        assert_eq!(
            write_idx(1, k, &[e(1, 1 << 32)], &pack),
            Err(WriteError::OffsetTooLarge {
                id: id(k, 1, 1),
                offset: 1 << 32,
                version: 1
            })
        );
        assert!(write_idx(1, k, &[e(1, u64::from(u32::MAX))], &pack).is_ok());
        assert_eq!(
            write_idx(2, k, &[e(1, 1 << 31), e(2, 1 << 40)], &pack),
            Err(WriteError::NoSmallOffset)
        );
        assert!(write_idx(2, k, &[e(1, 1 << 31), e(2, 12)], &pack).is_ok());
        let other = id(HashKind::Sha256, 1, 1);
        assert_eq!(
            write_idx(
                2,
                k,
                &[Entry {
                    id: other,
                    offset: 0,
                    crc32: 0
                }],
                &pack
            ),
            Err(WriteError::WrongHashKind {
                id: other,
                expected: k
            })
        );
    }

    #[test]
    fn layout_v2_large_offsets() {
        let k = HashKind::Sha1;
        let pack = id(k, 9, 9);
        let entries = [
            Entry {
                id: id(k, 2, 0),
                offset: 1 << 31,
                crc32: 7,
            },
            Entry {
                id: id(k, 1, 0),
                offset: 12,
                crc32: 8,
            },
        ];
        let b = write_idx(2, k, &entries, &pack).unwrap();
        assert_eq!(b.len(), 8 + 1024 + 2 * (20 + 4 + 4) + 8 + 40);
        assert_eq!(&b[..8], b"\xfftOc\0\0\0\x02");
        // fanout[0] = 0, fanout[1] = 1, fanout[2..] = 2
        assert_eq!(&b[8..12], &[0, 0, 0, 0]);
        assert_eq!(&b[12..16], &[0, 0, 0, 1]);
        assert_eq!(&b[8 + 1020..8 + 1024], &[0, 0, 0, 2]);
        let crc = 8 + 1024 + 40;
        assert_eq!(&b[crc..crc + 8], &[0, 0, 0, 8, 0, 0, 0, 7]);
        let offs = crc + 8;
        assert_eq!(&b[offs..offs + 8], &[0, 0, 0, 12, 0x80, 0, 0, 0]);
        assert_eq!(&b[offs + 8..offs + 16], &(1u64 << 31).to_be_bytes());
        let n = b.len();
        assert_eq!(&b[n - 40..n - 20], pack.as_bytes());
        assert_eq!(&b[n - 20..], k.digest(&b[..n - 20]).as_bytes());
    }
}
