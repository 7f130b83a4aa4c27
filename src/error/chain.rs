//! What is wrong with an incremental multi-pack-index chain (re-exported as
//! `odb_index::midx::ChainProblem`).

use crate::oid::{HashKind, ObjectId};

/// What is wrong with a chain file or one of its layers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChainProblem {
    /// A line of the chain file is not a hex object id of the repository's kind.
    #[error("line {line} is not a {kind} checksum")]
    BadLine {
        /// The line number (1-based).
        line: usize,
        /// The repository's hash kind.
        kind: HashKind,
    },
    /// The chain file is shorter than one checksum (git: "multi-pack-index chain file too small").
    #[error("the chain file is too small ({len} bytes)")]
    TooSmall {
        /// Its length.
        len: u64,
    },
    /// A layer does not end with the checksum it is named after.
    #[error("the layer's checksum is {found}, not the {expected} it is named after")]
    ChecksumMismatch {
        /// The checksum in its name.
        expected: ObjectId,
        /// Its trailer.
        found: ObjectId,
    },
}
