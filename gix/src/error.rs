use std::path::PathBuf;

/// Why an object could not be read. Every variant names the file it is about.
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
    /// A loose object file whose header names a type git does not know (`git hash-object --literally -t <type>`;
    /// git: `fatal: invalid object type`).
    #[error("{path}: loose object of unknown type {kind:?}")]
    LooseUnknownType {
        /// The file.
        path: PathBuf,
        /// The type its header names.
        kind: String,
    },
}

impl Error {
    /// Whether the file this error is about is gone (not found when it was opened, or a pack the store no longer
    /// lists): git moved the object and removed the file since the lookup. [`crate::Objects::place_again`]
    /// says where the object is now.
    pub fn is_gone(&self) -> bool {
        match self {
            // (A dangling symbolic link is "not found" too: looked up again, it is found where it was, and its
            // second read fails the same way: a file that is not an object, as git has it.)
            Error::Io { source, .. } | Error::LooseUnreadable { source, .. } => {
                source.kind() == std::io::ErrorKind::NotFound
            }
            Error::Lookup(odb_index::Error::StalePack { .. }) => true,
            _ => false,
        }
    }

    /// Whether this is a file named like a loose object that is not one ([`Error::LooseUnreadable`],
    /// [`Error::LooseCorrupt`]: empty, garbage, a directory, a dangling symbolic link). git answers such an
    /// object `missing` (with a warning on stderr); [`crate::Objects`] does too when its store was opened with
    /// [`odb_index::IncompleteMode::Miss`], and reports the file in [`odb_index::Store::problems`].
    pub fn is_not_a_loose_object(&self) -> bool {
        matches!(
            self,
            Error::LooseUnreadable { .. } | Error::LooseCorrupt { .. }
        )
    }
}
