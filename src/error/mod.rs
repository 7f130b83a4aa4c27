//! The crate's one error type, and the format problems it carries as its [`source`](std::error::Error::source).

use std::fmt;
use std::path::PathBuf;

use crate::ids::PackId;
use crate::oid::{HashKind, HexError, UnknownHashKind};
use crate::sync::plain::Arc;

mod chain;
mod idx;
mod midx;

pub use chain::ChainProblem;

pub use idx::IdxProblem;
pub use midx::MidxProblem;

/// Everything that can go wrong, each naming the file and what is wrong with it. Each variant is one kind of
/// failure; a variant caused by a lower-level error (I/O, a malformed file) returns it as
/// [`source`](std::error::Error::source).
///
/// `Error` is `Send + Sync`; load failures recorded by the store are shared as `Arc<Error>`.
///
/// ```
/// use odb_index::{Error, Options, Store};
///
/// let not_a_repository = tempfile::tempdir()?;
/// match Store::open(not_a_repository.path(), Options::default()) {
///     Err(e @ Error::NotARepository { .. }) => {
///         assert!(e.to_string().contains(&not_a_repository.path().display().to_string()))
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error while reading `path`.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A pack index (`.idx`) file is malformed.
    #[error("{}: corrupt pack index: {problem}", path.display())]
    CorruptIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: IdxProblem,
    },
    /// A `multi-pack-index` file is malformed.
    #[error("{}: corrupt multi-pack-index: {problem}", path.display())]
    CorruptMultiPackIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: MidxProblem,
    },
    /// An index file was written for another hash function than the repository uses.
    #[error("{}: written for {found} but the repository uses {expected}", path.display())]
    WrongHashKind {
        /// The file.
        path: PathBuf,
        /// The repository's object format.
        expected: HashKind,
        /// What the file says.
        found: HashKind,
    },
    /// An object id of another hash function than the repository uses was asked for (it is refused, not
    /// searched).
    #[error("{}: asked for a {found} object id but the repository uses {expected}", objects_dir.display())]
    WrongIdHashKind {
        /// The repository's objects directory.
        objects_dir: PathBuf,
        /// The repository's object format.
        expected: HashKind,
        /// The kind of the id asked for.
        found: HashKind,
    },
    /// The path is not a git repository or objects directory.
    #[error("{}: not a git repository: {reason}", path.display())]
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// A `.git` file (`gitdir: <path>`, in linked worktrees and submodules) could not be understood or names no
    /// git directory.
    #[error("{}: {reason}", path.display())]
    BadGitFile {
        /// The `.git` file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A linked worktree's `commondir` file is empty or names no directory.
    #[error("{}: {reason}", path.display())]
    BadCommonDir {
        /// The `commondir` file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The repository's `config` names an object format (`extensions.objectFormat`) this crate does not know.
    #[error("{}: extensions.objectFormat: {source}", path.display())]
    UnknownObjectFormat {
        /// The config file.
        path: PathBuf,
        /// The value found.
        source: UnknownHashKind,
    },
    /// The repository holds more index files (`.idx` and multi-pack-index) than one store can hold.
    #[error(
        "{}: {count} index files is more than one store can hold (at most {max})",
        objects_dir.display()
    )]
    TooManyIndexFiles {
        /// The repository's objects directory.
        objects_dir: PathBuf,
        /// How many index files were listed (own and alternates').
        count: usize,
        /// The most one store holds.
        max: usize,
    },
    /// A `multi-pack-index` was replaced between listing the pack directory and loading it: its pack numbers
    /// may mean other packs than the listing says, so it is not used until the next refresh.
    #[error(
        "{}: rewritten after the pack directory was listed; not used until the next refresh",
        path.display()
    )]
    MultiPackIndexRewritten {
        /// The file.
        path: PathBuf,
    },
    /// An incremental multi-pack-index chain file, or one of its layers, is malformed.
    #[error("{}: multi-pack-index chain: {problem}", path.display())]
    CorruptChain {
        /// The chain file or the layer.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        problem: ChainProblem,
    },
    /// The object was not found, and some index could not be loaded (or some directory or file that could hold
    /// it could not be read: a pack directory, an alternate, a loose directory), so "missing" cannot be
    /// claimed.
    #[error(fmt = fmt_incomplete)]
    Incomplete {
        /// The index files that failed to load, then the directories and files that could not be read, each
        /// with why.
        failed: Vec<(PathBuf, Arc<Error>)>,
    },
    /// A [`PackId`] that names a pack which is no longer in the repository (removed by repack or gc).
    /// Refresh and locate the object again.
    #[error("pack {pack:?} is no longer in the repository (refresh and locate again)")]
    StalePack {
        /// The pack id asked for.
        pack: PackId,
    },
    /// The thread loading `path` panicked; the load is recorded as failed so that no waiter blocks forever.
    #[error("{}: the thread loading this index panicked", path.display())]
    LoaderPanicked {
        /// The file that was being loaded.
        path: PathBuf,
    },
    /// Text that should be an object id is not one.
    #[error("invalid object id: {0}")]
    InvalidId(#[from] HexError),
}

/// Whether an I/O error says its file is gone ("not found", or a path component that is not a directory): the
/// one kind of failed system call that is evidence of absence.
pub(crate) fn is_gone(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

fn fmt_incomplete(failed: &[(PathBuf, Arc<Error>)], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(
        f,
        "object not found, and {} index file(s) or directories could not be read:",
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

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether a file listed a moment ago is gone ("not found" opening it, or the `.pack` beside an index): a
    /// pack or multi-pack-index git replaced or removed since the pack directory was read. Not a problem of the
    /// repository (git drops such a file without a word); a lookup that meets one lists the directories again.
    pub(crate) fn is_vanished(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// Whether this is a failed system call that is no evidence that its file is gone or broken: an I/O error
    /// other than "not found" or "not a directory" (EINTR, EAGAIN, EMFILE, ENFILE, ENOMEM, EIO, EACCES, ...),
    /// which may pass. The fault policy (docs/RELIABILITY.md, "Faults"): such a failure is never carried over to
    /// the next listing, and a lookup that would answer "missing" after one lists again once; if it persists,
    /// the answer is an error naming the file, never "missing".
    pub(crate) fn may_be_transient(&self) -> bool {
        matches!(self, Error::Io { source, .. } if !crate::error::is_gone(source))
    }

    /// Whether this is a failed system call of the kinds that pass ([`crate::fault::is_transient`]): one that
    /// persists is answered as an error even under `IncompleteMode::Miss`, never as git's `missing`.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self, Error::Io { source, .. } if crate::fault::is_transient(source))
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    #[test]
    fn error_is_send_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<super::Error>();
    }

    #[test]
    fn format_problems_are_the_source() {
        let e = super::Error::CorruptIndex {
            path: "x.idx".into(),
            problem: super::IdxProblem::UnsupportedVersion(9),
        };
        let source = e.source().expect("a source");
        assert_eq!(
            source.downcast_ref::<super::IdxProblem>(),
            Some(&super::IdxProblem::UnsupportedVersion(9))
        );
        let e = super::Error::CorruptMultiPackIndex {
            path: "multi-pack-index".into(),
            problem: super::MidxProblem::UnsupportedVersion { version: 9 },
        };
        assert!(e.source().unwrap().is::<super::MidxProblem>());
        assert!(e.to_string().starts_with("multi-pack-index: "), "{e}");
    }
}
