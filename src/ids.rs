//! Identifiers shared by the formats, the error type and the store: [`PackId`] and the multi-pack-index's
//! [`ChunkId`]. This module imports nothing from the crate, so every other module may name them.

use std::fmt;

/// Names one pack file for as long as it exists in the repository, across refreshes.
///
/// Ids are serial numbers handed out by one [`Store`](crate::Store); a pack keeps its id while a refresh sees
/// the same file (same path, size, modification time and inode).
/// [`Store::pack_path`](crate::Store::pack_path) turns an id into the pack's path, or reports
/// [`Error::StalePack`](crate::Error::StalePack) once the pack is gone, never another pack's path.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{Location, ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?;
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// let Some(Location::Packed { pack, .. }) = store.handle().locate(&hello)? else { panic!("packed") };
/// assert!(store.is_pack_live(pack));
/// assert_eq!(store.pack(pack)?.id, pack);
/// assert_eq!(store.pack_path(pack)?, store.pack(pack)?.pack_path);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackId(pub(crate) u64);

impl PackId {
    /// The raw serial number.
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

/// A 4-byte chunk id, shown as text when it is printable ASCII and as hex otherwise.
///
/// ```
/// use odb_index::midx::ChunkId;
///
/// assert_eq!(ChunkId(*b"OIDF").to_string(), "OIDF");
/// ```
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
