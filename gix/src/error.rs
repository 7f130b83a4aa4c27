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
    /// A file or directory could not be read (a loose object, an objects directory, a `.rev` file).
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
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
