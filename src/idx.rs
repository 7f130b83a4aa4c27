//! Pack index (`.idx`) files, versions 1 and 2, SHA-1 and SHA-256. (To be written.)

use std::fmt;

/// What is wrong with a malformed `.idx` file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdxProblem {
    /// The file is shorter than the smallest valid index.
    TooSmall {
        /// The file's length.
        len: u64,
    },
}

impl fmt::Display for IdxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdxProblem::TooSmall { len } => write!(f, "file is too small ({len} bytes)"),
        }
    }
}
