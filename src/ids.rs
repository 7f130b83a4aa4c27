//! Identifiers shared by the formats, the error type and the store: [`PackId`] and the multi-pack-index's
//! [`ChunkId`]. This module imports nothing from the crate, so every other module may name them.

use std::fmt;

/// Names one pack file for as long as it exists in the repository, across refreshes.
///
/// Ids are serial numbers handed out by one [`Store`](crate::Store); a pack keeps its id while a refresh sees
/// the same file (same path, size, modification time and inode).
/// [`Store::pack_path`](crate::Store::pack_path) turns an id into the pack's path, or reports
/// [`Error::StalePack`](crate::Error::StalePack) once the pack is gone, never another pack's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackId(pub(crate) u64);

impl PackId {
    /// The raw serial number.
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

/// A 4-byte chunk id, shown as text when it is printable ASCII and as hex otherwise.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkId(pub [u8; 4]);

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.iter().all(|b| b.is_ascii_graphic()) {
            for &b in &self.0 {
                write!(f, "{}", char::from(b))?;
            }
            Ok(())
        } else {
            write!(f, "0x{:08x}", u32::from_be_bytes(self.0))
        }
    }
}

impl fmt::Debug for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkId({self})")
    }
}
