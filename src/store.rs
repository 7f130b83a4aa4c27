//! The concurrent store. (To be written.)

/// Names one pack file for as long as it exists in the repository, across refreshes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackId(pub(crate) u64);
/// Placeholder.
pub struct Store;
/// Placeholder.
pub struct Handle;
/// Placeholder.
pub enum Location {}
/// Placeholder.
pub enum LooseMode {}
/// Placeholder.
pub struct Options;
/// Placeholder.
pub enum RefreshMode {}
