//! # odb-index
//!
//! The object-lookup core of a git object database: "is object X here, and where?", answered from pack index
//! files (`objects/pack/*.idx`), the `multi-pack-index` and loose object directories, from many threads at once,
//! with index files loaded lazily and a loading protocol that is model-checked with loom (see `docs/PROTOCOL.md`).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod data;
mod error;
mod ids;
pub mod idx;
pub mod loose;
pub mod midx;
mod oid;
pub mod prefix;
#[doc(hidden)]
pub mod protocol;
pub mod repo;
pub mod store;
pub(crate) mod sync;

/// True when the library was built for a model checker, with `RUSTFLAGS="--cfg loom"` or `--cfg shuttle` (its
/// protocol then runs only inside a model). Doctests do not see that cfg but link that library: those that touch
/// the store return early on it.
#[doc(hidden)]
pub const BUILT_FOR_MODEL_CHECKING: bool = cfg!(any(loom, shuttle));

pub use data::LoadMode;
pub use error::Error;
pub use ids::PackId;
pub use oid::{HashKind, HexError, ObjectId, UnknownHashKind};
pub use prefix::{Prefix, PrefixError};
pub use store::{
    Handle, IncompleteMode, Location, LooseMode, MidxCheck, MissFilterMode, ObjectCounts, Options,
    PackInfo, PrefixLookup, Problem, RefreshMode, Store,
};

/// The examples of `docs/API.md`, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/API.md")]
pub struct ApiDocs;
