//! What [`Store::problems`](super::Store::problems) reports: trouble the store worked around.

use std::path::PathBuf;

use crate::error::Error;
use crate::repo::AlternateProblem;
use crate::sync::plain::Arc;

/// Something wrong in the repository that the store works around rather than fails on, as reported by
/// [`Store::problems`](super::Store::problems). Each names the file or directory concerned.
///
/// Cheap to clone (the causes are shared).
///
/// ```
/// # use std::process::Command;
/// # let tmp = tempfile::tempdir()?;
/// # let st = Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
/// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").status()?;
/// # assert!(st.success());
/// use odb_index::repo::AlternateProblem;
/// use odb_index::{Options, Problem, Store};
///
/// // An alternate that does not exist: the store opens, searches without it, and says so.
/// let alternates = tmp.path().join("objects/info/alternates");
/// std::fs::write(&alternates, "/no/such/objects\n")?;
/// let store = Store::open(tmp.path(), Options::default())?;
/// let problems = store.problems();
/// assert_eq!(problems.len(), 1);
/// assert!(matches!(&problems[0], Problem::Alternate(a) if matches!(**a, AlternateProblem::Missing { .. })));
/// assert_eq!(problems[0].path(), alternates.canonicalize()?);
/// assert!(problems[0].to_string().contains("/no/such/objects"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// An entry of an `info/alternates` file was not followed (its objects are not searched).
    #[error("{0}")]
    Alternate(Arc<AlternateProblem>),
    /// An objects directory's loose objects could not be opened, so they are not searched.
    #[error("loose objects not searched: {error}")]
    LooseNotSearched {
        /// The objects directory.
        dir: PathBuf,
        /// Why it could not be opened (names the directory).
        #[source]
        error: Arc<Error>,
    },
    /// A `multi-pack-index` could not be read when the pack directory was listed; the packs it lists are
    /// searched through their own `.idx` files.
    #[error("multi-pack-index ignored, using the .idx files: {error}")]
    MultiPackIndexIgnored {
        /// The file.
        path: PathBuf,
        /// Why it could not be read (names the file).
        #[source]
        error: Arc<Error>,
    },
    /// A pack directory exists but cannot be listed (permissions, a loop of symbolic links, not a directory):
    /// its packs are not searched, every other object is found, and a miss is [`Error::Incomplete`] naming it
    /// (git warns "unable to open object pack directory" and answers from the rest).
    #[error("pack directory not searched: {error}")]
    PackDirUnreadable {
        /// The `pack/` directory.
        dir: PathBuf,
        /// Why it could not be listed (names the directory).
        #[source]
        error: Arc<Error>,
    },
    /// A pack's `.idx` file failed to load (malformed, unreadable, not a regular file, written for the other hash
    /// function, or its `.pack` does not end with the checksum it records). A
    /// lookup that misses reports it as [`Error::Incomplete`]; this says so without a lookup.
    #[error("pack index not used: {error}")]
    IndexNotLoaded {
        /// The `.idx` file.
        path: PathBuf,
        /// Why it failed to load (names the file).
        #[source]
        error: Arc<Error>,
    },
    /// A `multi-pack-index` failed to load (malformed, or rewritten since the listing); the packs it lists are
    /// searched through their own `.idx` files.
    #[error("multi-pack-index not used, searching the .idx files instead: {error}")]
    MultiPackIndexNotLoaded {
        /// The file.
        path: PathBuf,
        /// Why it failed to load (names the file).
        #[source]
        error: Arc<Error>,
    },
    /// A multi-pack-index entry proved wrong at lookup: it names no pack of the file, lies outside its pack, or
    /// (under [`MidxCheck::PackIndex`](super::MidxCheck::PackIndex)) its pack's own index says otherwise; or a
    /// fanout bucket of its ids is out of order, so its search can miss what it lists. The object was looked up
    /// in the `.idx` files of the packs the file covers (the first few such problems of each file are kept).
    #[error("multi-pack-index entry wrong, answered from the .idx files: {error}")]
    MultiPackIndexEntryWrong {
        /// The multi-pack-index.
        path: PathBuf,
        /// What is wrong (names the file; for an index that could not check the entry, that index).
        #[source]
        error: Arc<Error>,
    },
    /// A pack's `.idx` lists ids out of order in a fan-out bucket (or an id in another bucket than its first
    /// byte's), as found when a lookup missed there: a search there can miss an object the file lists (git's
    /// does). A miss in that bucket is answered by a linear scan of the file instead, which finds every object
    /// it lists; this names the file and the first position out of order (one problem per bucket).
    #[error("pack index ids out of order, misses there answered by a linear scan: {error}")]
    IndexIdsOutOfOrder {
        /// The `.idx` file.
        path: PathBuf,
        /// What is wrong and where (names the file and the position).
        #[source]
        error: Arc<Error>,
    },
    /// A file named like a loose object is not one (empty, not a zlib stream of `<type> <size>\0...`, a
    /// directory, a dangling symbolic link), as found by the reader that opened it
    /// (`Store::report_unreadable_loose`): the object was answered
    /// missing, as git answers it (git warns on stderr).
    #[error("{}: not a loose object, answered missing: {reason}", path.display())]
    LooseObjectUnreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Problem {
    /// The file or directory the problem is about: for an alternate, the `info/alternates` file that lists it
    /// (or the path that could not be read).
    pub fn path(&self) -> &std::path::Path {
        match self {
            Problem::Alternate(p) => match &**p {
                AlternateProblem::Missing { listed_in, .. }
                | AlternateProblem::Cycle { listed_in, .. }
                | AlternateProblem::Duplicate { listed_in, .. }
                | AlternateProblem::TooDeep { listed_in, .. } => listed_in,
                AlternateProblem::Unreadable { path, .. } => path,
            },
            Problem::LooseNotSearched { dir, .. } | Problem::PackDirUnreadable { dir, .. } => dir,
            Problem::IndexNotLoaded { path, .. }
            | Problem::MultiPackIndexIgnored { path, .. }
            | Problem::MultiPackIndexNotLoaded { path, .. }
            | Problem::MultiPackIndexEntryWrong { path, .. }
            | Problem::IndexIdsOutOfOrder { path, .. }
            | Problem::LooseObjectUnreadable { path, .. } => path,
        }
    }
}
