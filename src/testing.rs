//! What this workspace's tests, benchmarks and fuzz targets use beyond the public API: index writers, the
//! alternative ways to open and search an index that the store uses inside (or that the benchmark compares),
//! the loose-object directory types and the multi-pack-index chain reader.
//!
//! Only with the `test-support` feature, which no user needs: the crate's own tests enable it through a
//! dev-dependency on the crate itself, the benchmark and the fuzz targets through their dependency. Nothing here
//! is covered by semver.
//!
//! The methods are in extension traits ([`PackIndexExt`], [`MultiPackIndexExt`]): import one and call them on
//! the type they extend (`idx.lookup_binary(id)`).
//!
//! ```
//! use odb_index::HashKind;
//! use odb_index::idx::{PackIndex, write::{Entry, write_idx}};
//! use odb_index::testing::PackIndexExt;
//!
//! let kind = HashKind::Sha1;
//! let entries = [Entry { id: kind.digest(b"a"), offset: 12, crc32: 0 }];
//! let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack"))?;
//! let idx = PackIndex::from_data(bytes.into(), "pack-x.idx".into(), kind)?;
//! assert_eq!(idx.lookup_binary(entries[0].id.as_bytes()), Some(12));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::LoadMode;
use crate::data::Data;
use crate::error::Error;
use crate::idx::PackIndex;
use crate::midx::MidxProblem;
use crate::midx::MultiPackIndex;
use crate::oid::{HashKind, ObjectId};
use crate::prefix::Prefix;

pub use crate::loose::{LooseCache, LooseDb};
/// The store's split-block Bloom filter (the miss filter's bits), for the benchmark's scenario `filter-build`.
pub use crate::store::listing::bloom::SplitBlockBloom;

/// The fan-out bucket check both formats run on a file's ids (`src/fanout.rs`), for the property tests.
pub mod fanout {
    pub use crate::fanout::{BucketFault, Ids, check_bucket, in_order};
}
pub use crate::midx::chain::{
    CHAIN_DIR, CHAIN_FILE, Layer, MAX_CHAIN_FILE_LEN, chain_path, read_chain,
};

/// The pack index's other entry points (see [`PackIndex`] for the public ones).
pub trait PackIndexExt: Sized {
    /// Load (as `mode` says) and validate the index at `path`.
    fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error>;
    /// Open a pack's own `.idx` and check it against the `.pack` beside it, as the store does.
    fn open_for_pack(idx_path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error>;
    /// Validate `data` as an index of `kind`; `path` names it in errors.
    fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<Self, Error>;
    /// Check every offset against a pack of `pack_len` bytes from now on.
    fn with_pack_len(self, pack_len: u64) -> Self;
    /// [`PackIndex::find`] with a bad entry answered `None`.
    fn lookup(&self, id: &[u8]) -> Option<u64>;
    /// [`lookup`](Self::lookup) for an [`ObjectId`]; `None` if it is of another hash kind.
    fn lookup_id(&self, id: &ObjectId) -> Option<u64>;
    /// [`lookup`](Self::lookup) by plain binary search (git's), the benchmark's baseline and the reference the
    /// fast search is tested against.
    fn lookup_binary(&self, id: &[u8]) -> Option<u64>;
    /// The position of `id` in sorted order.
    fn position(&self, id: &[u8]) -> Option<u32>;
    /// [`position`](Self::position) by plain binary search.
    fn position_binary(&self, id: &[u8]) -> Option<u32>;
    /// The positions of the ids that start with `prefix`.
    fn prefix_range(&self, prefix: &Prefix) -> Range<u32>;
}

impl PackIndexExt for PackIndex {
    fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error> {
        PackIndex::open_with(path, kind, mode)
    }
    fn open_for_pack(idx_path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error> {
        PackIndex::open_for_pack(idx_path, kind, mode)
    }
    fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<Self, Error> {
        PackIndex::from_data(data, path, kind)
    }
    fn with_pack_len(self, pack_len: u64) -> Self {
        PackIndex::with_pack_len(self, pack_len)
    }
    fn lookup(&self, id: &[u8]) -> Option<u64> {
        PackIndex::lookup(self, id)
    }
    fn lookup_id(&self, id: &ObjectId) -> Option<u64> {
        PackIndex::lookup_id(self, id)
    }
    fn lookup_binary(&self, id: &[u8]) -> Option<u64> {
        PackIndex::lookup_binary(self, id)
    }
    fn position(&self, id: &[u8]) -> Option<u32> {
        PackIndex::position(self, id)
    }
    fn position_binary(&self, id: &[u8]) -> Option<u32> {
        PackIndex::position_binary(self, id)
    }
    fn prefix_range(&self, prefix: &Prefix) -> Range<u32> {
        PackIndex::prefix_range(self, prefix)
    }
}

/// The multi-pack-index's other entry points (see [`MultiPackIndex`] for the public ones).
pub trait MultiPackIndexExt: Sized {
    /// Load (as `mode` says) and validate the multi-pack-index at `path`.
    fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error>;
    /// Validate `data` as a multi-pack-index of `kind`; `path` names it in errors.
    fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<Self, Error>;
    /// [`MultiPackIndex::find`] with each offset also checked against its pack's length (`pack_lens`): the
    /// store's lookup, with the bounds of those lengths.
    fn find_in(&self, id: &[u8], pack_lens: &[u64]) -> Result<Option<(u32, u64)>, MidxProblem>;
    /// [`MultiPackIndex::find`] with a bad entry answered `None`.
    fn lookup(&self, id: &[u8]) -> Option<(u32, u64)>;
    /// The position of `id` in sorted order.
    fn position(&self, id: &[u8]) -> Option<u32>;
    /// The positions of the ids that start with `prefix`.
    fn prefix_range(&self, prefix: &Prefix) -> Range<u32>;
    /// Check fan-out bucket `first`: in order, and every id of it inside it.
    fn check_bucket(&self, first: u8) -> Result<(), MidxProblem>;
    /// Whether the store's fast entry check with the bounds of `pack_lens` and the check that explains a bad
    /// entry agree on `id`'s lookup.
    fn checks_agree(&self, id: &[u8], pack_lens: &[u64]) -> bool;
}

impl MultiPackIndexExt for MultiPackIndex {
    fn open_with(path: &Path, kind: HashKind, mode: LoadMode) -> Result<Self, Error> {
        MultiPackIndex::open_with(path, kind, mode)
    }
    fn from_data(data: Data, path: PathBuf, kind: HashKind) -> Result<Self, Error> {
        MultiPackIndex::from_data(data, path, kind)
    }
    fn find_in(&self, id: &[u8], pack_lens: &[u64]) -> Result<Option<(u32, u64)>, MidxProblem> {
        let bounds = self.offset_bounds(pack_lens);
        let found = self.find_entry(id, |p| bounds.get(p as usize).copied(), None);
        self.explain(found, pack_lens)
    }
    fn lookup(&self, id: &[u8]) -> Option<(u32, u64)> {
        self.find(id).ok().flatten()
    }
    fn position(&self, id: &[u8]) -> Option<u32> {
        MultiPackIndex::search(self, id, None)
    }
    fn prefix_range(&self, prefix: &Prefix) -> Range<u32> {
        MultiPackIndex::prefix_range(self, prefix)
    }
    fn check_bucket(&self, first: u8) -> Result<(), MidxProblem> {
        MultiPackIndex::check_bucket(self, first)
    }
    fn checks_agree(&self, id: &[u8], pack_lens: &[u64]) -> bool {
        MultiPackIndex::checks_agree(self, id, pack_lens)
    }
}

/// Whether `offset` can be an object's offset in a pack of `pack_len` bytes whose trailer is `hash_len` bytes.
pub fn offset_in_pack(offset: u64, pack_len: u64, hash_len: usize) -> bool {
    crate::idx::offset_in_pack(offset, pack_len, hash_len)
}

/// The pack names a multi-pack-index lists, read without loading the rest of it.
pub fn read_pack_names(path: &Path, kind: HashKind) -> Result<Vec<std::ffi::OsString>, Error> {
    crate::midx::read_pack_names(path, kind)
}

/// The model checkers' way in: what the models of `loom-tests/` (test targets `loom` and `shuttle`) need of the
/// crate's internals. Only in a model-checked build (`--cfg loom` or `--cfg shuttle` with the feature
/// `model-checking`, which the crate's dev-dependency on itself turns on under those cfgs: `src/sync/`).
///
/// A model runs its checker inside [`checked`](model::checked), so that every primitive the crate builds there
/// is the checker's.
#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub mod model {
    /// The bucket-order record of a file (`src/fanout.rs`).
    pub use crate::fanout::{BucketState, Confirmed};
    /// The lazy-loading protocol (`src/protocol.rs`).
    pub use crate::protocol::{Current, Settled, SlotMap, SlotRef, Ticket, View, Word};
    /// The models that live beside the code they check (they reach its private fields): freshness (F1, F2),
    /// batches (B1) and the change detector.
    #[cfg(all(loom, any(target_os = "linux", target_os = "android")))]
    pub use crate::store::{
        batch_model as batch, freshness_model as freshness, watch_model as watch,
    };
    pub use crate::sync::OpCounts;
    #[cfg(all(shuttle, not(loom)))]
    pub use crate::sync::model::check_pct;
    /// In or out of a model, the checker's spawn and `Arc` (`src/sync/model.rs`).
    pub use crate::sync::model::{Arc, checked, spawn};
    /// The per-test event trace and operation counts, and the spin budget (`src/sync/`).
    #[cfg(loom)]
    pub use crate::sync::{reset_model_state, set_spin_limit, take_op_counts, take_trace};
}
