//! The delta-base cache of a reader: the objects that deltas were applied to, inflated and resolved, kept so
//! that the next delta against the same base does not inflate its whole chain again (git's delta base cache,
//! `core.deltaBaseCacheLimit`, 96 MiB by default). gix-pack's memory-capped LRU map does the work; this file
//! decides its bound and its keys.
//!
//! gix-pack keys an entry by its pack's `data::File::id` and the entry's offset. That id is, by default, a
//! CRC-32 of the pack's path (lossily decoded): two packs whose names differ only in bytes that are not UTF-8,
//! or whose paths collide, would share keys and one would be answered with the other's bytes. Each [`Pack`]
//! is given its store [`PackId`] instead ([`key_of`]): a pack's id names one pack file for as long as it exists
//! and is never reused, so a key never names two packs' bytes. A pack whose id does not fit 32 bits (after four
//! billion packs in one store's life) is read without the cache.
//!
//! [`Pack`]: crate::objects::Pack

use gix_pack::cache::DecodeEntry;
use gix_pack::cache::lru::MemoryCappedHashmap;
use odb_index::PackId;

/// git's default `core.deltaBaseCacheLimit`: 96 MiB.
pub const DEFAULT_LIMIT: usize = 96 * 1024 * 1024;

/// The cache key of `pack`'s entries: its store id, if it fits gix-pack's 32 bits.
pub(crate) fn key_of(pack: PackId) -> Option<u32> {
    u32::try_from(pack.as_u64()).ok()
}

/// One reader's cache ([`crate::Objects`] and each of its clones has its own, as each has its own inflater).
pub(crate) struct DeltaBases {
    limit: usize,
    map: Option<MemoryCappedHashmap>,
    never: gix_pack::cache::Never,
}

impl DeltaBases {
    /// A cache of at most `limit` bytes of object data; 0: no cache.
    pub(crate) fn new(limit: usize) -> DeltaBases {
        DeltaBases {
            limit,
            map: (limit > 0).then(|| MemoryCappedHashmap::new(limit)),
            never: gix_pack::cache::Never,
        }
    }

    /// The bound it was made with.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// What `decode_entry` is given for an entry of a pack whose key is `key`: this cache, or none.
    pub(crate) fn for_pack(&mut self, key: Option<u32>) -> &mut dyn DecodeEntry {
        match (&mut self.map, key) {
            (Some(map), Some(_)) => map,
            _ => &mut self.never,
        }
    }
}
