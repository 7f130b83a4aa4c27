//! The split-block Bloom filter behind the store's miss filter (`filter.rs`): bits only, over byte strings.
//!
//! `odb-index-bench` measures it against a binary fuse filter (scenario `filter-build`) through
//! `odb_index::testing::SplitBlockBloom` (feature `test-support`), so it measures exactly the store's code.

/// Bits per id: 12 (1.5 bytes; the block count is rounded down, so never more), about 0.55% false positives with
/// 8 bits set per id in one 256-bit block. Every false positive of a store with many packs costs a search of each
/// of them (100 packs: about 100 times a filtered miss), so the rate sets how far a 100-pack miss is from a
/// one-pack miss: at 10 bits per id (1.24%) it was 2.4x in a loaded run, at 11 bits (0.82%) 1.6x to 2.2x.
const BITS_PER_ID: u64 = 12;

/// One block: 256 bits (eight 32-bit lanes, held as four 64-bit words), half a cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Block([u64; 4]);

/// A split-block Bloom filter over object ids (Putze, Sanders, Singler; the layout of Apache Parquet's: one
/// 256-bit block per id, one bit set in each of its eight 32-bit lanes).
///
/// Object ids are already uniform hashes, so the filter hashes nothing: bytes 4..8 of an id pick the block
/// (multiply-shift), and 40 bits of bytes 8..16 pick the eight bits (5 bits per lane). Ids chosen to collide can
/// only add false positives.
pub struct SplitBlockBloom {
    blocks: Box<[Block]>,
    ids: u64,
}

impl std::fmt::Debug for SplitBlockBloom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitBlockBloom")
            .field("blocks", &self.blocks.len())
            .field("ids", &self.ids)
            .finish()
    }
}

/// The block selector (first 8 bytes) and bit selector (next 8 bytes) of an id; `None` for fewer than 16 bytes.
#[inline(always)]
fn keys(id: &[u8]) -> Option<(u64, u64)> {
    let (a, rest) = id.split_first_chunk::<8>()?;
    let b = rest.first_chunk::<8>()?;
    Some((u64::from_le_bytes(*a), u64::from_le_bytes(*b)))
}

/// The eight bits of `x`'s id: lane `2j` (low half of word `j`) gets bit `x[10j..10j+5]`, lane `2j+1` (high
/// half) bit `x[10j+5..10j+10]`.
#[inline(always)]
fn masks(x: u64) -> [u64; 4] {
    let mut m = [0u64; 4];
    for (j, m) in m.iter_mut().enumerate() {
        let lo = (x >> (10 * j)) & 31;
        let hi = (x >> (10 * j + 5)) & 31;
        *m = (1u64 << lo) | (1u64 << (32 + hi));
    }
    m
}

impl SplitBlockBloom {
    /// A filter sized for `capacity` ids (12 bits each, rounded down to whole 32-byte blocks, at least one),
    /// holding `ids`.
    pub fn from_ids<'a>(capacity: usize, ids: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let n = ((capacity as u64).saturating_mul(BITS_PER_ID) / 256).clamp(1, u64::from(u32::MAX));
        let mut f = SplitBlockBloom {
            blocks: vec![Block::default(); n as usize].into_boxed_slice(),
            ids: 0,
        };
        for id in ids {
            f.insert(id);
        }
        f
    }

    #[inline(always)]
    fn block_of(&self, k: u64) -> usize {
        // Multiply-shift: uniform over the blocks without a division (blocks.len() <= u32::MAX).
        (((k >> 32) * self.blocks.len() as u64) >> 32) as usize
    }

    /// Add `id` (ids shorter than 16 bytes are not object ids: ignored, and [`may_contain`](Self::may_contain)
    /// says yes to them).
    pub(crate) fn insert(&mut self, id: &[u8]) {
        let Some((k, x)) = keys(id) else { return };
        let b = self.block_of(k);
        let m = masks(x);
        if let Some(block) = self.blocks.get_mut(b) {
            for (w, m) in block.0.iter_mut().zip(m) {
                *w |= m;
            }
        }
        self.ids += 1;
    }

    /// False if `id` was certainly never inserted; true if it may have been (about 0.55% of absent ids).
    #[inline]
    pub fn may_contain(&self, id: &[u8]) -> bool {
        let Some((k, x)) = keys(id) else { return true };
        let m = masks(x);
        // `block_of` is below `blocks.len()` by construction; `get` keeps this safe code.
        let Some(block) = self.blocks.get(self.block_of(k)) else {
            return true;
        };
        let mut miss = 0u64;
        for (w, m) in block.0.iter().zip(m) {
            miss |= !w & m;
        }
        miss == 0
    }

    /// The block [`may_contain`](Self::may_contain) reads for `id` (for a batch to prefetch it); `None` where it
    /// reads none.
    #[inline(always)]
    pub(crate) fn block_of_id(&self, id: &[u8]) -> Option<&[u64; 4]> {
        let (k, _) = keys(id)?;
        self.blocks.get(self.block_of(k)).map(|b| &b.0)
    }

    /// Memory held by the bits.
    pub fn bytes(&self) -> usize {
        self.blocks.len() * std::mem::size_of::<Block>()
    }

    /// How many ids were inserted (duplicates counted each time).
    pub(crate) fn ids(&self) -> u64 {
        self.ids
    }
}

#[cfg(test)]
/// A 20-byte pseudo-random id (splitmix64 over `i`): uniform like an object id, with no crate import.
fn id(i: u64) -> [u8; 20] {
    let mut out = [0u8; 20];
    let mut x = i;
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
    out
}

// Tests at module level, not in a `tests` module: a `super::` path would read as an import of the store's
// mod.rs to .ci/module-deps.sh (this file must import nothing, for the bench).
#[test]
fn holds_every_inserted_id_in_at_most_one_and_a_half_bytes_each() {
    let ids: Vec<_> = (0..1000).map(id).collect();
    let f = SplitBlockBloom::from_ids(ids.len(), ids.iter().map(|id| &id[..]));
    assert!(ids.iter().all(|id| f.may_contain(id)));
    assert!(f.bytes() as f64 / 1000.0 <= 1.5);
    assert_eq!(f.ids(), 1000);
    assert!(f.may_contain(b"short"), "not an id: never excluded");
    let fp = (1000..11_000).filter(|&i| f.may_contain(&id(i))).count();
    assert!(
        fp < 300,
        "{fp} false positives in 10 000 absent ids (about 55 expected)"
    );
}
