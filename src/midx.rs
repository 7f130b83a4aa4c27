//! The `multi-pack-index` file. (To be written.)

use std::fmt;

/// What is wrong with a malformed `multi-pack-index` file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MidxProblem {
    /// The file is shorter than the smallest valid multi-pack-index.
    TooSmall {
        /// The file's length.
        len: u64,
    },
}

impl fmt::Display for MidxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MidxProblem::TooSmall { len } => write!(f, "file is too small ({len} bytes)"),
        }
    }
}
