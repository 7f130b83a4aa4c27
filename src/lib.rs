//! # odb-index
//!
//! The object-lookup core of a git object database: "is object X here, and where?", answered from pack index
//! files (`objects/pack/*.idx`), the `multi-pack-index` and loose object directories, from many threads at once,
//! with index files loaded lazily and a loading protocol that is model-checked with loom (see `docs/PROTOCOL.md`).
//!
//! ```
//! use odb_index::{Location, ObjectId, Options, Store};
//! use std::process::Command;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // A repository with one object, written by git.
//!     let repo = tempfile::tempdir()?;
//!     let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
//!     git(&["init", "-q"])?;
//!     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
//!     git(&["hash-object", "-w", "hello.txt"])?;
//!
//!     let store = Store::open(repo.path(), Options::default())?; // one per repository, shared
//!     let mut handle = store.handle(); // one per thread
//!     let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
//!     assert!(matches!(handle.locate(&hello)?, Some(Location::Loose { dir: 0 })));
//!     let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
//!     assert_eq!(handle.locate(&absent)?, None);
//!     Ok(())
//! }
//! ```
//!
//! Start with [`Store::open`] and [`Store::handle`]; a [`Handle`] answers [`Handle::locate`] (where an object is:
//! [`Location`]), [`Handle::contains`] and [`Handle::lookup_prefix`]. The file formats on their own are
//! [`idx::PackIndex`] and [`midx::MultiPackIndex`] (one `open`, one `find` each); [`repo`] finds a repository's
//! objects directory and alternates; [`data`] is the crate's guarded file read, for front ends reading other files
//! of a repository under the same rules.
//!
//! ## Features
//!
//! None is on by default, and a user needs none:
//! - `reader-hooks`: `Store::report_unreadable_loose`, for a crate that reads the objects the store locates and
//!   reports the loose files that are not objects into [`Store::problems`] (odb-index-gix enables it).
//! - `test-support`: the module `testing` (index writers, the other ways to open and search an index, the loose
//!   and chain types), for this workspace's tests, benchmark and fuzz targets; not covered by semver. A feature
//!   rather than `#[doc(hidden)]`: without it the items do not exist, so no user reaches them by accident, and
//!   `docs/public-api.txt` (made with default features) does not list them.
//! - `fault-injection`: the module `fault`, which makes the `n`th system call of a kind fail with a chosen
//!   `errno` (in process, per thread or from the environment variable `ODB_INDEX_FAULT`), for this workspace's
//!   fault tests (docs/RELIABILITY.md); not covered by semver. Without it every check is an inlined `Ok(())`.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// No function with too many arguments, and no allowance for one.
#![forbid(clippy::too_many_arguments)]
// The 80-line rule (clippy's `too_many_lines`, .clippy.toml) is for the shipped code, which the build without
// `cfg(test)` checks; a unit test is a scenario read top to bottom.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod bytes;
// The guarded read: the one place that opens and reads files (`disallowed-methods` in .clippy.toml).
#[allow(clippy::disallowed_methods)]
pub mod data;
mod dir;
mod error;
mod fanout;
// The seam at every system call (SQLite's fault injection): `Call` and `check` always public (the front ends'
// own system calls check it too; without the feature `fault-injection` the check is an inlined `Ok(())`), the
// plans and reports with the feature only (tests).
pub mod fault;
mod ids;
pub mod idx;
mod load_mode;
mod loose;
pub mod midx;
mod oid;
mod prefetch;
mod prefix;
pub(crate) mod protocol;
pub mod repo;
mod store;
// The modelled facade: the one place naming std's atomics and locks (.clippy.toml; its spin hint is allowed where
// it is called, so a yield in the facade is still flagged).
#[allow(clippy::disallowed_types)]
pub(crate) mod sync;
#[cfg(feature = "test-support")]
pub mod testing;

pub use error::Error;
pub use ids::PackId;
pub use oid::{HashKind, HexError, ObjectId, UnknownHashKind};
pub use prefix::{Prefix, PrefixError};
pub use store::{
    Handle, IncompleteMode, LoadMode, Location, LooseMode, Metrics, MidxCheck, MissFilterMode,
    MissFilterStats, ObjectCounts, Options, PackInfo, PrefixLookup, Problem, RefreshMode, Store,
    Verified,
};

/// The examples of `docs/API.md`, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/API.md")]
pub struct ApiDocs;

/// The example of `README.md`, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDocs;
