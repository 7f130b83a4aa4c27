use std::path::PathBuf;

/// Why an object could not be read or named: the one error type of this crate. Every inherent method returns it;
/// it converts (`From`, so `?` works) from odb-index's [`odb_index::Error`] and [`odb_index::HexError`] and from
/// gix's [`gix_error::Error`](https://docs.rs/gix-error/0.5/gix_error/struct.Error.html) (what gix-hash's parsing and gix-object's traits return). A variant about a file names it.
///
/// gix-object's traits on [`Objects`](crate::Objects) (`Find`, `FindHeader`, and so `FindExt`) must return
/// gix's error: they box this one into it ([`gix_error::Error::from_error`](https://docs.rs/gix-error/0.5/gix_error/struct.Error.html#method.from_error)). A caller gets it back with
/// gix's [`downcast_any_ref`](https://docs.rs/gix-error/0.5/gix_error/struct.Error.html#method.downcast_any_ref), or, once `?` made it an [`Error::Gix`], with
/// [`Error::original`] (which [`Error::is_gone`] and the other predicates look through).
///
/// ```
/// use odb_index_gix::gix_object::{Find, FindExt};
/// use odb_index_gix::{Error, ObjectId, Objects};
///
/// // One function, errors from gix-hash, gix-object's traits and this crate, one `?`.
/// fn blob_len(objects: &Objects, hex: &str) -> Result<usize, Error> {
///     let id: ObjectId = hex.parse()?; // gix-hash's parse error
///     let mut buf = Vec::new();
///     let blob = objects.find_blob(&id, &mut buf)?; // gix-object's trait, this crate's error inside
///     let header = objects.info(&id)?; // this crate's error
///     assert_eq!(header.map(|h| h.size), Some(blob.data.len() as u64));
///     Ok(blob.data.len())
/// }
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let repo = tempfile::tempdir()?;
///     std::process::Command::new("git").arg("init").arg("-q").arg(repo.path()).status()?;
///     // A file named like a loose object that is not one.
///     let hex = "0123456789012345678901234567890123456789";
///     let fan = repo.path().join(".git/objects/01");
///     std::fs::create_dir_all(&fan)?;
///     std::fs::write(fan.join(&hex[2..]), b"not zlib")?;
///     let objects = Objects::open(repo.path())?;
///
///     // Through gix-object's trait: gix's error, with this crate's inside.
///     let id: ObjectId = hex.parse()?;
///     let theirs = objects.try_find(&id, &mut Vec::new()).unwrap_err();
///     let ours = theirs.downcast_any_ref::<Error>().expect("the adapter's error, boxed");
///     assert!(matches!(ours, Error::LooseCorrupt { .. }) && ours.is_not_a_loose_object());
///
///     // Through `?`: `Error::Gix`, whose `original` is that same error.
///     let e = blob_len(&objects, hex).unwrap_err();
///     assert!(matches!(e, Error::Gix(_)));
///     assert!(matches!(e.original(), Error::LooseCorrupt { .. }) && e.is_not_a_loose_object());
///     assert!(matches!(blob_len(&objects, "not hex"), Err(Error::Gix(_))));
///     assert!(matches!(objects.lookup_name("abc"), Err(Error::BadName { .. }))); // too short
///     Ok(())
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The lookup itself failed (see [`odb_index::Error`]; it names the file).
    #[error(transparent)]
    Lookup(#[from] odb_index::Error),
    /// A `.pack` file is not a pack (gix-pack's check of its header; a file that cannot be opened is [`Error::Io`]).
    #[error("{path}: cannot open pack: {source}")]
    PackOpen {
        /// The `.pack` file.
        path: PathBuf,
        /// What gix-pack said.
        source: gix_error::Error,
    },
    /// A pack entry could not be decoded (corrupt data, a REF_DELTA whose base is not in the same pack, ...).
    #[error("{path}: cannot decode the entry at offset {offset}: {source}")]
    PackEntry {
        /// The `.pack` file.
        path: PathBuf,
        /// The entry's offset.
        offset: u64,
        /// What gix-pack said.
        source: gix_error::Error,
    },
    /// A pack index file (`.idx`) or reverse index (`.rev`) is malformed or disagrees with its pack.
    #[error("{path}: {reason}")]
    Index {
        /// The `.idx` or `.rev` file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file or directory could not be read (an objects directory, a `.rev` file).
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file named like a loose object cannot be opened as one: a directory, a dangling symbolic link, a FIFO,
    /// or not readable (git: `missing`, or dies on a directory).
    #[error("{path}: cannot open loose object: {source}")]
    LooseUnreadable {
        /// The file.
        path: PathBuf,
        /// Why it could not be opened.
        source: std::io::Error,
    },
    /// A loose object file is not a zlib stream of `<type> <size>\0<data>`.
    #[error("{path}: corrupt loose object: {reason}")]
    LooseCorrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An object name (hex digits, full or abbreviated) that names no object by git's rules: fewer than 4
    /// digits, more than the hash's length, or not hex (git's `cat-file`: `<name> missing`). See
    /// [`crate::Objects::lookup_name`].
    #[error("{name:?} is not an object name: {reason}")]
    BadName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An abbreviated object name that more than one object's id starts with (git: `error: short object ID <name>
    /// is ambiguous`, then the candidates; `cat-file`: `<name> ambiguous`).
    #[error(
        "short object ID {name} is ambiguous; the candidates are: {}",
        list(candidates)
    )]
    AmbiguousName {
        /// The name as given.
        name: String,
        /// Every object whose id starts with it, in id order.
        candidates: Vec<gix_hash::ObjectId>,
    },
    /// An error from a gix API (gix-object's `Find`/`FindExt` on [`crate::Objects`], gix-hash's parsing, ...),
    /// so that one error type serves a client of both.
    #[error(transparent)]
    Gix(#[from] gix_error::Error),
    /// A loose object file whose header names a type git does not know (`git hash-object --literally -t <type>`;
    /// git: `fatal: invalid object type`).
    #[error("{path}: loose object of unknown type {kind:?}")]
    LooseUnknownType {
        /// The file.
        path: PathBuf,
        /// The type its header names.
        kind: String,
    },
    /// An object whose file git moved [`MAX_MOVES`](crate::MAX_MOVES) times while it was read (each time the
    /// object was located again and its file was gone before the read): maintenance replacing packs in a
    /// tight loop. Reading it again later finds it.
    #[error(
        "{objects_dir}: object {id} moved {moves} times while it was read (git maintenance replaced its files); read it again"
    )]
    KeptMoving {
        /// The object.
        id: gix_hash::ObjectId,
        /// The repository's objects directory.
        objects_dir: PathBuf,
        /// How many times it was located again.
        moves: usize,
    },
    /// No git repository at or above the path ([`crate::Repository::discover`]; gix-discover's reason): it looked
    /// and found none. A failure while looking is [`Error::Discovery`] or [`Error::Io`].
    #[error("{path}: not a git repository: {source}")]
    NotARepository {
        /// The path discovery started from.
        path: PathBuf,
        /// What gix-discover said.
        source: gix_error::Error,
    },
    /// Looking for the repository at or above `path` failed (a system call of gix-discover's failed: `getcwd`,
    /// a `stat`, a `readlink`): there may be one. Never "there is none", which is [`Error::NotARepository`].
    #[error("{path}: cannot look for a git repository: {source}")]
    Discovery {
        /// The path discovery started from.
        path: PathBuf,
        /// What gix-discover said.
        source: gix_error::Error,
    },
    /// The refs of a repository could not be read (gix-ref's reason names the file).
    #[error("{path}: cannot read refs: {source}")]
    Refs {
        /// The git directory.
        path: PathBuf,
        /// What gix-ref said.
        source: gix_error::Error,
    },
    /// The repository keeps its refs in the reftable format, which this crate does not read: no name but a hex
    /// id is resolved (rather than answered wrongly).
    #[error(
        "{path}: refs in the reftable format are not read; only hex object ids can be resolved"
    )]
    Reftable {
        /// The `reftable` directory.
        path: PathBuf,
    },
    /// A `rev:./path` or `rev:../path` name git dies on (`fatal:`): outside a work tree (`work_tree` is `None`:
    /// a bare repository, a git directory), or a path that leaves the repository's top (`../` above it).
    #[error("{}", relative_message(path, work_tree.as_deref()))]
    RelativePath {
        /// The path as given (after the `:`), lossily UTF-8.
        path: String,
        /// The work tree the path is relative to, if there is one.
        work_tree: Option<PathBuf>,
    },
    /// A name in a form git resolves but [`crate::Refs::resolve`] does not (reflogs, the index).
    #[error("{name:?}: {what} are not resolved")]
    UnsupportedName {
        /// The name as given.
        name: String,
        /// The form, as the documentation names it.
        what: &'static str,
    },
}

/// git's message for [`Error::RelativePath`].
fn relative_message(path: &str, work_tree: Option<&std::path::Path>) -> String {
    match work_tree {
        None => "relative path syntax can't be used outside working tree".to_owned(),
        Some(w) => format!("'{path}' is outside repository at '{}'", w.display()),
    }
}

fn list(ids: &[gix_hash::ObjectId]) -> String {
    ids.iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<odb_index::HexError> for Error {
    /// An odb-index id that did not parse: [`odb_index::Error::InvalidId`] in [`Error::Lookup`].
    fn from(e: odb_index::HexError) -> Error {
        Error::Lookup(e.into())
    }
}

impl Error {
    /// This crate's own error that this one is: for an [`Error::Gix`] that carries one (an error of gix-object's
    /// traits on [`Objects`](crate::Objects), turned into this type by `?`), that error; otherwise `self`.
    pub fn original(&self) -> &Error {
        match self {
            Error::Gix(e) => e.downcast_any_ref::<Error>().unwrap_or(self),
            _ => self,
        }
    }

    /// Whether the file this error is about is gone (not found when it was opened, or a pack the store no longer
    /// lists): git moved the object and removed the file since the lookup. [`crate::Objects::place_again`]
    /// says where the object is now.
    pub fn is_gone(&self) -> bool {
        match self.original() {
            // (A dangling symbolic link is "not found" too: looked up again, it is found where it was, and its
            // second read fails the same way: a file that is not an object, as git has it.)
            Error::Io { source, .. } | Error::LooseUnreadable { source, .. } => {
                source.kind() == std::io::ErrorKind::NotFound
            }
            Error::Lookup(odb_index::Error::StalePack { .. }) => true,
            _ => false,
        }
    }

    /// Whether a system call failed in a way that may not last (docs/RELIABILITY.md, the fault policy): EINTR,
    /// EAGAIN, EMFILE, ENFILE, ENOMEM, EIO or EACCES/EPERM opening, reading or looking at a file. Never evidence
    /// that the object or its file is gone: [`crate::Objects::answer_at`] locates the object again and reads once
    /// more after one, then answers the error (never "absent").
    pub fn is_transient(&self) -> bool {
        match self.original() {
            Error::Io { source, .. }
            | Error::LooseUnreadable { source, .. }
            | Error::Lookup(odb_index::Error::Io { source, .. }) => transient(source),
            _ => false,
        }
    }

    /// Whether this is a copy of an object that cannot be read although its file is there: a pack entry that
    /// cannot be decoded ([`Error::PackEntry`]) or a `.pack` file that is not a pack ([`Error::PackOpen`]). git
    /// then reads another copy if the repository has one (`mark_bad_packed_object`), and so does
    /// [`crate::Objects::answer_at`].
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self.original(),
            Error::PackEntry { .. } | Error::PackOpen { .. }
        )
    }

    /// Whether this is a file named like a loose object that is not one ([`Error::LooseUnreadable`],
    /// [`Error::LooseCorrupt`]: empty, garbage, a directory, a dangling symbolic link). git answers such an
    /// object `missing` (with a warning on stderr); [`crate::Objects`] does too when its store was opened with
    /// [`odb_index::IncompleteMode::Miss`], and reports the file in [`odb_index::Store::problems`]. A file that
    /// could not be opened or looked at for a reason that may not last ([`Error::is_transient`]: EIO, EMFILE,
    /// ...) is not one: that is an error, never "absent".
    pub fn is_not_a_loose_object(&self) -> bool {
        match self.original() {
            Error::LooseUnreadable { source, .. } => !transient(source),
            Error::LooseCorrupt { .. } => true,
            _ => false,
        }
    }
}

/// The errors of a system call that may not last (see [`Error::is_transient`]). EIO, ENFILE and EMFILE have no
/// `ErrorKind` of their own: their numbers, the same on Linux, the BSDs and macOS.
fn transient(e: &std::io::Error) -> bool {
    odb_index::fault::is_transient(e)
}
