//! Helpers shared by odb-index's test suites and its benchmark: repositories built with the real `git`
//! ([`mod@git`]), git's maintenance run underneath stress tests ([`maintenance`]), hand edits of index files
//! ([`edit`]) and a counting allocator ([`alloc`]). Not published; it does not depend on odb-index, so every package of the workspace can use it
//! without a second copy of the library in its graph.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    reason = "test helpers read fixtures and share state with std: .clippy.toml's rules are for the shipped code"
)]

pub mod alloc;
pub mod cargo;
pub mod edit;
pub mod git;
pub mod maintenance;
#[cfg(unix)]
pub mod special;

pub use cargo::*;
pub use edit::*;
pub use git::*;
pub use maintenance::*;
#[cfg(unix)]
pub use special::*;
