//! Writing multi-pack-index files (for tests, fixtures and tools; the store only reads them).
//!
//! The output is laid out as git lays it out (`git multi-pack-index write`, without bitmaps): header, chunk table,
//! `PNAM` (padded to a multiple of 4 bytes), `OIDF`, `OIDL`, `OOFF`, `LOFF` only when some offset needs more
//! than 32 bits, and the checksum trailer.
//!
//! Differences from git: an object stored in several packs is kept in the pack with the **lowest pack int id**
//! (git prefers a "preferred pack", then the pack with the newest modification time, which a writer of bytes
//! cannot know). For version 1 the packs are sorted by name, as that version requires, and their pack int ids
//! follow that order; for version 2 they keep the order given (version 2 allows any order).

use std::fmt;

use super::{CHUNK_LOFF, CHUNK_OIDF, CHUNK_OIDL, CHUNK_OOFF, CHUNK_PNAM, ChunkId, SIGNATURE};
use crate::oid::{HashKind, ObjectId};

/// The objects of one pack, as its `.idx` lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackEntries {
    /// The name of the pack's index file in the pack directory (`pack-<hash>.idx`).
    pub name: String,
    /// Every object of the pack and its offset in the pack, in any order.
    pub entries: Vec<(ObjectId, u64)>,
}

/// Why [`write_midx`] could not write a multi-pack-index.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The version is neither 1 nor 2.
    UnsupportedVersion {
        /// The version asked for.
        version: u8,
    },
    /// A pack name is empty, `.` or `..`, or contains `/`, `\` or NUL.
    BadPackName {
        /// The name.
        name: String,
    },
    /// Two packs have the same name.
    DuplicatePackName {
        /// The name.
        name: String,
    },
    /// An id is of another hash kind than the file.
    WrongIdKind {
        /// The pack listing it.
        pack: String,
        /// The id.
        id: ObjectId,
    },
    /// A pack lists an object twice.
    DuplicateObjectInPack {
        /// The pack.
        pack: String,
        /// The id.
        id: ObjectId,
    },
    /// More than `u32::MAX` packs.
    TooManyPacks {
        /// The number of packs.
        packs: usize,
    },
    /// More than `u32::MAX` distinct objects.
    TooManyObjects {
        /// The number of distinct objects.
        objects: usize,
    },
    /// More than 2^31 offsets need the large offset table.
    TooManyLargeOffsets {
        /// The number of large offsets.
        large: usize,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::UnsupportedVersion { version } => {
                write!(
                    f,
                    "cannot write multi-pack-index version {version} (only 1 and 2)"
                )
            }
            WriteError::BadPackName { name } => write!(f, "pack name {name:?} is not a file name"),
            WriteError::DuplicatePackName { name } => write!(f, "pack {name:?} is given twice"),
            WriteError::WrongIdKind { pack, id } => {
                write!(f, "pack {pack:?} lists {id}, which is a {} id", id.kind())
            }
            WriteError::DuplicateObjectInPack { pack, id } => {
                write!(f, "pack {pack:?} lists {id} twice")
            }
            WriteError::TooManyPacks { packs } => {
                write!(f, "{packs} packs is more than a multi-pack-index holds")
            }
            WriteError::TooManyObjects { objects } => {
                write!(f, "{objects} objects is more than a multi-pack-index holds")
            }
            WriteError::TooManyLargeOffsets { large } => {
                write!(
                    f,
                    "{large} large offsets is more than a multi-pack-index holds"
                )
            }
        }
    }
}

impl std::error::Error for WriteError {}

fn bad_name(name: &str) -> bool {
    name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0'])
}

/// Write a multi-pack-index of `version` (1 or 2) for ids of `kind` covering `packs`; return its bytes.
///
/// See the [module documentation](self) for the order of the packs and which copy of a duplicate object is kept.
pub fn write_midx(
    version: u8,
    kind: HashKind,
    packs: &[PackEntries],
) -> Result<Vec<u8>, WriteError> {
    let (num_packs, order) = pack_order(version, packs)?;
    let all = sorted_entries(kind, packs, &order)?;
    let count =
        u32::try_from(all.len()).map_err(|_| WriteError::TooManyObjects { objects: all.len() })?;
    let (ooff, loff, large_needed) = offset_chunks(&all)?;
    let mut pnam: Vec<u8> = Vec::new();
    for &i in &order {
        pnam.extend_from_slice(packs[i].name.as_bytes());
        pnam.push(0);
    }
    while !pnam.len().is_multiple_of(4) {
        pnam.push(0);
    }
    let mut oidf: Vec<u8> = Vec::with_capacity(1024);
    let mut n = 0usize;
    for b in 0..=255u8 {
        while n < all.len() && all[n].0.first_byte() <= b {
            n += 1;
        }
        // n <= count, a u32.
        oidf.extend_from_slice(&(n as u32).to_be_bytes());
    }
    let mut oidl: Vec<u8> = Vec::with_capacity(all.len() * kind.len());
    for e in &all {
        oidl.extend_from_slice(e.0.as_bytes());
    }
    debug_assert_eq!(n as u32, count);

    let mut chunks: Vec<(ChunkId, &[u8])> = vec![
        (CHUNK_PNAM, &pnam),
        (CHUNK_OIDF, &oidf),
        (CHUNK_OIDL, &oidl),
        (CHUNK_OOFF, &ooff),
    ];
    if large_needed {
        chunks.push((CHUNK_LOFF, &loff));
    }
    Ok(chunk_file(version, kind, num_packs, &chunks))
}

/// The number of packs and their order (`order[pack int id]` is an index into `packs`: as given for version 2,
/// by name for version 1), once `version` and the names are checked.
fn pack_order(version: u8, packs: &[PackEntries]) -> Result<(u32, Vec<usize>), WriteError> {
    if version != 1 && version != 2 {
        return Err(WriteError::UnsupportedVersion { version });
    }
    let num_packs =
        u32::try_from(packs.len()).map_err(|_| WriteError::TooManyPacks { packs: packs.len() })?;
    if let Some(p) = packs.iter().find(|p| bad_name(&p.name)) {
        return Err(WriteError::BadPackName {
            name: p.name.clone(),
        });
    }
    // order[pack int id] = index into `packs`.
    let mut order: Vec<usize> = (0..packs.len()).collect();
    let mut by_name = order.clone();
    by_name.sort_by(|&a, &b| packs[a].name.cmp(&packs[b].name));
    if let Some(w) = by_name
        .windows(2)
        .find(|w| packs[w[0]].name == packs[w[1]].name)
    {
        return Err(WriteError::DuplicatePackName {
            name: packs[w[0]].name.clone(),
        });
    }
    if version == 1 {
        order = by_name;
    }

    Ok((num_packs, order))
}

/// Every `(id, pack int id, offset)` of `packs` in `order`, sorted by id, the first pack's copy of each id kept.
fn sorted_entries(
    kind: HashKind,
    packs: &[PackEntries],
    order: &[usize],
) -> Result<Vec<(ObjectId, u32, u64)>, WriteError> {
    // (id, pack int id, offset), sorted by id then pack int id; keep the first of each id.
    let mut all: Vec<(ObjectId, u32, u64)> =
        Vec::with_capacity(packs.iter().map(|p| p.entries.len()).sum());
    for (pack_int_id, &i) in (0u32..).zip(order) {
        for &(id, off) in &packs[i].entries {
            if id.kind() != kind {
                return Err(WriteError::WrongIdKind {
                    pack: packs[i].name.clone(),
                    id,
                });
            }
            all.push((id, pack_int_id, off));
        }
    }
    all.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    if let Some(w) = all
        .windows(2)
        .find(|w| w[0].0 == w[1].0 && w[0].1 == w[1].1)
    {
        return Err(WriteError::DuplicateObjectInPack {
            pack: packs[order[w[0].1 as usize]].name.clone(),
            id: w[0].0,
        });
    }
    all.dedup_by(|b, a| a.0 == b.0);
    Ok(all)
}

/// The `OOFF` chunk of `all` and its `LOFF` chunk, and whether the file needs one.
fn offset_chunks(all: &[(ObjectId, u32, u64)]) -> Result<(Vec<u8>, Vec<u8>, bool), WriteError> {
    // Offsets: LOFF only if some offset does not fit in 32 bits; then every offset >= 2^31 goes there.
    let large_needed = all.iter().any(|e| e.2 > u64::from(u32::MAX));
    let mut ooff: Vec<u8> = Vec::with_capacity(all.len() * 8);
    let mut loff: Vec<u8> = Vec::new();
    let mut large = 0usize;
    for &(_, pack, off) in all {
        ooff.extend_from_slice(&pack.to_be_bytes());
        let stored = if large_needed && off >= 1 << 31 {
            let row = u32::try_from(large)
                .ok()
                .filter(|r| r & super::LARGE_OFFSET_BIT == 0);
            let row = row.ok_or(WriteError::TooManyLargeOffsets { large: large + 1 })?;
            loff.extend_from_slice(&off.to_be_bytes());
            large += 1;
            row | super::LARGE_OFFSET_BIT
        } else {
            // Fits: either every offset fits in 32 bits, or this one is below 2^31.
            off as u32
        };
        ooff.extend_from_slice(&stored.to_be_bytes());
    }
    Ok((ooff, loff, large_needed))
}

/// A multi-pack-index file: the header, the table of `chunks`, the chunks and the checksum (also the unit tests'
/// builder of malformed files: nothing here checks the chunks).
pub(super) fn chunk_file(
    version: u8,
    kind: HashKind,
    num_packs: u32,
    chunks: &[(ChunkId, &[u8])],
) -> Vec<u8> {
    let table_len = (chunks.len() + 1) * super::TOC_ROW_LEN;
    let body_len = super::HEADER_LEN + table_len + chunks.iter().map(|c| c.1.len()).sum::<usize>();
    let mut out: Vec<u8> = Vec::with_capacity(body_len + kind.len());
    out.extend_from_slice(&SIGNATURE);
    out.push(version);
    out.push(kind.midx_id());
    out.push(chunks.len() as u8);
    out.push(0);
    out.extend_from_slice(&num_packs.to_be_bytes());
    let mut at = (super::HEADER_LEN + table_len) as u64;
    for (id, bytes) in chunks {
        out.extend_from_slice(&id.0);
        out.extend_from_slice(&at.to_be_bytes());
        at += bytes.len() as u64;
    }
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&at.to_be_bytes());
    for (_, bytes) in chunks {
        out.extend_from_slice(bytes);
    }
    let sum = kind.digest(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}
