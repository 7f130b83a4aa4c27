//! A pack's reverse index: its entries in pack order, for `%(objectsize:disk)` and OFS_DELTA bases.

use std::path::Path;

use odb_index::HashKind;
use odb_index::idx::PackIndex;

use crate::Error;

/// Index positions (into the `.idx`) sorted by pack offset.
pub(crate) struct RevIndex {
    order: Vec<u32>,
}

impl RevIndex {
    /// The reverse index of the pack `idx` describes: read from `rev_path` (git's `.rev` format: `RIDX`, version
    /// 1, the hash id, one 32-bit big-endian index position per object in pack order, two checksums) if it
    /// exists, else built by sorting the `.idx`'s offsets. A `.rev` that cannot be used (not a regular file, not
    /// exactly the length the format gives for this pack, a bad header, a position out of range or out of pack
    /// order) is read no further than that length and is returned as the second value, with the reverse index
    /// built from the `.idx` as git does after warning about it.
    pub(crate) fn open(
        idx: &PackIndex,
        rev_path: &Path,
        kind: HashKind,
    ) -> (RevIndex, Option<Error>) {
        match read(idx, rev_path, kind) {
            Ok(Some(rev)) => (rev, None),
            Ok(None) => (RevIndex::from_idx(idx), None),
            Err(e) => (RevIndex::from_idx(idx), Some(e)),
        }
    }

    /// Sort the `.idx`'s offsets (git's `create_pack_revindex_in_memory`).
    fn from_idx(idx: &PackIndex) -> RevIndex {
        let mut order: Vec<u32> = (0..idx.len()).collect();
        order.sort_unstable_by_key(|&i| idx.offset_at(i));
        RevIndex { order }
    }

    /// The pack position of the entry at `offset`.
    fn pack_position(&self, idx: &PackIndex, offset: u64) -> Option<usize> {
        let p = self
            .order
            .partition_point(|&i| idx.offset_at(i).is_some_and(|o| o < offset));
        (idx.offset_at(*self.order.get(p)?)? == offset).then_some(p)
    }

    /// The `.idx` position of the entry at `offset`.
    pub(crate) fn index_position(&self, idx: &PackIndex, offset: u64) -> Option<u32> {
        self.pack_position(idx, offset).map(|p| self.order[p])
    }

    /// Bytes from `offset` to the next entry, or to `end` (where the pack's trailer starts) for the last.
    pub(crate) fn disk_size(&self, idx: &PackIndex, offset: u64, end: u64) -> Option<u64> {
        let p = self.pack_position(idx, offset)?;
        let next = match self.order.get(p + 1) {
            Some(&i) => idx.offset_at(i)?,
            None => end,
        };
        next.checked_sub(offset)
    }
}

/// The `.rev` file at `rev_path`, checked; `Ok(None)` if there is none.
fn read(idx: &PackIndex, rev_path: &Path, kind: HashKind) -> Result<Option<RevIndex>, Error> {
    let n = idx.len() as usize;
    let want = 12 + 4 * n + 2 * kind.len();
    let data = match odb_index::data::read_bounded(rev_path, want as u64) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(Error::Io {
                path: rev_path.to_owned(),
                source,
            });
        }
    };
    let bad = |reason: String| Error::Index {
        path: rev_path.to_owned(),
        reason,
    };
    if data.len() != want {
        return Err(bad(format!(
            "{} bytes, expected {want} for {n} objects",
            data.len()
        )));
    }
    if &data[..4] != b"RIDX" {
        return Err(bad("not a reverse index (no RIDX signature)".into()));
    }
    let word = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().expect("4 bytes"));
    if word(4) != 1 {
        return Err(bad(format!("unsupported version {}", word(4))));
    }
    if word(8) != u32::from(kind.midx_id()) {
        return Err(bad(format!(
            "hash id {}, expected {}",
            word(8),
            kind.midx_id()
        )));
    }
    let order: Vec<u32> = (0..n).map(|i| word(12 + 4 * i)).collect();
    // Each position in range and offsets increasing: what `disk_size` relies on.
    let mut last = None;
    for &pos in &order {
        let off = idx
            .offset_at(pos)
            .ok_or_else(|| bad(format!("index position {pos} out of range")))?;
        if last.is_some_and(|l| l >= off) {
            return Err(bad("entries are not in pack order".into()));
        }
        last = Some(off);
    }
    Ok(Some(RevIndex { order }))
}
