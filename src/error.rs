//! The crate's one error type.

use std::fmt;
use std::path::PathBuf;

use crate::oid::{HashKind, HexError};
use crate::store::PackId;

/// Everything that can go wrong, each naming the file and what is wrong with it.
///
/// `Error` is `Send + Sync`; load failures recorded by the store are shared as `Arc<Error>`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error while reading `path`.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A pack index (`.idx`) file is malformed.
    CorruptIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: crate::idx::IdxProblem,
    },
    /// A `multi-pack-index` file is malformed.
    CorruptMultiPackIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: crate::midx::MidxProblem,
    },
    /// An index file was written for another hash function than the repository uses.
    WrongHashKind {
        /// The file.
        path: PathBuf,
        /// The repository's object format.
        expected: HashKind,
        /// What the file says.
        found: HashKind,
    },
    /// The path is not a git repository or objects directory.
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// A repository file (config, alternates) could not be understood.
    BadRepositoryFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The object was not found, and some index could not be loaded, so "missing" cannot be claimed.
    Incomplete {
        /// The index files that failed to load, with why.
        failed: Vec<(PathBuf, crate::sync::plain::Arc<Error>)>,
    },
    /// A [`PackId`] that names a pack which is no longer in the repository (removed by repack or gc).
    /// Refresh and locate the object again.
    StalePack {
        /// The pack id asked for.
        pack: PackId,
    },
    /// The thread loading `path` panicked; the load is recorded as failed so that no waiter blocks forever.
    LoaderPanicked {
        /// The file that was being loaded.
        path: PathBuf,
    },
    /// Text that should be an object id is not one.
    InvalidId(HexError),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::CorruptIndex { path, problem } => {
                write!(f, "{}: corrupt pack index: {problem}", path.display())
            }
            Error::CorruptMultiPackIndex { path, problem } => {
                write!(f, "{}: corrupt multi-pack-index: {problem}", path.display())
            }
            Error::WrongHashKind {
                path,
                expected,
                found,
            } => write!(
                f,
                "{}: written for {found} but the repository uses {expected}",
                path.display()
            ),
            Error::NotARepository { path, reason } => {
                write!(f, "{}: not a git repository: {reason}", path.display())
            }
            Error::BadRepositoryFile { path, reason } => write!(f, "{}: {reason}", path.display()),
            Error::Incomplete { failed } => {
                write!(
                    f,
                    "object not found, and {} index file(s) could not be loaded:",
                    failed.len()
                )?;
                for (i, (_, e)) in failed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(";")?;
                    }
                    write!(f, " {e}")?;
                }
                Ok(())
            }
            Error::StalePack { pack } => {
                write!(
                    f,
                    "pack {pack:?} is no longer in the repository (refresh and locate again)"
                )
            }
            Error::LoaderPanicked { path } => {
                write!(
                    f,
                    "{}: the thread loading this index panicked",
                    path.display()
                )
            }
            Error::InvalidId(e) => write!(f, "invalid object id: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::InvalidId(e) => Some(e),
            _ => None,
        }
    }
}

impl From<HexError> for Error {
    fn from(e: HexError) -> Self {
        Error::InvalidId(e)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_is_send_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<super::Error>();
    }
}
