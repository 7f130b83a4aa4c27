//! # odb-index
//!
//! The object-lookup core of a git object database: "is object X here, and where?", answered from pack index
//! files (`objects/pack/*.idx`), the `multi-pack-index` and loose object directories, from many threads at once,
//! with index files loaded lazily and a loading protocol that is model-checked with loom (see `docs/PROTOCOL.md`).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod data;
mod error;
mod fanout;
mod ids;
pub mod idx;
pub mod loose;
pub mod midx;
mod oid;
mod prefetch;
pub mod prefix;
pub(crate) mod protocol;
pub mod repo;
pub mod store;
pub(crate) mod sync;

/// The loom models of the protocol (`loom-tests/`), compiled into this crate's unit tests only when they are built
/// with `RUSTFLAGS="--cfg loom"`: `RUSTFLAGS="--cfg loom" cargo test --release` runs them. The primitives swap
/// under the same `cfg(all(test, loom))` (`src/sync.rs`), so a dependent built with `--cfg loom` gets `std`'s.
#[cfg(all(test, loom))]
#[path = "../loom-tests/main.rs"]
mod loom_models;

/// The property tests (`proptests/`), compiled into the unit tests so that they reach crate-private lookup
/// internals (the multi-pack-index's precomputed bounds and bucket check) without those being public. They name
/// the crate `odb_index`, as a dependent would: the alias below.
#[cfg(all(test, not(any(loom, shuttle))))]
#[path = "../proptests/main.rs"]
mod proptests;
#[cfg(test)]
extern crate self as odb_index;

/// The shuttle models (`loom-tests/shuttle.rs`), likewise compiled into the unit tests under
/// `RUSTFLAGS="--cfg shuttle"` only.
#[cfg(all(test, shuttle))]
#[path = "../loom-tests/shuttle.rs"]
mod shuttle_models;

pub use data::LoadMode;
pub use error::Error;
pub use ids::PackId;
pub use oid::{HashKind, HexError, ObjectId, UnknownHashKind};
pub use prefix::{Prefix, PrefixError};
pub use store::{
    Handle, IncompleteMode, Location, LooseMode, Metrics, MidxCheck, MissFilterMode, ObjectCounts,
    Options, PackInfo, PrefixLookup, Problem, RefreshMode, Store,
};

/// The examples of `docs/API.md`, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/API.md")]
pub struct ApiDocs;
