//! The layout of a multi-pack-index, checked when it is opened: the header and the chunk table ([`Layout`],
//! [`parse_layout`]), the chunks a lookup reads and their sizes ([`Chunks`]), and the pack names
//! ([`parse_pack_names`]). What is checked at use and by `verify` is in `mod.rs` and `verify.rs`.

use super::{
    BTMP_ROW_LEN, CHUNK_BTMP, CHUNK_LOFF, CHUNK_OIDF, CHUNK_OIDL, CHUNK_OOFF, CHUNK_PNAM,
    CHUNK_RIDX, ChunkId, FANOUT_LEN, HEADER_LEN, LOFF_ROW_LEN, MidxProblem, OOFF_ROW_LEN,
    RIDX_ROW_LEN, SIGNATURE, TOC_ROW_LEN,
};
use crate::bytes::be64;
use crate::error::Error;
use crate::oid::HashKind;
use std::ffi::OsString;
use std::path::Path;

/// Where the chunks a lookup needs are, as found by [`parse_layout`].
pub(super) struct Layout {
    pub(super) version: u8,
    pub(super) num_packs: u32,
    pub(super) pnam: (usize, usize),
    oidf: (usize, usize),
    oidl: (usize, usize),
    ooff: (usize, usize),
    loff: Option<(usize, usize)>,
    btmp: Option<(usize, usize)>,
    ridx: Option<(usize, usize)>,
}

/// What the header says: the version, the number of chunks and of packs.
struct Header {
    version: u8,
    chunks: u8,
    num_packs: u32,
}

/// Check the header (and that the file can hold its chunk table and trailer).
fn parse_header(data: &[u8], kind: HashKind) -> Result<Header, ProblemOrKind> {
    let len = data.len();
    // Header, one terminating table row, trailer.
    let min = HEADER_LEN + TOC_ROW_LEN + kind.len();
    let too_small = || MidxProblem::TooSmall {
        len: len as u64,
        min: min as u64,
    };
    let head = data.get(..HEADER_LEN).ok_or_else(too_small)?;
    if head[0..4] != SIGNATURE {
        return Err(MidxProblem::BadSignature {
            found: [head[0], head[1], head[2], head[3]],
        }
        .into());
    }
    let version = head[4];
    if version != 1 && version != 2 {
        return Err(MidxProblem::UnsupportedVersion { version }.into());
    }
    let found_kind = match head[5] {
        1 => HashKind::Sha1,
        2 => HashKind::Sha256,
        id => return Err(MidxProblem::UnknownHashVersion { id }.into()),
    };
    if found_kind != kind {
        return Err(ProblemOrKind::Kind(found_kind));
    }
    let chunks = head[6];
    if head[7] != 0 {
        return Err(MidxProblem::IncrementalNotSupported { bases: head[7] }.into());
    }
    let num_packs = u32::from_be_bytes([head[8], head[9], head[10], head[11]]);
    if len < min {
        return Err(too_small().into());
    }
    Ok(Header {
        version,
        chunks,
        num_packs,
    })
}

/// The chunk table of a file whose trailer starts at `trailer_start`, after a header of `chunks` chunks.
struct Table<'a> {
    data: &'a [u8],
    chunks: u8,
    table_end: usize,
    trailer_start: usize,
}

impl Table<'_> {
    /// Row `i`: a chunk id and where the chunk starts.
    fn row(&self, i: usize) -> (ChunkId, u64) {
        let at = HEADER_LEN + i * TOC_ROW_LEN;
        let mut id = [0u8; 4];
        id.copy_from_slice(&self.data[at..at + 4]);
        let off = be64(self.data, at + 4).unwrap_or(u64::MAX);
        (ChunkId(id), off)
    }

    /// Chunk `i` (not the terminator): its id and its byte range, checked to lie between the table and the
    /// trailer.
    fn chunk(&self, i: usize) -> Result<(ChunkId, (usize, usize)), MidxProblem> {
        let (id, offset) = self.row(i);
        if id.0 == [0; 4] {
            return Err(MidxProblem::EarlyTerminator { row: i as u8 });
        }
        let (_, end) = self.row(i + 1);
        if offset < self.table_end as u64 {
            return Err(MidxProblem::ChunkOverlapsTable {
                id,
                offset,
                table_end: self.table_end as u64,
            });
        }
        if end < offset || end > self.trailer_start as u64 {
            return Err(MidxProblem::ChunkOutOfBounds {
                id,
                offset,
                end,
                trailer_start: self.trailer_start as u64,
            });
        }
        // Both are at most trailer_start, a usize.
        Ok((id, (offset as usize, end as usize)))
    }
}

/// Check the header and the chunk table; find the chunks. Reads nothing else.
pub(super) fn parse_layout(data: &[u8], kind: HashKind) -> Result<Layout, ProblemOrKind> {
    let Header {
        version,
        chunks,
        num_packs,
    } = parse_header(data, kind)?;
    let trailer_start = data.len() - kind.len();
    // At most 256 rows of 12 bytes: no overflow.
    let table_end = HEADER_LEN + (usize::from(chunks) + 1) * TOC_ROW_LEN;
    if table_end > trailer_start {
        return Err(MidxProblem::ChunkTableTruncated {
            chunks,
            table_end: table_end as u64,
            trailer_start: trailer_start as u64,
        }
        .into());
    }
    let table = Table {
        data,
        chunks,
        table_end,
        trailer_start,
    };
    let mut seen: Vec<ChunkId> = Vec::with_capacity(usize::from(chunks));
    let (mut pnam, mut oidf, mut oidl, mut ooff, mut loff) = (None, None, None, None, None);
    let mut btmp = None;
    let mut ridx = None;
    for i in 0..usize::from(table.chunks) {
        let (id, range) = table.chunk(i)?;
        if seen.contains(&id) {
            return Err(MidxProblem::DuplicateChunk { id }.into());
        }
        seen.push(id);
        match id {
            CHUNK_PNAM => pnam = Some(range),
            CHUNK_OIDF => oidf = Some(range),
            CHUNK_OIDL => oidl = Some(range),
            CHUNK_OOFF => ooff = Some(range),
            CHUNK_LOFF => loff = Some(range),
            CHUNK_BTMP => btmp = Some(range),
            CHUNK_RIDX => ridx = Some(range),
            _ => {}
        }
    }
    let (last, _) = table.row(usize::from(chunks));
    if last.0 != [0; 4] {
        return Err(MidxProblem::MissingTerminator { found: last }.into());
    }
    let need = |c: Option<(usize, usize)>, id: ChunkId| c.ok_or(MidxProblem::MissingChunk { id });
    Ok(Layout {
        version,
        num_packs,
        pnam: need(pnam, CHUNK_PNAM)?,
        oidf: need(oidf, CHUNK_OIDF)?,
        oidl: need(oidl, CHUNK_OIDL)?,
        ooff: need(ooff, CHUNK_OOFF)?,
        loff,
        btmp,
        ridx,
    })
}

/// The chunks a lookup reads, checked when the file is opened: what a [`MultiPackIndex`](super::MultiPackIndex)
/// holds besides its bytes.
#[derive(Debug)]
pub(super) struct Chunks {
    pub(super) version: u8,
    pub(super) pack_names: Vec<OsString>,
    pub(super) fanout: [u32; 256],
    /// The fan-out as the search reads it (`crate::idx::Table`): 0, then `fanout`; bucket `b` is
    /// `bounds[b]..bounds[b + 1]`.
    pub(super) bounds: [u32; 257],
    /// The `OIDL` chunk: `len * hash_len` bytes.
    pub(super) oidl: (usize, usize),
    /// The `OOFF` chunk: `len * 8` bytes.
    pub(super) ooff: (usize, usize),
    /// The `LOFF` chunk, if there is one.
    pub(super) loff: Option<(usize, usize)>,
    /// The `BTMP` chunk, if there is one: `num_packs * 8` bytes.
    pub(super) btmp: Option<(usize, usize)>,
}

/// A chunk whose size must be exactly `expected`.
fn exact(id: ChunkId, r: (usize, usize), expected: u64) -> Result<(), MidxProblem> {
    let size = (r.1 - r.0) as u64;
    if size == expected {
        Ok(())
    } else {
        Err(MidxProblem::WrongChunkSize { id, size, expected })
    }
}

/// The `OIDF` chunk `oidf` of `data`: 256 counts, each at least the one before.
fn parse_fanout(data: &[u8], oidf: (usize, usize)) -> Result<[u32; 256], MidxProblem> {
    exact(CHUNK_OIDF, oidf, FANOUT_LEN as u64)?;
    let mut fanout = [0u32; 256];
    for (i, f) in data[oidf.0..oidf.1].chunks_exact(4).enumerate() {
        fanout[i] = u32::from_be_bytes([f[0], f[1], f[2], f[3]]);
        if i > 0 && fanout[i] < fanout[i - 1] {
            return Err(MidxProblem::FanoutNotMonotonic {
                index: i as u8,
                prev: fanout[i - 1],
                value: fanout[i],
            });
        }
    }
    Ok(fanout)
}

impl Layout {
    /// Check the sizes of the chunks that depend on the object `count`, and `BTMP`'s ranges.
    fn check_sizes(&self, data: &[u8], kind: HashKind, count: u64) -> Result<(), MidxProblem> {
        let size = |r: (usize, usize)| (r.1 - r.0) as u64;
        // Ids and offsets: their sizes follow from the count (u64 arithmetic cannot overflow: count < 2^32).
        let want_oidl = count * kind.len() as u64;
        exact(CHUNK_OIDL, self.oidl, want_oidl)?;
        let want_ooff = count * OOFF_ROW_LEN as u64;
        exact(CHUNK_OOFF, self.ooff, want_ooff)?;
        if let Some(r) = self.loff
            && size(r) % LOFF_ROW_LEN as u64 != 0
        {
            return Err(MidxProblem::WrongChunkSize {
                id: CHUNK_LOFF,
                size: size(r),
                expected: size(r) / LOFF_ROW_LEN as u64 * LOFF_ROW_LEN as u64,
            });
        }
        // Reverse index (read by git's bitmap code, not by lookups): one row per object. git checks its size
        // only when it reads it; a file whose chunk disagrees with its count is refused here all the same.
        if let Some(r) = self.ridx {
            exact(CHUNK_RIDX, r, count * RIDX_ROW_LEN as u64)?;
        }

        // Bitmapped packs (v1 and v2 files): 8 bytes per pack (O(packs)). A pack with no bits may have any
        // position (git writes 0 for packs with no objects). In a layer of an incremental chain the positions
        // count the objects of the layers below (git's `midx_pack_order`), which opening a file alone does not
        // know: here each range must fit the file's object count in length and stay within 2^32 bits; where
        // it lies is checked by `check_bitmapped_packs`, given the layers below.
        if let Some(r) = self.btmp {
            exact(
                CHUNK_BTMP,
                r,
                u64::from(self.num_packs) * BTMP_ROW_LEN as u64,
            )?;
            for (pack, pos, nr) in bitmapped_packs(&data[r.0..r.1]) {
                if nr != 0 && (u64::from(nr) > count || u64::from(pos) + u64::from(nr) > 1 << 32) {
                    return Err(MidxProblem::BitmapRangeOutOfBounds {
                        pack,
                        pos,
                        nr,
                        count,
                    });
                }
            }
        }

        Ok(())
    }
}

/// The rows of a `BTMP` chunk: pack int id, first bit position, number of bits.
pub(super) fn bitmapped_packs(chunk: &[u8]) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
    chunk
        .chunks_exact(BTMP_ROW_LEN)
        .enumerate()
        .map(|(pack, row)| {
            let pos = u32::from_be_bytes([row[0], row[1], row[2], row[3]]);
            let nr = u32::from_be_bytes([row[4], row[5], row[6], row[7]]);
            (pack as u32, pos, nr)
        })
}

impl Chunks {
    /// Check `data` (see [`MultiPackIndex::from_data`](super::MultiPackIndex::from_data)) and find its chunks.
    pub(super) fn check(data: &[u8], kind: HashKind) -> Result<Chunks, ProblemOrKind> {
        let l = parse_layout(data, kind)?;
        let fanout = parse_fanout(data, l.oidf)?;
        let count = u64::from(fanout[255]);
        l.check_sizes(data, kind, count)?;
        let chunk = |r: (usize, usize)| &data[r.0..r.1];
        // Pack names. Each object's pack int id and large-offset reference are checked when it is used (a scan
        // here would make opening a file that claims 2^32 objects read all of them).
        let pack_names = parse_pack_names(chunk(l.pnam), l.num_packs, l.version)?;
        let mut bounds = [0u32; 257];
        bounds[1..].copy_from_slice(&fanout);
        Ok(Chunks {
            version: l.version,
            pack_names,
            fanout,
            bounds,
            oidl: l.oidl,
            ooff: l.ooff,
            loff: l.loff,
            btmp: l.btmp,
        })
    }
}

/// A problem, or a hash kind mismatch (which is its own [`Error`] variant).
pub(super) enum ProblemOrKind {
    Problem(MidxProblem),
    Kind(HashKind),
}

impl From<MidxProblem> for ProblemOrKind {
    fn from(p: MidxProblem) -> Self {
        ProblemOrKind::Problem(p)
    }
}

impl ProblemOrKind {
    pub(super) fn into_error(self, path: &Path, expected: HashKind) -> Error {
        match self {
            ProblemOrKind::Problem(problem) => Error::CorruptMultiPackIndex {
                path: path.to_owned(),
                problem,
            },
            ProblemOrKind::Kind(found) => Error::WrongHashKind {
                path: path.to_owned(),
                expected,
                found,
            },
        }
    }
}

/// Parse and check the `PNAM` chunk: exactly `num_packs` names, then 0-3 NULs. A name is bytes, as git writes
/// and compares it (`strcmp`, its `cmp_idx_or_pack_name`): a file name need not be UTF-8 (`\xff-pack-<hash>.idx`
/// is a pack git reads), so each becomes the `OsString` of those bytes (off Unix, where a file name is not bytes,
/// one that is not UTF-8 is [`MidxProblem::PackNameNotUtf8`]). Order and repeats are judged on the bytes.
pub(super) fn parse_pack_names(
    chunk: &[u8],
    num_packs: u32,
    version: u8,
) -> Result<Vec<OsString>, MidxProblem> {
    // Every name takes at least 2 bytes (a character and its NUL): cap the allocation by the chunk's size.
    let cap = (num_packs as usize).min(chunk.len() / 2);
    let mut raw: Vec<&[u8]> = Vec::with_capacity(cap);
    let mut rest = chunk;
    for pack in 0..num_packs {
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Err(MidxProblem::PackNamesTruncated {
                found: pack,
                expected: num_packs,
            });
        };
        let name = &rest[..nul];
        if name.is_empty()
            || name == b"."
            || name == b".."
            || name.contains(&b'/')
            || name.contains(&b'\\')
        {
            return Err(MidxProblem::BadPackName {
                pack,
                name: os_name(name, pack)?,
            });
        }
        if version == 1
            && let Some(&prev) = raw.last()
            && prev >= name
        {
            return Err(MidxProblem::PackNamesOutOfOrder {
                pack,
                prev: os_name(prev, pack - 1)?,
                name: os_name(name, pack)?,
            });
        }
        raw.push(name);
        rest = &rest[nul + 1..];
    }
    if rest.len() > 3 || rest.iter().any(|&b| b != 0) {
        return Err(MidxProblem::PackNamesTrailingBytes {
            extra: rest.len() as u64,
        });
    }
    if version != 1 {
        let mut sorted = raw.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            let pack = raw.iter().position(|n| *n == w[0]).unwrap_or(0) as u32;
            return Err(MidxProblem::DuplicatePackName {
                name: os_name(w[0], pack)?,
            });
        }
    }
    (0u32..)
        .zip(raw)
        .map(|(pack, name)| os_name(name, pack))
        .collect()
}

/// Pack `pack`'s name, `bytes`, as a file name: those bytes on Unix; elsewhere UTF-8 or
/// [`MidxProblem::PackNameNotUtf8`].
fn os_name(bytes: &[u8], pack: u32) -> Result<OsString, MidxProblem> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let _ = pack;
        Ok(std::ffi::OsStr::from_bytes(bytes).to_owned())
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(OsString::from)
            .map_err(|_| MidxProblem::PackNameNotUtf8 { pack })
    }
}
