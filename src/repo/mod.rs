// Over 600 lines: 277 of them are tests of discovery on each repository shape git knows.
//! Finding a repository's objects directory, its object format and its alternates.
//!
//! - [`discover`] accepts a work tree, a `.git` directory or file, a bare repository, a linked worktree or a
//!   bare objects directory, and returns the objects directory and hash kind ([`Repository`]).
//! - [`object_format`] reads `extensions.objectFormat` from a git directory's `config`.
//! - [`alternates`] follows `objects/info/alternates` the way git does (`odb.c`: `parse_alternates`,
//!   `odb_add_alternate_recursively`, `odb_is_source_usable`).
//!
//! ```
//! # let repo = tempfile::tempdir()?;
//! # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
//! # git(&["init", "-q"])?;
//! use odb_index::{HashKind, repo};
//!
//! let found = repo::discover(repo.path())?;
//! assert_eq!(found.hash_kind, HashKind::Sha1);
//! assert_eq!(repo::object_format(&repo.path().join(".git"))?, HashKind::Sha1);
//! let alternates = repo::alternates(&found.objects_dir)?;
//! assert!(alternates.dirs.is_empty() && alternates.problems.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every file read here (`.git` files, `commondir`, `config`, `info/alternates`) is opened without blocking,
//! must be a regular file, and is read with a bound ([`crate::data::read_bounded`]): a FIFO, socket, device or
//! directory in its place is an [`Error::Io`] naming it (its source carries a [`crate::data::FileProblem`]),
//! never a hang, and a `config` that is `/dev/zero` or a huge file is an error, not all of memory.
//!
//! Not supported (deviations from git, by design of a lookup library): the environment variables
//! `GIT_DIR`, `GIT_OBJECT_DIRECTORY`, `GIT_ALTERNATE_OBJECT_DIRECTORIES` and `GIT_COMMON_DIR` are ignored;
//! discovery does not walk up to parent directories; config `include`/`includeIf` are not followed.

use std::path::{Path, PathBuf};

use crate::data::read_bounded;
use crate::dir::{Kind, OpenDir};
use crate::error::Error;
use crate::fault::Call;
use crate::oid::HashKind;

/// The most bytes read from a `.git` file or a `commondir` file (git refuses `.git` files longer than
/// `4 * PATH_MAX`).
pub(crate) const MAX_PATH_FILE_LEN: u64 = 4 * 4096;
/// The most bytes read from a `config` file.
pub(crate) const MAX_CONFIG_LEN: u64 = 16 << 20;
/// The most bytes read from an `info/alternates` file.
pub(crate) const MAX_ALTERNATES_LEN: u64 = 16 << 20;

mod alternates;
mod config;

pub(crate) use alternates::alternates_of_canonical_env;
pub use alternates::{AlternateProblem, Alternates, alternates, alternates_with_env};
pub use config::object_format;

/// Where a repository keeps its objects, and how they are named.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{HashKind, repo};
///
/// let found = repo::discover(repo.path())?; // a work tree, a .git directory or an objects directory
/// assert_eq!(found.objects_dir, repo.path().canonicalize()?.join(".git/objects"));
/// assert_eq!(found.hash_kind, HashKind::Sha1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// The objects directory (canonicalized: absolute, symbolic links resolved).
    pub objects_dir: PathBuf,
    /// The object format: from `extensions.objectFormat`, or SHA-1 when absent or unknowable.
    pub hash_kind: HashKind,
    /// The git directory that holds `config` and `objects` (canonicalized). For a linked worktree this is the
    /// common directory of the main repository, not the worktree's private `.git/worktrees/<name>`. `None` when
    /// an objects directory was given that does not sit inside a git directory.
    pub git_dir: Option<PathBuf>,
}

/// Find the objects directory and object format of the repository at `path`.
///
/// `path` may be
/// - a work tree: it has a `.git` directory, or a `.git` *file* containing `gitdir: <path>` (linked worktrees,
///   submodules; a relative path is relative to the directory holding the file);
/// - a git directory (`.git`, or a bare repository): it has a `HEAD` file and an `objects` directory, or a
///   `commondir` file (a linked worktree's private git directory; objects live in the common directory);
/// - an objects directory: it has a `pack/` or `info/` subdirectory, or a two-hex-digit fan-out subdirectory.
///   The hash kind then comes from `../config` when the parent is a git directory, else SHA-1 (use
///   [`discover_with_hash_kind`] to say otherwise).
///
/// Errors: [`Error::NotARepository`] naming `path` when it does not exist or is none of the above;
/// [`Error::BadGitFile`] or [`Error::BadCommonDir`] naming the file when a `.git` file or `commondir` cannot be
/// understood; [`Error::UnknownObjectFormat`] naming `config` for an unknown `extensions.objectFormat`;
/// [`Error::Io`] for other I/O failures.
///
/// ```
/// use std::process::Command;
/// use odb_index::HashKind;
///
/// let tmp = tempfile::tempdir()?;
/// let status = Command::new("git")
///     .args(["init", "-q", "--object-format=sha256", "work"])
///     .current_dir(tmp.path())
///     .env("GIT_CONFIG_GLOBAL", "/dev/null")
///     .env("GIT_CONFIG_NOSYSTEM", "1")
///     .status()?;
/// assert!(status.success());
///
/// let work = tmp.path().join("work");
/// let repo = odb_index::repo::discover(&work)?;
/// assert_eq!(repo.hash_kind, HashKind::Sha256);
/// assert_eq!(repo.objects_dir, work.join(".git/objects").canonicalize()?);
/// // The objects directory alone is enough, too.
/// assert_eq!(odb_index::repo::discover(&repo.objects_dir)?, repo);
///
/// let err = odb_index::repo::discover(tmp.path()).unwrap_err();
/// assert!(matches!(err, odb_index::Error::NotARepository { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn discover(path: &Path) -> Result<Repository, Error> {
    discover_impl(path, None, true).map(|(repo, _)| repo)
}

/// Like [`discover`], but the object format is `hash_kind`, whatever the repository's `config` says. Use it
/// for a bare objects directory whose format is known to the caller but not recorded beside it.
///
/// ```
/// use odb_index::{HashKind, repo};
///
/// // A bare objects directory with nothing beside it to say its format.
/// let objects = tempfile::tempdir()?;
/// std::fs::create_dir(objects.path().join("pack"))?;
/// let found = repo::discover_with_hash_kind(objects.path(), HashKind::Sha256)?;
/// assert_eq!(found.hash_kind, HashKind::Sha256);
/// assert_eq!(found.git_dir, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn discover_with_hash_kind(path: &Path, hash_kind: HashKind) -> Result<Repository, Error> {
    discover_impl(path, Some(hash_kind), true).map(|(repo, _)| repo)
}

/// [`discover`] (or, with `hash_kind`, [`discover_with_hash_kind`]) for a caller that needs no
/// [`Repository::git_dir`] (the store): when the format is given, an objects directory's parent is not looked at
/// (its `git_dir` is then `None`). With it, the objects directory opened (an `O_PATH` descriptor) when `path`
/// named it as its canonical path, for the caller to ask about its files relative to it.
pub(crate) fn discover_objects(
    path: &Path,
    hash_kind: Option<HashKind>,
) -> Result<(Repository, Option<OpenDir>), Error> {
    discover_impl(path, hash_kind, false)
}

fn not_a_repo(path: &Path, reason: impl Into<String>) -> Error {
    Error::NotARepository {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// `path` absolute, with every symbolic link resolved (`realpath`).
pub(super) fn canonical(path: &Path) -> Result<PathBuf, Error> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if already_canonical(path) {
        return Ok(path.to_path_buf());
    }
    crate::fault::check(Call::Resolve)
        .and_then(|()| std::fs::canonicalize(path))
        .map_err(|e| Error::io(path, e))
}

/// Whether `path` is its own `realpath`, decided with one `openat2` and one `close` whatever its depth
/// (`realpath` makes one `readlink` per component: 5 cost twice this at `/tmp/a/b/c/objects`): absolute, spelled
/// without `.`, `..`, doubled or trailing slashes, and opened (`O_PATH`: nothing is opened for real, a FIFO or
/// device included) with `RESOLVE_NO_SYMLINKS`, so the kernel followed no symbolic link on any component. False
/// whenever that cannot be shown (a symbolic link, a missing file, a kernel before 5.6 or a seccomp filter
/// without `openat2`): the caller then asks `realpath`, which gives the answer or the error.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn already_canonical(path: &Path) -> bool {
    open_if_canonical(path, rustix::fs::OFlags::empty()).is_some()
}

/// Whether `path` is absolute and spelled without `.`, `..`, doubled or trailing slashes (`/` itself is): the
/// spelling its `realpath` has. Read off the bytes (nothing allocated).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn spelled_canonically(path: &Path) -> bool {
    match path.as_os_str().as_encoded_bytes() {
        b"/" => true,
        [b'/', rest @ ..] => rest
            .split(|&b| b == b'/')
            .all(|c| !matches!(c, b"" | b"." | b"..")),
        _ => false,
    }
}

/// `path` opened `O_PATH` (with `extra` flags) if it is spelled as its own `realpath` and the kernel follows no
/// symbolic link to reach it: see [`already_canonical`].
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_if_canonical(path: &Path, extra: rustix::fs::OFlags) -> Option<rustix::fd::OwnedFd> {
    if !spelled_canonically(path) {
        return None;
    }
    // `None` sends the caller to the by-path resolution (`canonicalize`): a failed open here is no answer.
    crate::fault::check_rustix(Call::Open).ok()?;
    rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC | extra,
        rustix::fs::Mode::empty(),
        rustix::fs::ResolveFlags::NO_SYMLINKS,
    )
    .ok()
}

fn is_dir(p: &Path) -> bool {
    crate::fault::check(Call::Stat).is_ok() && p.is_dir()
}

fn is_file(p: &Path) -> bool {
    crate::fault::check(Call::Stat).is_ok() && p.is_file()
}

/// A directory discovery asks about: by path, or (`fd`) through a descriptor it opened, when the path it was
/// given is the directory's canonical one ([`Dir::open`]). Its entries are `stat`ed (symbolic links followed,
/// as `Path::is_file` does) relative to the descriptor: one path component walked instead of every one.
struct Dir<'a> {
    path: &'a Path,
    fd: Option<OpenDir>,
    /// The first `stat` of an entry that failed with anything but "not found" (EIO, EMFILE, EACCES, ...): no
    /// evidence that the entry is missing, so no decision may rest on it ([`Dir::check`]).
    failed: std::cell::RefCell<Option<Error>>,
}

/// What a `stat` of a directory entry found (symbolic links followed).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Missing,
    Dir,
    File,
    /// A FIFO, socket or device. (A `stat` that fails is `Missing`, as `Path::exists` has it.)
    Other,
}

impl<'a> Dir<'a> {
    /// `path`, asked about by path.
    fn by_path(path: &'a Path) -> Dir<'a> {
        Dir {
            path,
            fd: None,
            failed: Default::default(),
        }
    }

    /// The first `stat` of an entry that failed with anything but "not found" since the last check, as an
    /// error naming the entry: discovery's answers rest on what each entry is, and a failed `stat` does not
    /// say it (the fault policy, docs/RELIABILITY.md).
    fn check(&self) -> Result<(), Error> {
        match self.failed.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `path` opened, if it is a directory spelled as its canonical path (one `openat2`, which also answers
    /// "a directory?" and "canonical?" for it), else asked about by path.
    fn open(path: &'a Path) -> Dir<'a> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let fd = open_if_canonical(path, rustix::fs::OFlags::DIRECTORY);
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let fd = None;
        Dir {
            path,
            fd,
            failed: Default::default(),
        }
    }

    /// Entry `name` (a relative path: `..` names the parent, the same directory as the canonical path's
    /// parent).
    fn entry(&self, name: &str) -> Entry {
        match crate::dir::stat_at(self.fd.as_ref(), self.path, name) {
            Ok(st) => match st.kind {
                Kind::Dir => Entry::Dir,
                Kind::File => Entry::File,
                Kind::Other => Entry::Other,
            },
            Err(e) => {
                if !crate::error::is_gone(&e) {
                    let mut failed = self.failed.borrow_mut();
                    failed.get_or_insert_with(|| Error::io(self.path.join(name), e));
                }
                Entry::Missing
            }
        }
    }

    fn is_file(&self, name: &str) -> bool {
        self.entry(name) == Entry::File
    }

    fn is_dir(&self, name: &str) -> bool {
        self.entry(name) == Entry::Dir
    }
}

/// Does `dir` look like a git directory (bare, `.git`, or a linked worktree's private git directory)?
fn looks_like_git_dir(dir: &Dir<'_>) -> bool {
    // A `commondir` that is not a regular file still marks a linked worktree: reading it then says what it is.
    dir.is_file("HEAD") && (dir.is_dir("objects") || dir.entry("commondir") != Entry::Missing)
}

/// Does `dir` look like an objects directory?
fn looks_like_objects_dir(dir: &Dir<'_>) -> Result<bool, Error> {
    if dir.is_dir("pack") || dir.is_dir("info") {
        return Ok(true);
    }
    let dir = dir.path;
    let rd = crate::fault::check(Call::List)
        .and_then(|()| std::fs::read_dir(dir))
        .map_err(|e| Error::io(dir, e))?;
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        if name.len() == 2 && name.iter().all(u8::is_ascii_hexdigit) && is_dir(&entry.path()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// [`discover`]; `want_git_dir` false: see [`discover_objects`].
fn discover_impl(
    path: &Path,
    hash_override: Option<HashKind>,
    want_git_dir: bool,
) -> Result<(Repository, Option<OpenDir>), Error> {
    // The common case first: a directory named by its canonical path, opened once and asked about relative to
    // its descriptor (the `openat2` stands for this `stat` and for `canonical`'s).
    let top = Dir::open(path);
    let a_dir = top.fd.is_some()
        || match crate::fault::check(Call::Stat).and_then(|()| std::fs::metadata(path)) {
            Ok(md) => md.is_dir(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_a_repo(path, "no such file or directory"));
            }
            Err(e) => return Err(Error::io(path, e)),
        };
    let git_dir = if !a_dir {
        // A `.git` file given directly (or a FIFO, socket or device: an error naming it).
        read_gitfile(path)?
    } else {
        // One `stat` of `.git` answers both questions (a directory? anything at all?).
        let dot_git_entry = top.entry(".git");
        top.check()?;
        if dot_git_entry == Entry::Dir {
            let dot_git = path.join(".git");
            let dir = Dir::by_path(&dot_git);
            let git_like = looks_like_git_dir(&dir);
            dir.check()?;
            if !git_like {
                return Err(not_a_repo(
                    path,
                    format!("{} is not a git directory", dot_git.display()),
                ));
            }
            dot_git
        } else if dot_git_entry != Entry::Missing {
            // A `.git` file (or a FIFO, socket or device in its place: an error naming it, never a hang).
            read_gitfile(&path.join(".git"))?
        } else {
            // A `stat` that failed decides nothing (`Dir::check`): neither "a git directory" nor "an objects
            // directory" nor "not a repository".
            let git_like = looks_like_git_dir(&top);
            top.check()?;
            if !git_like {
                let objects_like = looks_like_objects_dir(&top)?;
                top.check()?;
                if objects_like {
                    return objects_dir_repo(path, top, hash_override, want_git_dir);
                }
                return Err(not_a_repo(
                    path,
                    "no .git, no HEAD with objects/, and not an objects directory (no pack/, info/ or xx/ subdirectory)",
                ));
            }
            path.to_path_buf()
        }
    };
    let common = common_dir(&git_dir)?;
    let objects = common.join("objects");
    if !is_dir(&objects) {
        return Err(not_a_repo(
            path,
            format!("{} is not a directory", objects.display()),
        ));
    }
    let hash_kind = match hash_override {
        Some(k) => k,
        None => object_format(&common)?,
    };
    Ok((
        Repository {
            objects_dir: canonical(&objects)?,
            hash_kind,
            git_dir: Some(canonical(&common)?),
        },
        None,
    ))
}

/// [`discover_impl`] for `path` (opened as `top`), an objects directory: the repository it is the objects of.
fn objects_dir_repo(
    path: &Path,
    top: Dir<'_>,
    hash_override: Option<HashKind>,
    want_git_dir: bool,
) -> Result<(Repository, Option<OpenDir>), Error> {
    let objects_dir = match top.fd {
        Some(_) => path.to_path_buf(),
        None => canonical(path)?,
    };
    // Its parent is its git directory if it is named `objects` (then it is its parent's `objects/`, a
    // directory: this one) and the parent has a `HEAD` or a `config`. Asked in that order, the cheap
    // questions first; not asked at all when the format is given and the git directory not wanted.
    let named_objects = objects_dir.file_name() == Some("objects".as_ref());
    let parent_git_dir = objects_dir
        .parent()
        .filter(|_| named_objects && (want_git_dir || hash_override.is_none()))
        .filter(|p| match top.fd {
            Some(_) => top.is_file("../HEAD") || top.is_file("../config"),
            None => is_file(&p.join("HEAD")) || is_file(&p.join("config")),
        });
    // (Whether the parent is the git directory decides the object format: not on a failed `stat`.)
    top.check()?;
    let (hash_kind, git_dir) = match parent_git_dir {
        Some(gd) => {
            let kind = match hash_override {
                Some(k) => k,
                None => object_format(gd)?,
            };
            (kind, Some(gd.to_path_buf()))
        }
        None => (hash_override.unwrap_or(HashKind::Sha1), None),
    };
    Ok((
        Repository {
            objects_dir,
            hash_kind,
            git_dir,
        },
        top.fd,
    ))
}

/// Read a `.git` file (`gitdir: <path>`), returning the git directory it names (relative paths are relative to
/// the file's directory). git's `read_gitfile`: the file must start with `gitdir: `; trailing whitespace is
/// dropped.
fn read_gitfile(file: &Path) -> Result<PathBuf, Error> {
    let bad = |reason: String| Error::BadGitFile {
        path: file.to_path_buf(),
        reason,
    };
    let data = read_bounded(file, MAX_PATH_FILE_LEN).map_err(|e| Error::io(file, e))?;
    let Some(rest) = data.strip_prefix(b"gitdir: ") else {
        return Err(bad(
            "not a .git file: expected it to start with \"gitdir: \"".into(),
        ));
    };
    let target = rest.trim_ascii_end();
    if target.is_empty() {
        return Err(bad("\"gitdir:\" names no path".into()));
    }
    let target = bytes_to_path(target);
    let base = file.parent().unwrap_or(Path::new("."));
    let dir = if target.is_absolute() {
        target
    } else {
        base.join(target)
    };
    if !is_dir(&dir) {
        return Err(bad(format!("gitdir {} is not a directory", dir.display())));
    }
    if !looks_like_git_dir(&Dir::by_path(&dir)) {
        return Err(bad(format!(
            "gitdir {} is not a git directory",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The common directory of `git_dir`: what its `commondir` file names (relative to `git_dir`), else `git_dir`.
fn common_dir(git_dir: &Path) -> Result<PathBuf, Error> {
    let file = git_dir.join("commondir");
    match read_bounded(&file, MAX_PATH_FILE_LEN) {
        Ok(data) => {
            let target = data.trim_ascii_end();
            if target.is_empty() {
                return Err(Error::BadCommonDir {
                    path: file,
                    reason: "empty commondir file".into(),
                });
            }
            let target = bytes_to_path(target);
            let dir = if target.is_absolute() {
                target
            } else {
                git_dir.join(target)
            };
            if !is_dir(&dir) {
                return Err(Error::BadCommonDir {
                    path: file,
                    reason: format!("common directory {} does not exist", dir.display()),
                });
            }
            Ok(dir)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(git_dir.to_path_buf()),
        Err(e) => Err(Error::io(file, e)),
    }
}

#[cfg(unix)]
pub(super) fn bytes_to_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
pub(super) fn bytes_to_path(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
