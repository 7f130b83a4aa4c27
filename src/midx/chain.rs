//! Incremental multi-pack-index chains: `objects/pack/multi-pack-index.d/multi-pack-index-chain` names layers
//! `multi-pack-index-<checksum>.midx` in the same directory, one hex checksum a line, base first (written by
//! `git multi-pack-index write --incremental`, git 2.47 and later).
//!
//! Each layer is a multi-pack-index of its own over the packs it adds: its pack int ids count from 0 within the
//! layer, and it lists no object a base layer lists. git reads the chain only when there is no
//! `objects/pack/multi-pack-index`, loads the layers base first and stops at the first one that cannot be loaded
//! (git's `load_midx_chain_fd_st`); a layer is checked here to end with the checksum it is named after, so a
//! layer rewritten in place is not taken for another.
//!
//! Since every layer answers correctly on its own for the packs it lists, the store searches each layer as one
//! multi-pack-index; the packs of a layer that cannot be used are searched through their own `.idx` files.
//!
//! ```
//! use odb_index::testing::{read_chain, CHAIN_DIR};
//! use odb_index::HashKind;
//!
//! let tmp = tempfile::tempdir()?;
//! let pack_dir = tmp.path();
//! assert!(read_chain(pack_dir, HashKind::Sha1)?.is_none()); // no chain
//! std::fs::create_dir(pack_dir.join(CHAIN_DIR))?;
//! let (a, b) = ("1".repeat(40), "2".repeat(40));
//! std::fs::write(pack_dir.join(CHAIN_DIR).join("multi-pack-index-chain"), format!("{a}\n{b}\n"))?;
//! let layers = read_chain(pack_dir, HashKind::Sha1)?.unwrap();
//! assert_eq!(layers.len(), 2);
//! assert_eq!(layers[0].checksum.to_string(), a); // base first
//! assert!(layers[1].path.ends_with(format!("multi-pack-index.d/multi-pack-index-{b}.midx")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use super::MultiPackIndex;
use crate::data::LoadMode;
pub use crate::error::ChainProblem;
use crate::error::Error;
use crate::oid::{HashKind, ObjectId};

/// The directory of a chain, inside `objects/pack/`.
pub const CHAIN_DIR: &str = "multi-pack-index.d";
/// The chain file, inside [`CHAIN_DIR`].
pub const CHAIN_FILE: &str = "multi-pack-index-chain";

/// One layer named by a chain file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The checksum the layer is named after (and must end with).
    pub checksum: ObjectId,
    /// `multi-pack-index.d/multi-pack-index-<checksum>.midx`.
    pub path: PathBuf,
}

/// The longest chain file read: 1 MiB, over 16 000 layers of SHA-256 checksums (git writes one line per layer
/// and merges layers long before that). A longer file is an [`Error::Io`] carrying
/// [`FileProblem::TooLarge`](crate::data::FileProblem::TooLarge), never read on.
pub const MAX_CHAIN_FILE_LEN: u64 = 1 << 20;

/// The path of the chain file of `pack_dir`.
pub fn chain_path(pack_dir: &Path) -> PathBuf {
    pack_dir.join(CHAIN_DIR).join(CHAIN_FILE)
}

/// Read the chain file of `pack_dir` (an `objects/pack` directory): its layers, base first. `None` if there is
/// no chain file or it is empty (git treats both as "no chain"). The file is read with
/// [`data::read_bounded`](crate::data::read_bounded): never blocks, a FIFO, device or directory is refused, and
/// at most [`MAX_CHAIN_FILE_LEN`] bytes are read. Errors: [`Error::Io`], or
/// [`Error::CorruptChain`] for a line that is not a checksum of `kind`.
pub fn read_chain(pack_dir: &Path, kind: HashKind) -> Result<Option<Vec<Layer>>, Error> {
    let path = chain_path(pack_dir);
    let text = match crate::data::read_bounded(&path, MAX_CHAIN_FILE_LEN) {
        Ok(t) => t,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    if text.is_empty() {
        return Ok(None);
    }
    let corrupt = |problem| Error::CorruptChain {
        path: path.clone(),
        problem,
    };
    if text.len() < kind.hex_len() {
        return Err(corrupt(ChainProblem::TooSmall {
            len: text.len() as u64,
        }));
    }
    let mut layers = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() && i > 0 {
            // The final newline (or blank lines, which git's line count would not reach either).
            continue;
        }
        let checksum = ObjectId::from_hex_kind(line, kind)
            .map_err(|_| corrupt(ChainProblem::BadLine { line: i + 1, kind }))?;
        layers.push(Layer {
            checksum,
            path: pack_dir
                .join(CHAIN_DIR)
                .join(format!("multi-pack-index-{checksum}.midx")),
        });
    }
    Ok(Some(layers))
}

impl Layer {
    /// Open the layer (as `mode` says) and check it like any multi-pack-index, then check that it ends with the
    /// checksum it is named after.
    pub fn open(&self, kind: HashKind, mode: LoadMode) -> Result<MultiPackIndex, Error> {
        self.check(MultiPackIndex::open_with(&self.path, kind, mode)?)
    }

    /// `m`, this layer's file as opened, if it ends with the checksum the layer is named after.
    pub(crate) fn check(&self, m: MultiPackIndex) -> Result<MultiPackIndex, Error> {
        let found = m.checksum();
        if found != self.checksum {
            return Err(Error::CorruptChain {
                path: self.path.clone(),
                problem: ChainProblem::ChecksumMismatch {
                    expected: self.checksum,
                    found,
                },
            });
        }
        Ok(m)
    }
}
