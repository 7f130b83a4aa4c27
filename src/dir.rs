//! Directories asked about by descriptor: an open directory ([`OpenDir`]), the [`Stamp`] of a file (what `stat`
//! says of it, to tell when it changed), a `stat` relative to an open directory else by path ([`stat_at`]), and a
//! directory read entry by entry with its stamp ([`Entries`]). Discovery (`repo/`) and the listing of a store's
//! pack directories (`store/`) both ask their questions through here.

use std::path::Path;
#[cfg(not(unix))]
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::fault::Call;

/// An open directory: on Linux an `O_PATH` descriptor, to `stat` and open its files relative to it (one path
/// component walked, not every one again); elsewhere never made.
#[cfg(unix)]
pub(crate) type OpenDir = rustix::fd::OwnedFd;
/// An open directory: on Linux an `O_PATH` descriptor; elsewhere never made.
#[cfg(not(unix))]
pub(crate) type OpenDir = std::convert::Infallible;

/// Identity of a file or directory as `stat` reports it: a change in any field means "changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    pub(crate) mtime: Option<SystemTime>,
    pub(crate) size: u64,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
}

impl Stamp {
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        // `None` is "no stamp", never "no file" to a caller: a freshness check compares it with the listing's
        // stamp, and a stamp it cannot take (a failed `stat`, transient or not) differs from a listed one, so the
        // directory is listed again (`docs/FRESHNESS.md`, F1).
        crate::fault::check(Call::Stat).ok()?;
        let md = std::fs::metadata(path).ok()?;
        Some(Stamp::from_metadata(&md))
    }

    /// The stamp of a `stat` taken with rustix (`fstatat` relative to a directory): the same fields as
    /// [`from_metadata`](Self::from_metadata) gives for the same file.
    #[cfg(unix)]
    #[allow(
        clippy::unnecessary_cast,
        clippy::useless_conversion,
        reason = "the field types differ between targets"
    )]
    pub(crate) fn from_stat(st: &rustix::fs::Stat) -> Stamp {
        let (sec, nsec) = (st.st_mtime as i64, st.st_mtime_nsec as u32);
        let mtime = if sec >= 0 {
            SystemTime::UNIX_EPOCH.checked_add(Duration::new(sec as u64, nsec))
        } else {
            SystemTime::UNIX_EPOCH
                .checked_sub(Duration::from_secs(sec.unsigned_abs()))
                .and_then(|t| t.checked_add(Duration::new(0, nsec)))
        };
        Stamp {
            mtime,
            size: st.st_size as u64,
            ino: st.st_ino as u64,
            dev: st.st_dev as u64,
        }
    }

    /// The stamp of a covered pack's `.idx` known only from its directory entry (its inode number as listed,
    /// `d_ino`) and from the multi-pack-index that lists it (`covered_by`: the first 8 bytes of that file's
    /// checksum): never equal to a `stat`'s (no device is `u64::MAX`), equal to another listing's of the same
    /// inode under the same multi-pack-index. A file renamed over it (git's only way of replacing a file) has
    /// another inode; a file deleted and then made again under its name may get the same inode number (ext4 and
    /// tmpfs hand a freed number to the next file), but with other contents it is listed by another
    /// multi-pack-index (its offsets differ), so its stamp differs all the same.
    pub(crate) fn listed(ino: u64, covered_by: u64) -> Stamp {
        Stamp {
            mtime: None,
            size: covered_by,
            ino,
            dev: u64::MAX,
        }
    }

    /// The stamp of a pack's `.idx` whose `stat` failed at listing with an error that is no evidence of its
    /// absence (EIO, EMFILE, ...): its inode number as the directory lists it. Never equal to a `stat`'s nor to a
    /// [`listed`](Self::listed) one (no device is `u64::MAX - 1`), so the next listing, whose `stat` succeeds,
    /// gives the pack a new id and loads it again.
    pub(crate) fn unknown(ino: u64) -> Stamp {
        Stamp {
            mtime: None,
            size: 0,
            ino,
            dev: u64::MAX - 1,
        }
    }

    /// Whether this is an [`unknown`](Self::unknown) stamp.
    pub(crate) fn is_unknown(&self) -> bool {
        self.dev == u64::MAX - 1
    }

    pub(crate) fn from_metadata(md: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (ino, dev) = {
            use std::os::unix::fs::MetadataExt as _;
            (md.ino(), md.dev())
        };
        #[cfg(not(unix))]
        let (ino, dev) = (0, 0);
        Stamp {
            mtime: md.modified().ok(),
            size: md.len(),
            ino,
            dev,
        }
    }
}

/// What a `stat` of a directory entry found (symbolic links followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    /// A FIFO, socket or device.
    Other,
}

/// A directory entry's `stat` (symbolic links followed): its kind and its stamp.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntryStat {
    pub(crate) kind: Kind,
    pub(crate) stamp: Stamp,
}

/// `stat` of `rel` relative to the open directory `fd` (symbolic links followed).
#[cfg(unix)]
fn stat_fd(fd: impl rustix::fd::AsFd, rel: impl rustix::path::Arg) -> std::io::Result<EntryStat> {
    crate::fault::check_rustix(Call::Stat)?;
    let st = rustix::fs::statat(fd, rel, rustix::fs::AtFlags::empty())?;
    let kind = match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::Directory => Kind::Dir,
        rustix::fs::FileType::RegularFile => Kind::File,
        _ => Kind::Other,
    };
    Ok(EntryStat {
        kind,
        stamp: Stamp::from_stat(&st),
    })
}

/// `stat` of `path` (symbolic links followed).
fn stat_path(path: &Path) -> std::io::Result<EntryStat> {
    crate::fault::check(Call::Stat)?;
    let md = std::fs::metadata(path)?;
    let kind = if md.is_dir() {
        Kind::Dir
    } else if md.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    Ok(EntryStat {
        kind,
        stamp: Stamp::from_metadata(&md),
    })
}

/// `stat` of `parent/rel` (symbolic links followed): relative to `parent` opened (`at`: one path component
/// walked, not the whole path again), else by path.
pub(crate) fn stat_at(
    at: Option<&OpenDir>,
    parent: &Path,
    rel: &str,
) -> std::io::Result<EntryStat> {
    #[cfg(unix)]
    if let Some(fd) = at {
        return stat_fd(fd, rel);
    }
    #[cfg(not(unix))]
    let _ = at;
    stat_path(&parent.join(rel))
}

/// The names of the entries of directory `path` that the directory itself says are regular files (their type,
/// `d_type`, read with the names: no `stat` each). Symbolic links and entries of unknown type (a file system
/// that does not fill `d_type`) are left out: a caller `stat`s those by path, as it would without this. Not
/// Unix: none.
pub(crate) fn regular_entries(path: &Path) -> std::io::Result<std::collections::HashSet<String>> {
    let mut names = std::collections::HashSet::new();
    #[cfg(unix)]
    {
        use rustix::fs::{FileType, Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        crate::fault::check_rustix(Call::List)?;
        let mut dir = rustix::fs::Dir::new(rustix::fs::open(path, flags, Mode::empty())?)?;
        while let Some(e) = dir.read() {
            let e = e?;
            if e.file_type() == FileType::RegularFile
                && let Ok(name) = e.file_name().to_str()
            {
                names.insert(name.to_owned());
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(names)
}

/// A directory entry as the directory lists it ([`Entries::next_entry`]).
pub(crate) struct ListedEntry {
    /// Its name, whatever its bytes (git reads a pack whose name is not UTF-8).
    pub(crate) name: std::ffi::OsString,
    /// Its type, as listed, is a regular file.
    pub(crate) regular: bool,
    /// Its inode number as listed.
    pub(crate) ino: u64,
}

/// An open directory read entry by entry: its [`Stamp`] (taken from the open descriptor before any entry is
/// read, so a change made after it shows in the directory's next `stat`), its entries' names, and their `stat`s.
/// On Unix the entries are `stat`ed relative to the open directory (`fstatat`) and the directory is `stat`ed
/// once, through its descriptor; elsewhere by path.
pub(crate) struct Entries {
    pub(crate) stamp: Stamp,
    #[cfg(unix)]
    dir: rustix::fs::Dir,
    #[cfg(not(unix))]
    entries: std::fs::ReadDir,
    #[cfg(not(unix))]
    path: PathBuf,
}

impl Entries {
    /// Open `path`; `parent`, when given, is its parent directory opened (it is then opened relative to it).
    pub(crate) fn open(path: &Path, parent: Option<&OpenDir>) -> std::io::Result<Entries> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            // The open of a directory to read its entries is the listing's call (`Call::List`).
            crate::fault::check_rustix(Call::List)?;
            let fd = match (parent, path.file_name()) {
                (Some(at), Some(name)) => rustix::fs::openat(at, name, flags, Mode::empty())?,
                _ => rustix::fs::open(path, flags, Mode::empty())?,
            };
            let file = std::fs::File::from(fd);
            // The same `stat` as `Stamp::of(path)` (the refresh check compares the two), on the descriptor.
            crate::fault::check(Call::Stat)?;
            let stamp = Stamp::from_metadata(&file.metadata()?);
            let dir = rustix::fs::Dir::new(std::os::fd::OwnedFd::from(file))?;
            Ok(Entries { stamp, dir })
        }
        #[cfg(not(unix))]
        {
            let _ = parent;
            crate::fault::check(Call::Stat)?;
            let stamp = Stamp::from_metadata(&std::fs::metadata(path)?);
            crate::fault::check(Call::List)?;
            Ok(Entries {
                stamp,
                entries: std::fs::read_dir(path)?,
                path: path.to_path_buf(),
            })
        }
    }

    /// The next entry (`.` and `..` included on Unix; any name, UTF-8 or not, as git reads every `*.idx`), with
    /// what the directory itself says of it, read with its name (no `stat`): whether its type (`d_type`) is a
    /// regular file (a symbolic link, an entry of unknown type on a file system that does not fill `d_type`, and
    /// every entry off Unix are not), and its inode number (`d_ino`).
    pub(crate) fn next_entry(&mut self) -> Option<std::io::Result<Option<ListedEntry>>> {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let e = self.dir.read()?;
            Some(e.map_err(Into::into).map(|e| {
                let name = std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_owned();
                Some(ListedEntry {
                    regular: e.file_type() == rustix::fs::FileType::RegularFile,
                    ino: e.ino(),
                    name,
                })
            }))
        }
        #[cfg(not(unix))]
        {
            let e = self.entries.next()?;
            Some(e.map(|e| {
                Some(ListedEntry {
                    name: e.file_name(),
                    regular: false,
                    ino: 0,
                })
            }))
        }
    }

    /// `stat` of entry `name` (symbolic links followed).
    pub(crate) fn stat(&self, name: &std::ffi::OsStr) -> std::io::Result<EntryStat> {
        #[cfg(unix)]
        return stat_fd(self.dir.fd()?, name);
        #[cfg(not(unix))]
        stat_path(&self.path.join(name))
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// The stamps of entries taken relative to the open directory are the ones a `stat` of the path gives
    /// (the refresh check compares a pack directory's path `stat` with the listing's), before 1970 too.
    #[cfg(unix)]
    #[test]
    fn stat_relative_to_the_directory_stamps_like_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("pack-1.idx");
        std::fs::write(&file, b"abc").unwrap();
        let f = std::fs::File::options().write(true).open(&file).unwrap();
        let opened = rustix::fs::open(
            tmp.path(),
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        for t in [
            SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789),
            SystemTime::UNIX_EPOCH - Duration::new(5, 250_000_000),
        ] {
            f.set_modified(t).unwrap();
            let dir = Entries::open(tmp.path(), None).unwrap();
            let st = dir.stat("pack-1.idx".as_ref()).unwrap();
            assert_eq!(st.kind, Kind::File);
            assert_eq!(Some(st.stamp), Stamp::of(&file));
            assert_eq!(st.stamp.mtime, Some(t));
            assert_eq!(Some(dir.stamp), Stamp::of(tmp.path()));
            let at = stat_at(Some(&opened), Path::new("/nonexistent"), "pack-1.idx").unwrap();
            assert_eq!(
                Some(at.stamp),
                Stamp::of(&file),
                "relative to the descriptor, not the path"
            );
            let by_path = stat_at(None, tmp.path(), "pack-1.idx").unwrap();
            assert_eq!(Some(by_path.stamp), Stamp::of(&file));
        }
        assert_eq!(stat_at(None, tmp.path(), ".").unwrap().kind, Kind::Dir);
    }
}
