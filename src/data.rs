//! The bytes of an index file (a read-only memory map, or a heap copy), and opening files safely.
//!
//! Every file the crate reads (index files, `config`, `info/alternates`, `commondir`, `.git` files, the tail of
//! a `.pack`) is opened with [`open_regular`]: it is checked to be a regular file before it is opened, opened
//! without blocking (`O_NONBLOCK`: a FIFO renamed into place between the check and the open cannot make the
//! open wait for a writer), and checked again on the open descriptor. A FIFO, socket, device or directory is an
//! error carrying a [`FileProblem`], never a hang. Files of the configuration kind are read with a bound
//! ([`read_bounded`]).
//!
//! ```
//! use odb_index::data::{FileProblem, file_problem, read_bounded};
//!
//! let dir = tempfile::tempdir()?;
//! let config = dir.path().join("config");
//! std::fs::write(&config, "[core]\n")?;
//! assert_eq!(read_bounded(&config, 1024)?, b"[core]\n");
//! // Too long for the bound: an error, not all of memory.
//! let e = read_bounded(&config, 4).unwrap_err();
//! assert!(matches!(file_problem(&e), Some(FileProblem::TooLarge { .. })));
//! // A directory where a file should be.
//! let e = read_bounded(dir.path(), 1024).unwrap_err();
//! assert!(matches!(file_problem(&e), Some(FileProblem::NotRegular { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::fault::{self, Call};

// The load mode is the store's option (`Options::load`); its one public path is the crate root.
pub(crate) use crate::load_mode::LoadMode;

/// What a file's type is, when it is not a regular file.
///
/// ```
/// use odb_index::data::{FileKind, FileProblem, file_problem, read_bounded};
///
/// let dir = tempfile::tempdir()?;
/// let e = read_bounded(dir.path(), 1024).unwrap_err();
/// assert!(matches!(file_problem(&e), Some(FileProblem::NotRegular { kind: FileKind::Directory })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A directory.
    Directory,
    /// A named pipe (FIFO).
    Fifo,
    /// A Unix domain socket.
    Socket,
    /// A character device (`/dev/zero`, a terminal).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else the system reports.
    Other,
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "not a regular file",
        })
    }
}

/// Why a file that should be read cannot be: carried inside the [`io::Error`] that [`open_regular`],
/// [`read_bounded`], [`Data::open`] and the store's pack checks return (see [`file_problem`]).
///
/// ```
/// use odb_index::data::{FileProblem, file_problem, read_bounded};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("big");
/// std::fs::write(&path, vec![0u8; 100])?;
/// let e = read_bounded(&path, 10).unwrap_err();
/// assert!(matches!(file_problem(&e), Some(FileProblem::TooLarge { len: 100, limit: 10 })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileProblem {
    /// The path names something other than a regular file (after following symbolic links).
    NotRegular {
        /// What it is.
        kind: FileKind,
    },
    /// The file is longer than the bound for files of its kind.
    TooLarge {
        /// Its length.
        len: u64,
        /// The bound.
        limit: u64,
    },
    /// Under [`LoadMode::Read`]: the file is sparse (allocates far less than its length), so reading it would
    /// take as much memory as it claims to hold.
    Sparse {
        /// Its length.
        len: u64,
        /// The bytes it allocates on disk.
        allocated: u64,
    },
    /// The file is shorter than the bytes asked for at its end (a `.pack` file shorter than its trailing checksum).
    TooShort {
        /// Its length.
        len: u64,
        /// The bytes asked for.
        need: u64,
    },
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileProblem::NotRegular { kind } => write!(f, "not a regular file: {kind}"),
            FileProblem::TooLarge { len, limit } => {
                write!(f, "file is too large ({len} bytes, at most {limit} read)")
            }
            FileProblem::Sparse { len, allocated } => write!(
                f,
                "sparse file ({len} bytes long, {allocated} allocated): not read into memory"
            ),
            FileProblem::TooShort { len, need } => {
                write!(f, "file is too short ({len} bytes, at least {need} needed)")
            }
        }
    }
}

impl std::error::Error for FileProblem {}

impl From<FileProblem> for io::Error {
    fn from(p: FileProblem) -> io::Error {
        let kind = match p {
            FileProblem::NotRegular {
                kind: FileKind::Directory,
            } => io::ErrorKind::IsADirectory,
            FileProblem::NotRegular { .. } => io::ErrorKind::InvalidInput,
            FileProblem::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            FileProblem::Sparse { .. } | FileProblem::TooShort { .. } => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, p)
    }
}

/// The [`FileProblem`] an I/O error from this module carries, if it carries one.
///
/// ```
/// use odb_index::data::{FileProblem, file_problem, read_bounded};
///
/// let dir = tempfile::tempdir()?;
/// let e = read_bounded(&dir.path().join("absent"), 10).unwrap_err();
/// assert_eq!(file_problem(&e), None); // a plain I/O error: not found
/// std::fs::write(dir.path().join("big"), [0u8; 100])?;
/// let e = read_bounded(&dir.path().join("big"), 10).unwrap_err();
/// assert!(matches!(file_problem(&e), Some(FileProblem::TooLarge { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn file_problem(e: &io::Error) -> Option<&FileProblem> {
    e.get_ref()?.downcast_ref::<FileProblem>()
}

fn kind_of(ft: std::fs::FileType) -> FileKind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if ft.is_fifo() {
            return FileKind::Fifo;
        }
        if ft.is_socket() {
            return FileKind::Socket;
        }
        if ft.is_char_device() {
            return FileKind::CharDevice;
        }
        if ft.is_block_device() {
            return FileKind::BlockDevice;
        }
    }
    if ft.is_dir() {
        FileKind::Directory
    } else {
        FileKind::Other
    }
}

/// `Ok` if `md` is a regular file's; otherwise an error carrying [`FileProblem::NotRegular`] saying what it is.
pub(crate) fn check_regular(md: &std::fs::Metadata) -> io::Result<()> {
    if md.is_file() {
        Ok(())
    } else {
        Err(FileProblem::NotRegular {
            kind: kind_of(md.file_type()),
        }
        .into())
    }
}

/// Open `path` for reading if it is a regular file (symbolic links followed), without ever blocking.
///
/// The path is `stat`ed first, so that nothing that is not a regular file is opened at all (opening some
/// devices has effects); it is then opened with `O_NONBLOCK | O_NOCTTY | O_CLOEXEC` (a FIFO renamed into place
/// after the `stat` opens at once instead of waiting for a writer), and the open descriptor is checked again.
/// Returns the file and its metadata (from the descriptor). A file that is not regular is an error of kind
/// [`io::ErrorKind::InvalidInput`] (or [`io::ErrorKind::IsADirectory`]) carrying [`FileProblem::NotRegular`].
///
/// With [`read_bounded`], the one guarded read of this crate, public for front ends that read a repository's
/// other files (refs, packs) under the same rules.
///
/// ```
/// use odb_index::data::{FileKind, FileProblem, file_problem, open_regular};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("HEAD");
/// std::fs::write(&path, "ref: refs/heads/main\n")?;
/// let (_file, md) = open_regular(&path)?;
/// assert_eq!(md.len(), 21);
/// let err = open_regular(dir.path()).unwrap_err(); // a directory is never opened
/// assert!(matches!(file_problem(&err), Some(FileProblem::NotRegular { kind: FileKind::Directory })));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn open_regular(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
    fault::check(Call::Stat)?;
    check_regular(&std::fs::metadata(path)?)?;
    open_seen_regular(path)
}

/// [`open_regular`] of a `path` its directory's listing has just said is a regular file (its entry's type,
/// `d_type`, read with the directory: [`crate::dir::regular_entries`]): that stands for the `stat` of the path,
/// which is not made again. Like that `stat`, it comes before the open; a FIFO or device renamed into place
/// after either is caught the same way (opened without blocking, the descriptor checked, never mapped).
pub(crate) fn open_seen_regular(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        fault::check_rustix(Call::Open)?;
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        File::from(fd)
    };
    #[cfg(not(unix))]
    let file = {
        fault::check(Call::Open)?;
        File::open(path)?
    };
    fault::check(Call::Stat)?;
    let md = file.metadata()?;
    check_regular(&md)?;
    Ok((file, md))
}

/// Read `file` (of length `len` when it was checked) into memory, reading at most `limit` bytes; more is
/// [`FileProblem::TooLarge`] (also when the file grew past the bound after it was checked).
fn read_all(file: &File, len: u64, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    if len > limit {
        return Err(FileProblem::TooLarge { len, limit }.into());
    }
    // `len <= limit`, and the limit is what the caller accepts to hold in memory.
    let mut v = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    fault::check(Call::Read)?;
    let read = file.take(limit.saturating_add(1)).read_to_end(&mut v)?;
    if read as u64 > limit {
        return Err(FileProblem::TooLarge {
            len: read as u64,
            limit,
        }
        .into());
    }
    Ok(v)
}

/// Read the `len` bytes `file` held when its metadata was read: one `read` call for a regular file, without
/// the probe past the end that `read_to_end` makes (a layer of a 1 000-layer chain costs one system call less).
/// What is read is the file as its metadata (its stamp) described it: a file that grew since is read up to
/// `len`, one that shrank is read short; either way the format's own checks (its trailing checksum, its
/// lengths) judge the bytes, as they would if the change had come a moment earlier.
fn read_len(file: &File, len: u64) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let cap = usize::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file length overflows usize"))?;
    let mut v = Vec::with_capacity(cap);
    // `Take` answers the probe after the last byte itself (no system call).
    fault::check(Call::Read)?;
    file.take(len).read_to_end(&mut v)?;
    Ok(v)
}

/// Read the regular file `path` whole, if it holds at most `limit` bytes (for `config`, `info/alternates`,
/// `commondir` and `.git` files). Opened with [`open_regular`]; a longer file is an error carrying
/// [`FileProblem::TooLarge`] (a file that grows while it is read is cut at `limit + 1` bytes, never read on).
///
/// ```
/// use odb_index::data::{FileProblem, file_problem, read_bounded};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("packed-refs");
/// std::fs::write(&path, "# pack-refs with: peeled\n")?;
/// assert_eq!(read_bounded(&path, 1 << 20)?, b"# pack-refs with: peeled\n");
/// let err = read_bounded(&path, 4).unwrap_err();
/// assert!(matches!(file_problem(&err), Some(FileProblem::TooLarge { len: 25, limit: 4 })));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (file, md) = open_regular(path)?;
    read_all(&file, md.len(), limit)
}

/// The length of the regular file `path` and its last `n` bytes, read with one positioned read (for a
/// `.pack`'s trailing checksum: the pack itself is never read or hashed). A file shorter than `n` bytes is an
/// error carrying [`FileProblem::TooShort`].
#[cfg(test)]
pub(crate) fn read_tail(path: &Path, n: usize) -> io::Result<(u64, Vec<u8>)> {
    read_ends(path, 0, n).map(|(len, _, tail)| (len, tail))
}

/// The length of the regular file `path`, its first `head` bytes and its last `tail` bytes, with two positioned
/// reads (for a `.pack`'s header and trailing checksum). A file shorter than `head` or `tail` bytes is an error
/// carrying [`FileProblem::TooShort`].
pub(crate) fn read_ends(
    path: &Path,
    head: usize,
    tail: usize,
) -> io::Result<(u64, Vec<u8>, Vec<u8>)> {
    let (file, md) = open_regular(path)?;
    let len = md.len();
    let need = head.max(tail) as u64;
    if len < need {
        return Err(FileProblem::TooShort { len, need }.into());
    }
    let mut first = vec![0u8; head];
    read_exact_at(&file, &mut first, 0)?;
    let mut last = vec![0u8; tail];
    read_exact_at(&file, &mut last, len - tail as u64)?;
    Ok((len, first, last))
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    fault::check(Call::Read)?;
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    fault::check(Call::Read)?;
    use std::io::{Read as _, Seek as _};
    file.seek(io::SeekFrom::Start(at))?;
    file.read_exact(buf)
}

/// Under [`LoadMode::Read`], a file longer than this that allocates less than half its length is sparse.
const SPARSE_MIN_LEN: u64 = 1 << 20;

fn check_not_sparse(md: &std::fs::Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let len = md.len();
        let allocated = md.blocks().saturating_mul(512);
        // Index files are mostly hashes, which no filesystem compresses to half; tiny files may live inline.
        if len > SPARSE_MIN_LEN && allocated < len / 2 {
            return Err(FileProblem::Sparse { len, allocated }.into());
        }
    }
    #[cfg(not(unix))]
    let _ = md;
    Ok(())
}

/// The bytes of one index file.
///
/// ```
/// use odb_index::LoadMode;
/// use odb_index::data::Data;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("file");
/// std::fs::write(&path, b"bytes")?;
/// for mode in [LoadMode::Mmap, LoadMode::Read] {
///     assert_eq!(&Data::open(&path, mode)?[..], b"bytes");
/// }
/// assert_eq!(&Data::from(b"in memory".to_vec())[..], b"in memory");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum Data {
    /// A read-only mapping.
    Mmap(memmap2::Mmap),
    /// A heap copy.
    Vec(Vec<u8>),
}

impl Data {
    /// Bring `path` into memory as `mode` says. The file descriptor is closed before this returns.
    ///
    /// The file is opened with [`open_regular`] (never blocks; a FIFO, socket, device or directory is an error
    /// carrying [`FileProblem::NotRegular`]); under [`LoadMode::Read`] a sparse file is refused with
    /// [`FileProblem::Sparse`] before anything is read.
    pub fn open(path: &Path, mode: LoadMode) -> io::Result<Data> {
        Self::open_with_metadata(path, mode).map(|(data, _)| data)
    }

    /// [`Data::open`], with the metadata of the descriptor it read (what a `stat` of `path` said of the file it
    /// opened, without a second `stat`).
    pub(crate) fn open_with_metadata(
        path: &Path,
        mode: LoadMode,
    ) -> io::Result<(Data, std::fs::Metadata)> {
        let (file, md) = open_regular(path)?;
        Self::bring_in(&file, &md, mode).map(|data| (data, md))
    }

    /// [`Data::open_with_metadata`] of a `path` its directory's listing has just said is a regular file (opened
    /// with [`open_seen_regular`]: no `stat` of the path first).
    pub(crate) fn open_seen_with_metadata(
        path: &Path,
        mode: LoadMode,
    ) -> io::Result<(Data, std::fs::Metadata)> {
        let (file, md) = open_seen_regular(path)?;
        Self::bring_in(&file, &md, mode).map(|data| (data, md))
    }

    /// The contents of `file` (open, regular, with metadata `md`) as `mode` says.
    fn bring_in(file: &File, md: &std::fs::Metadata, mode: LoadMode) -> io::Result<Data> {
        let len = md.len();
        match mode {
            LoadMode::Mmap => {
                if len == 0 {
                    // Zero-length mappings are not portable; an empty file is simply empty.
                    return Ok(Data::Vec(Vec::new()));
                }
                // The length comes from the descriptor's metadata already read: `Mmap::map` would `fstat` again.
                let len = usize::try_from(len).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        "memory map length overflows usize",
                    )
                })?;
                fault::check(Call::Map)?;
                // SAFETY: the mapping is read-only and private to this process, of a regular file (checked on
                // the descriptor above). Its contents can still change if another process truncates or rewrites
                // the file in place; git never does that (it writes a temporary file and renames it over the old
                // name, which leaves this mapping on the old inode), and `LoadMode::Read` exists for setups where
                // that discipline does not hold. Every read of the mapping is bounds-checked against its length
                // as it was when mapped.
                let map = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
                Ok(Data::Mmap(map))
            }
            LoadMode::Read => {
                check_not_sparse(md)?;
                Ok(Data::Vec(read_len(file, len)?))
            }
        }
    }
}

impl std::ops::Deref for Data {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Data::Mmap(m) => m,
            Data::Vec(v) => v,
        }
    }
}

impl From<Vec<u8>> for Data {
    fn from(v: Vec<u8>) -> Self {
        Data::Vec(v)
    }
}

#[cfg(all(test, unix))]
pub(crate) mod tests;
