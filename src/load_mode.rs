//! [`LoadMode`]: how index files are brought into memory (a leaf module: the guarded read in `data` and the
//! store's options both name it).

/// How index files are brought into memory.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{LoadMode, ObjectId, Options, Store};
///
/// assert_eq!(Options::default().load, LoadMode::Mmap);
/// let store = Store::open(repo.path(), Options::default().load(LoadMode::Read))?;
/// assert!(store.handle().contains(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<ObjectId>()?)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// rewritten in place (for filesystems or tools that do that). A sparse file (one that allocates less than
    /// half of its length on disk, above 1 MiB) is refused with [`FileProblem::Sparse`](crate::data::FileProblem::Sparse) instead of being read:
    /// git never writes one, and reading it would take as much memory as it claims.
    Read,
}
