//! Hand edits of index files for tests of files that lie (the caller recomputes the trailing checksum, which
//! needs the hash function: this crate does not depend on odb-index).

/// A copy of the pack index `idx` (format `version`, 1 or 2, ids of `hash_len` bytes) with entries `k` and
/// `k + 1` swapped: their ids with their offsets (and, version 2, their CRCs), so each id keeps its own offset.
/// Valid in structure once resealed; only the order of the ids is wrong.
pub fn idx_with_entries_swapped(idx: &[u8], version: u32, hash_len: usize, k: usize) -> Vec<u8> {
    let h = hash_len;
    let mut b = idx.to_vec();
    let tables: Vec<(usize, usize)> = if version == 1 {
        // One table of entries: 4-byte offset, then the id.
        vec![(1024, h + 4)]
    } else {
        let n = u32::from_be_bytes(idx[8 + 1020..8 + 1024].try_into().expect("4 bytes")) as usize;
        // Ids, then CRCs (4 bytes), then 32-bit offset words (4 bytes).
        vec![
            (8 + 1024, h),
            (8 + 1024 + n * h, 4),
            (8 + 1024 + n * (h + 4), 4),
        ]
    };
    for (table, width) in tables {
        let (x, y) = (table + k * width, table + (k + 1) * width);
        let first = b[x..x + width].to_vec();
        b.copy_within(y..y + width, x);
        b[y..y + width].copy_from_slice(&first);
    }
    b
}

/// A copy of the chunk file `bytes` (a multi-pack-index) with chunk `id` emptied: its bytes removed, every later
/// chunk-table offset moved back by its length, the trailing checksum left as it was. What git's
/// `corrupt_chunk_file <file> <chunk> clear` does (`t/lib-chunk/corrupt-chunk-file.pl`). Panics if there is no
/// such chunk.
pub fn clear_chunk(bytes: &[u8], id: &[u8; 4]) -> Vec<u8> {
    let chunks = usize::from(bytes[6]);
    let row = |r: usize| 12 + 12 * r;
    let offset =
        |r: usize| u64::from_be_bytes(bytes[row(r) + 4..row(r) + 12].try_into().expect("8 bytes"));
    let r = (0..chunks)
        .find(|&r| &bytes[row(r)..row(r) + 4] == id)
        .unwrap_or_else(|| panic!("no chunk {id:?}"));
    let (start, end) = (offset(r) as usize, offset(r + 1) as usize);
    let len = (end - start) as u64;
    let mut v = bytes[..start].to_vec();
    v.extend_from_slice(&bytes[end..]);
    for later in r + 1..=chunks {
        let moved = offset(later) - len;
        v[row(later) + 4..row(later) + 12].copy_from_slice(&moved.to_be_bytes());
    }
    v
}

/// A copy of the chunk file `bytes` (a multi-pack-index) with a chunk `id` of `data` added after its last
/// chunk: one more row in the chunk table (every chunk moves by its 12 bytes), the header's chunk count one
/// more, the trailing checksum left as it was (the caller reseals it). Panics if the file already has 255
/// chunks.
pub fn add_chunk(bytes: &[u8], id: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let chunks = usize::from(bytes[6]);
    assert!(chunks < 255, "a chunk table holds at most 255 chunks");
    let row = |r: usize| 12 + 12 * r;
    let offset =
        |r: usize| u64::from_be_bytes(bytes[row(r) + 4..row(r) + 12].try_into().expect("8 bytes"));
    let end = offset(chunks) as usize;
    let mut v = bytes[..row(chunks)].to_vec();
    v[6] += 1;
    for r in 0..chunks {
        let moved = offset(r) + 12;
        v[row(r) + 4..row(r) + 12].copy_from_slice(&moved.to_be_bytes());
    }
    v.extend_from_slice(id);
    v.extend_from_slice(&(end as u64 + 12).to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(&(end as u64 + 12 + data.len() as u64).to_be_bytes());
    v.extend_from_slice(&bytes[row(chunks + 1)..end]);
    v.extend_from_slice(data);
    v.extend_from_slice(&bytes[end..]);
    v
}
