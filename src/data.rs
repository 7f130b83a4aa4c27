//! The bytes of an index file: a read-only memory map (default) or a heap copy.

use std::fs::File;
use std::path::Path;

/// How index files are brought into memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadMode {
    /// Map the file read-only and close the descriptor at once (the default).
    ///
    /// This relies on git's discipline of never modifying an index file in place (it writes a temporary file and
    /// renames it): a mapped file that is truncated underneath raises `SIGBUS` on access, which no check can
    /// prevent.
    #[default]
    Mmap,
    /// Read the whole file into memory. Slower to load and uses heap memory, but immune to files truncated or
    /// rewritten in place (for filesystems or tools that do that).
    Read,
}

/// The bytes of one index file.
#[derive(Debug)]
pub enum Data {
    /// A read-only mapping.
    Mmap(memmap2::Mmap),
    /// A heap copy.
    Vec(Vec<u8>),
}

impl Data {
    /// Bring `path` into memory as `mode` says. The file descriptor is closed before this returns.
    pub fn open(path: &Path, mode: LoadMode) -> std::io::Result<Data> {
        let file = File::open(path)?;
        match mode {
            LoadMode::Mmap => {
                let len = file.metadata()?.len();
                if len == 0 {
                    // Zero-length mappings are not portable; an empty file is simply empty.
                    return Ok(Data::Vec(Vec::new()));
                }
                // SAFETY: the mapping is read-only and private to this process. Its contents can still change if
                // another process truncates or rewrites the file in place; git never does that (it writes a
                // temporary file and renames it over the old name, which leaves this mapping on the old inode),
                // and `LoadMode::Read` exists for setups where that discipline does not hold. Every read of the
                // mapping is bounds-checked against its length as it was when mapped.
                let map = unsafe { memmap2::Mmap::map(&file)? };
                Ok(Data::Mmap(map))
            }
            LoadMode::Read => {
                use std::io::Read as _;
                let mut v = Vec::new();
                (&file).read_to_end(&mut v)?;
                Ok(Data::Vec(v))
            }
        }
    }
}

impl std::ops::Deref for Data {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Data::Mmap(m) => m,
            Data::Vec(v) => v,
        }
    }
}

impl From<Vec<u8>> for Data {
    fn from(v: Vec<u8>) -> Self {
        Data::Vec(v)
    }
}
