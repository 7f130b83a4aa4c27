//! Finding a repository's objects directory, its object format and its alternates.
//!
//! - [`discover`] accepts a work tree, a `.git` directory or file, a bare repository, a linked worktree or a
//!   bare objects directory, and returns the objects directory and hash kind ([`Repository`]).
//! - [`object_format`] reads `extensions.objectFormat` from a git directory's `config`.
//! - [`alternates`] follows `objects/info/alternates` the way git does (`odb.c`: `parse_alternates`,
//!   `odb_add_alternate_recursively`, `odb_is_source_usable`).
//!
//! Every file read here (`.git` files, `commondir`, `config`, `info/alternates`) is opened without blocking,
//! must be a regular file, and is read with a bound ([`crate::data::read_bounded`]): a FIFO, socket, device or
//! directory in its place is an [`Error::Io`] naming it (its source carries a [`crate::data::FileProblem`]),
//! never a hang, and a `config` that is `/dev/zero` or a huge file is an error, not all of memory.
//!
//! Not supported (deviations from git, by design of a lookup library): the environment variables
//! `GIT_DIR`, `GIT_OBJECT_DIRECTORY`, `GIT_ALTERNATE_OBJECT_DIRECTORIES` and `GIT_COMMON_DIR` are ignored;
//! discovery does not walk up to parent directories; config `include`/`includeIf` are not followed.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::data::read_bounded;
use crate::error::Error;
use crate::oid::HashKind;

/// The most bytes read from a `.git` file or a `commondir` file (git refuses `.git` files longer than
/// `4 * PATH_MAX`).
pub const MAX_PATH_FILE_LEN: u64 = 4 * 4096;
/// The most bytes read from a `config` file.
pub const MAX_CONFIG_LEN: u64 = 16 << 20;
/// The most bytes read from an `info/alternates` file.
pub const MAX_ALTERNATES_LEN: u64 = 16 << 20;

/// Where a repository keeps its objects, and how they are named.
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
/// [`Error::BadRepositoryFile`] naming the file when a `.git` file, `commondir` or `config` cannot be
/// understood; [`Error::Io`] for other I/O failures.
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
    discover_impl(path, None)
}

/// Like [`discover`], but the object format is `hash_kind`, whatever the repository's `config` says. Use it
/// for a bare objects directory whose format is known to the caller but not recorded beside it.
pub fn discover_with_hash_kind(path: &Path, hash_kind: HashKind) -> Result<Repository, Error> {
    discover_impl(path, Some(hash_kind))
}

fn not_a_repo(path: &Path, reason: impl Into<String>) -> Error {
    Error::NotARepository {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn canonical(path: &Path) -> Result<PathBuf, Error> {
    std::fs::canonicalize(path).map_err(|e| Error::io(path, e))
}

fn is_dir(p: &Path) -> bool {
    p.is_dir()
}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

/// Does `dir` look like a git directory (bare, `.git`, or a linked worktree's private git directory)?
fn looks_like_git_dir(dir: &Path) -> bool {
    // A `commondir` that is not a regular file still marks a linked worktree: reading it then says what it is.
    is_file(&dir.join("HEAD")) && (is_dir(&dir.join("objects")) || dir.join("commondir").exists())
}

/// Does `dir` look like an objects directory?
fn looks_like_objects_dir(dir: &Path) -> Result<bool, Error> {
    if is_dir(&dir.join("pack")) || is_dir(&dir.join("info")) {
        return Ok(true);
    }
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in rd {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        if name.len() == 2 && name.iter().all(u8::is_ascii_hexdigit) && entry.path().is_dir() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn discover_impl(path: &Path, hash_override: Option<HashKind>) -> Result<Repository, Error> {
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_a_repo(path, "no such file or directory"));
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let git_dir = if !md.is_dir() {
        // A `.git` file given directly (or a FIFO, socket or device: an error naming it).
        read_gitfile(path)?
    } else {
        let dot_git = path.join(".git");
        if is_dir(&dot_git) {
            if !looks_like_git_dir(&dot_git) {
                return Err(not_a_repo(
                    path,
                    format!("{} is not a git directory", dot_git.display()),
                ));
            }
            dot_git
        } else if std::fs::metadata(&dot_git).is_ok() {
            // A `.git` file (or a FIFO, socket or device in its place: an error naming it, never a hang).
            read_gitfile(&dot_git)?
        } else if looks_like_git_dir(path) {
            path.to_path_buf()
        } else if looks_like_objects_dir(path)? {
            let objects_dir = canonical(path)?;
            let parent_git_dir = objects_dir
                .parent()
                .filter(|p| is_file(&p.join("HEAD")) || is_file(&p.join("config")));
            let (hash_kind, git_dir) = match parent_git_dir {
                Some(gd) if is_dir(&gd.join("objects")) && gd.join("objects") == objects_dir => {
                    let kind = match hash_override {
                        Some(k) => k,
                        None => object_format(gd)?,
                    };
                    (kind, Some(gd.to_path_buf()))
                }
                _ => (hash_override.unwrap_or(HashKind::Sha1), None),
            };
            return Ok(Repository {
                objects_dir,
                hash_kind,
                git_dir,
            });
        } else {
            return Err(not_a_repo(
                path,
                "no .git, no HEAD with objects/, and not an objects directory (no pack/, info/ or xx/ subdirectory)",
            ));
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
    Ok(Repository {
        objects_dir: canonical(&objects)?,
        hash_kind,
        git_dir: Some(canonical(&common)?),
    })
}

/// Read a `.git` file (`gitdir: <path>`), returning the git directory it names (relative paths are relative to
/// the file's directory). git's `read_gitfile`: the file must start with `gitdir: `; trailing whitespace is
/// dropped.
fn read_gitfile(file: &Path) -> Result<PathBuf, Error> {
    let bad = |reason: String| Error::BadRepositoryFile {
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
    if !looks_like_git_dir(&dir) {
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
                return Err(Error::BadRepositoryFile {
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
                return Err(Error::BadRepositoryFile {
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
fn bytes_to_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn bytes_to_path(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// The object format recorded in `git_dir/config` (`[extensions] objectFormat = sha256`).
///
/// Section and key names are case-insensitive; values may be quoted; `;` and `#` start comments outside
/// quotes; a key may follow the section header on the same line; the last assignment wins, as in git. A
/// missing `config` or a missing key means SHA-1. An unknown value is [`Error::BadRepositoryFile`] naming the
/// config file; a `config` that is not a regular file (a FIFO, `/dev/zero`) or is longer than
/// [`MAX_CONFIG_LEN`] is [`Error::Io`] naming it.
///
/// Deviations from git: `core.repositoryFormatVersion` is not checked (git refuses `objectFormat` in a
/// version-0 repository; this reads it anyway), includes are not followed, and lines this parser cannot
/// understand are skipped rather than rejected.
pub fn object_format(git_dir: &Path) -> Result<HashKind, Error> {
    let path = git_dir.join("config");
    let data = match read_bounded(&path, MAX_CONFIG_LEN) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashKind::Sha1),
        Err(e) => return Err(Error::io(&path, e)),
    };
    match config_value(&data, "extensions", "objectformat") {
        None => Ok(HashKind::Sha1),
        Some(v) => {
            let s = String::from_utf8_lossy(&v);
            s.parse::<HashKind>().map_err(|e| Error::BadRepositoryFile {
                path: path.clone(),
                reason: format!("extensions.objectFormat: {e}"),
            })
        }
    }
}

/// The last value of `section.key` (no subsection) in git config text, or `None`. `section` and `key` must be
/// lower case. A key without `=` is a boolean `true`.
fn config_value(data: &[u8], section: &str, key: &str) -> Option<Vec<u8>> {
    let mut found = None;
    let mut in_section = false;
    let mut lines = data.split(|&b| b == b'\n');
    while let Some(line) = lines.next() {
        let mut rest = line.trim_ascii();
        if rest.first() == Some(&b'[') {
            let Some(close) = header_end(rest) else {
                // Malformed header: we cannot tell which section follows.
                in_section = false;
                continue;
            };
            in_section = header_matches(&rest[1..close], section);
            rest = rest[close + 1..].trim_ascii_start();
        }
        if rest.is_empty() || rest[0] == b'#' || rest[0] == b';' {
            continue;
        }
        if !in_section {
            continue;
        }
        let name_len = rest
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-'))
            .unwrap_or(rest.len());
        if name_len == 0 || !rest[..name_len].eq_ignore_ascii_case(key.as_bytes()) {
            continue;
        }
        let after = rest[name_len..].trim_ascii_start();
        if after.is_empty() || after[0] == b'#' || after[0] == b';' {
            found = Some(b"true".to_vec());
            continue;
        }
        if after[0] != b'=' {
            continue;
        }
        found = Some(parse_value(&after[1..], &mut lines));
    }
    found
}

/// Index of the `]` closing a section header starting at `line[0] == '['`, honouring a quoted subsection.
fn header_end(line: &[u8]) -> Option<usize> {
    let mut in_quote = false;
    let mut i = 1;
    while i < line.len() {
        match line[i] {
            b'\\' if in_quote => i += 1,
            b'"' => in_quote = !in_quote,
            b']' if !in_quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether header text (between `[` and `]`) names exactly `section` with no subsection.
fn header_matches(inner: &[u8], section: &str) -> bool {
    let inner = inner.trim_ascii();
    // `[section "sub"]` and the old `[section.sub]` both have a subsection: they do not match.
    inner.eq_ignore_ascii_case(section.as_bytes())
}

/// Parse a config value after `=`: strip surrounding whitespace and comments, unquote, unescape, and join
/// continuation lines (a trailing backslash).
fn parse_value<'a>(first: &'a [u8], lines: &mut impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut in_quote = false;
    // Whitespace seen outside quotes but not yet known to be internal (dropped if at the end).
    let mut pending_space = 0usize;
    let mut line = first;
    'lines: loop {
        let mut i = 0;
        while i < line.len() {
            let c = line[i];
            i += 1;
            match c {
                b'\r' if i == line.len() => {}
                b' ' | b'\t' if !in_quote => {
                    if !out.is_empty() {
                        pending_space += 1;
                    }
                }
                b'#' | b';' if !in_quote => break 'lines,
                b'"' => {
                    flush_space(&mut out, &mut pending_space);
                    in_quote = !in_quote;
                }
                b'\\' => {
                    if i >= line.len() || (line[i] == b'\r' && i + 1 == line.len()) {
                        // Continuation: the value goes on on the next line.
                        match lines.next() {
                            Some(next) => {
                                line = next;
                                continue 'lines;
                            }
                            None => break 'lines,
                        }
                    }
                    flush_space(&mut out, &mut pending_space);
                    let e = line[i];
                    i += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'b' => 8,
                        other => other,
                    });
                }
                other => {
                    flush_space(&mut out, &mut pending_space);
                    out.push(other);
                }
            }
        }
        break;
    }
    out
}

fn flush_space(out: &mut Vec<u8>, pending: &mut usize) {
    for _ in 0..*pending {
        out.push(b' ');
    }
    *pending = 0;
}

/// git's limit on alternate nesting: an alternate added at depth 5 (the sixth in a chain, counting the ones
/// listed by the repository itself as depth 0) has its own alternates ignored with an error.
pub const MAX_ALTERNATE_DEPTH: usize = 5;

/// The alternates of an objects directory, in git's search order, and what was wrong on the way.
#[derive(Debug, Default)]
pub struct Alternates {
    /// Alternate objects directories (canonicalized), in search order: depth-first, in file order, as git adds
    /// them. The objects directory that was asked about is not included.
    pub dirs: Vec<PathBuf>,
    /// Entries that were skipped. None of them is fatal (git prints an error and goes on).
    pub problems: Vec<AlternateProblem>,
}

/// An alternates entry that was not followed.
#[derive(Debug)]
#[non_exhaustive]
pub enum AlternateProblem {
    /// The entry names no existing directory (git: "object directory … does not exist" or "unable to
    /// normalize alternate object path").
    Missing {
        /// The `info/alternates` file that lists it.
        listed_in: PathBuf,
        /// The path as resolved (relative entries joined to the listing objects directory).
        path: PathBuf,
    },
    /// The entry leads back to the objects directory asked about or to one of the alternates on the chain that
    /// listed it (git skips it silently).
    Cycle {
        /// The `info/alternates` file that lists it.
        listed_in: PathBuf,
        /// The directory it resolves to (canonicalized).
        path: PathBuf,
    },
    /// The entry names a directory that is already an alternate through another chain (git skips it silently).
    Duplicate {
        /// The `info/alternates` file that lists it.
        listed_in: PathBuf,
        /// The directory it resolves to (canonicalized).
        path: PathBuf,
    },
    /// The alternates of an alternate at depth [`MAX_ALTERNATE_DEPTH`] were ignored (git: "ignoring alternate
    /// object stores, nesting too deep").
    TooDeep {
        /// The `info/alternates` file whose entries were ignored.
        listed_in: PathBuf,
        /// The depth of the objects directory holding that file (0 = listed by the repository itself).
        depth: usize,
    },
    /// An `info/alternates` file, or the path an entry names, exists but could not be read.
    Unreadable {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl fmt::Display for AlternateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlternateProblem::Missing { listed_in, path } => write!(
                f,
                "{}: alternate object directory {} does not exist",
                listed_in.display(),
                path.display()
            ),
            AlternateProblem::Cycle { listed_in, path } => write!(
                f,
                "{}: alternate {} leads back to an objects directory already on the chain (cycle), ignored",
                listed_in.display(),
                path.display()
            ),
            AlternateProblem::Duplicate { listed_in, path } => write!(
                f,
                "{}: alternate {} is already an alternate, ignored",
                listed_in.display(),
                path.display()
            ),
            AlternateProblem::TooDeep { listed_in, depth } => write!(
                f,
                "{}: ignoring alternate object stores, nesting too deep (alternate at depth {depth}, limit {})",
                listed_in.display(),
                MAX_ALTERNATE_DEPTH
            ),
            AlternateProblem::Unreadable { path, error } => {
                write!(f, "{}: {error}", path.display())
            }
        }
    }
}

/// Follow `objects_dir/info/alternates`, recursively, the way git does.
///
/// - Entries are separated by newlines; empty entries and entries starting with `#` are skipped. No whitespace
///   is trimmed (git does not trim either: `" /x"` is a relative path starting with a space).
/// - An entry starting with `"` is a C-style quoted path (`\n`, `\t`, `\"`, `\\`, `\ooo` octal, …); if the
///   quoting is broken, the entry is taken literally, as git does.
/// - Relative entries are relative to the (canonicalized) objects directory that lists them, at every depth.
/// - An alternate listed by `objects_dir` is at depth 0; the alternates of an alternate at depth `d` are at
///   `d + 1`. An alternate at depth [`MAX_ALTERNATE_DEPTH`] (5) that lists alternates has them ignored and a
///   [`AlternateProblem::TooDeep`] recorded: a chain reaches at most six alternates deep, as with git.
/// - Entries resolving to `objects_dir` itself or to a directory already found are skipped (compared after
///   canonicalization; git compares `realpath`s too), recorded as [`AlternateProblem::Cycle`] or
///   [`AlternateProblem::Duplicate`].
/// - An entry that names no directory is [`AlternateProblem::Missing`]; an `info/alternates` file that
///   exists but cannot be read (or is not a regular file, or is longer than [`MAX_ALTERNATES_LEN`]) is
///   [`AlternateProblem::Unreadable`]. Neither is fatal.
///
/// Deviations: git compares paths case-insensitively when `core.ignoreCase` is set; this compares
/// canonicalized paths exactly. `GIT_ALTERNATE_OBJECT_DIRECTORIES` is not read.
///
/// Fails only if `objects_dir` itself cannot be canonicalized ([`Error::Io`]).
pub fn alternates(objects_dir: &Path) -> Result<Alternates, Error> {
    let own = canonical(objects_dir)?;
    let mut out = Alternates::default();
    let mut chain = vec![own.clone()];
    let entries = read_alternates_file(&own, &mut out.problems);
    for entry in entries {
        add_alternate(&own, entry, 0, &mut chain, &mut out);
    }
    Ok(out)
}

/// Add the alternate `entry` (as listed in `listing_dir/info/alternates`) at `depth`, then its own alternates.
fn add_alternate(
    listing_dir: &Path,
    entry: PathBuf,
    depth: usize,
    chain: &mut Vec<PathBuf>,
    out: &mut Alternates,
) {
    let listed_in = listing_dir.join("info").join("alternates");
    let joined = if entry.is_absolute() {
        entry
    } else {
        listing_dir.join(entry)
    };
    let dir = match std::fs::canonicalize(&joined) {
        Ok(d) => d,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            out.problems.push(AlternateProblem::Missing {
                listed_in,
                path: joined,
            });
            return;
        }
        Err(e) => {
            out.problems.push(AlternateProblem::Unreadable {
                path: joined,
                error: e,
            });
            return;
        }
    };
    if !dir.is_dir() {
        out.problems.push(AlternateProblem::Missing {
            listed_in,
            path: joined,
        });
        return;
    }
    if chain.contains(&dir) {
        out.problems.push(AlternateProblem::Cycle {
            listed_in,
            path: dir,
        });
        return;
    }
    if out.dirs.contains(&dir) {
        out.problems.push(AlternateProblem::Duplicate {
            listed_in,
            path: dir,
        });
        return;
    }
    out.dirs.push(dir.clone());
    let entries = read_alternates_file(&dir, &mut out.problems);
    if entries.is_empty() {
        return;
    }
    if depth + 1 > MAX_ALTERNATE_DEPTH {
        out.problems.push(AlternateProblem::TooDeep {
            listed_in: dir.join("info").join("alternates"),
            depth,
        });
        return;
    }
    chain.push(dir.clone());
    for e in entries {
        add_alternate(&dir, e, depth + 1, chain, out);
    }
    chain.pop();
}

/// The entries of `objects_dir/info/alternates` (none if the file does not exist).
fn read_alternates_file(objects_dir: &Path, problems: &mut Vec<AlternateProblem>) -> Vec<PathBuf> {
    let file = objects_dir.join("info").join("alternates");
    match read_bounded(&file, MAX_ALTERNATES_LEN) {
        Ok(data) => parse_alternates(&data)
            .into_iter()
            .map(|b| bytes_to_path(&b))
            .collect(),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            Vec::new()
        }
        Err(e) => {
            problems.push(AlternateProblem::Unreadable {
                path: file,
                error: e,
            });
            Vec::new()
        }
    }
}

/// Split alternates file contents into entries, as git's `parse_alternates` does with `sep = '\n'`.
fn parse_alternates(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let line_end = |from: usize| {
        data[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |i| from + i)
    };
    while pos < data.len() {
        let (entry, mut end) = if data[pos] == b'#' {
            (Vec::new(), line_end(pos))
        } else if let Some((unquoted, end)) = (data[pos] == b'"')
            .then(|| unquote_c_style(data, pos))
            .flatten()
        {
            (unquoted, end)
        } else {
            let end = line_end(pos);
            (data[pos..end].to_vec(), end)
        };
        // git skips one byte after the entry (the separator, or whatever follows a closing quote).
        if end < data.len() {
            end += 1;
        }
        pos = end;
        if !entry.is_empty() {
            out.push(entry);
        }
    }
    out
}

/// git's `unquote_c_style`: `data[start]` is `"`; returns the unquoted bytes and the index just past the
/// closing quote, or `None` if the quoting is broken.
fn unquote_c_style(data: &[u8], start: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = start + 1;
    loop {
        let c = *data.get(i)?;
        i += 1;
        match c {
            b'"' => return Some((out, i)),
            b'\\' => {
                let e = *data.get(i)?;
                i += 1;
                let ch = match e {
                    b'a' => 7,
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 11,
                    b'\\' | b'"' => e,
                    b'0'..=b'3' => {
                        let d2 = *data.get(i)?;
                        let d3 = *data.get(i + 1)?;
                        if !(b'0'..=b'7').contains(&d2) || !(b'0'..=b'7').contains(&d3) {
                            return None;
                        }
                        i += 2;
                        ((e - b'0') << 6) | ((d2 - b'0') << 3) | (d3 - b'0')
                    }
                    _ => return None,
                };
                out.push(ch);
            }
            0 => return None,
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt_of(config: &str) -> Option<String> {
        config_value(config.as_bytes(), "extensions", "objectformat")
            .map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn object_format_variants() {
        let plain =
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n";
        assert_eq!(fmt_of(plain).as_deref(), Some("sha256"));
        assert_eq!(
            fmt_of("[Extensions]\n\tObjectFormat=sha256").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[EXTENSIONS]\nOBJECTFORMAT = \"sha256\" ; comment").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\n  objectFormat = sha256   # trailing\n").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions] objectformat = sha256").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\r\n\tobjectformat = sha256\r\n").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\n\tobjectformat = sha\\\n256\n").as_deref(),
            Some("sha256")
        );
        // Commented out.
        assert_eq!(
            fmt_of("[extensions]\n#\tobjectformat = sha256\n;objectformat=sha256"),
            None
        );
        // Same key in other sections, or with a subsection: not ours.
        assert_eq!(fmt_of("[core]\n\tobjectformat = sha256\n"), None);
        assert_eq!(
            fmt_of("[extensions \"x\"]\n\tobjectformat = sha256\n"),
            None
        );
        assert_eq!(fmt_of("[extensions.x]\n\tobjectformat = sha256\n"), None);
        assert_eq!(fmt_of("[extensionsx]\n\tobjectformat = sha256\n"), None);
        // A longer key that starts with ours.
        assert_eq!(fmt_of("[extensions]\n\tobjectformatx = sha256\n"), None);
        // Section switches back and forth; last assignment wins.
        let multi = "[extensions]\nobjectformat=sha1\n[core]\nobjectformat=x\n[extensions]\nobjectformat=sha256\n";
        assert_eq!(fmt_of(multi).as_deref(), Some("sha256"));
        // Quoted with a '#' inside the quotes.
        assert_eq!(
            fmt_of("[extensions]\nobjectformat = \"a#b\"").as_deref(),
            Some("a#b")
        );
        // No value: boolean true.
        assert_eq!(
            fmt_of("[extensions]\nobjectformat\n").as_deref(),
            Some("true")
        );
        // Garbage does not panic.
        assert_eq!(
            fmt_of("[extensions\nobjectformat = sha256\n\\\n\"\n[\"]"),
            None
        );
    }

    #[test]
    fn object_format_file() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(object_format(tmp.path()).unwrap(), HashKind::Sha1);
        std::fs::write(
            tmp.path().join("config"),
            "[extensions]\n\tobjectFormat = SHA256\n",
        )
        .unwrap();
        assert_eq!(object_format(tmp.path()).unwrap(), HashKind::Sha256);
        std::fs::write(
            tmp.path().join("config"),
            "[extensions]\n\tobjectFormat = md5\n",
        )
        .unwrap();
        match object_format(tmp.path()) {
            Err(Error::BadRepositoryFile { path, reason }) => {
                assert_eq!(path, tmp.path().join("config"));
                assert!(reason.contains("md5"), "{reason}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    /// The `FileProblem` inside an `Error::Io` naming `path`.
    #[cfg(unix)]
    fn io_problem(e: &Error, path: &Path) -> crate::data::FileProblem {
        match e {
            Error::Io { path: p, source } if p == path => crate::data::file_problem(source)
                .cloned()
                .unwrap_or_else(|| panic!("no file problem in {e}")),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// A FIFO, a device or a directory where `config`, `commondir`, a `.git` file or `info/alternates` should be
    /// is an error naming it (or, for alternates, a reported problem), never a hang; reads are bounded.
    #[cfg(unix)]
    #[test]
    fn special_files_are_errors_never_hangs() {
        use crate::data::{FileKind, FileProblem};
        let fifo_problem = FileProblem::NotRegular {
            kind: FileKind::Fifo,
        };
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join("repo.git");
        std::fs::create_dir_all(git.join("objects/info")).unwrap();
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        // config: a FIFO, /dev/zero (through a symbolic link), a directory, a file past the bound.
        let config = git.join("config");
        mkfifo(&config);
        let e = discover(&git).unwrap_err();
        assert_eq!(io_problem(&e, &config), fifo_problem);
        assert!(e.to_string().contains("FIFO"), "{e}");
        std::fs::remove_file(&config).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        assert_eq!(
            io_problem(&object_format(&git).unwrap_err(), &config),
            FileProblem::NotRegular {
                kind: FileKind::CharDevice
            }
        );
        std::fs::remove_file(&config).unwrap();
        std::fs::create_dir(&config).unwrap();
        assert_eq!(
            io_problem(&object_format(&git).unwrap_err(), &config),
            FileProblem::NotRegular {
                kind: FileKind::Directory
            }
        );
        std::fs::remove_dir(&config).unwrap();
        let f = std::fs::File::create(&config).unwrap();
        f.set_len(MAX_CONFIG_LEN + 1).unwrap();
        drop(f);
        assert_eq!(
            io_problem(&object_format(&git).unwrap_err(), &config),
            FileProblem::TooLarge {
                len: MAX_CONFIG_LEN + 1,
                limit: MAX_CONFIG_LEN
            }
        );
        std::fs::write(&config, "[core]\n").unwrap();
        assert_eq!(discover(&git).unwrap().hash_kind, HashKind::Sha1);
        // info/alternates: reported, not fatal.
        let alternates_file = git.join("objects/info/alternates");
        mkfifo(&alternates_file);
        let alts = alternates(&git.join("objects")).unwrap();
        assert!(alts.dirs.is_empty());
        match &alts.problems[..] {
            [AlternateProblem::Unreadable { path, error }] => {
                assert_eq!(
                    path,
                    &git.join("objects")
                        .canonicalize()
                        .unwrap()
                        .join("info/alternates")
                );
                assert_eq!(crate::data::file_problem(error), Some(&fifo_problem));
            }
            other => panic!("{other:?}"),
        }
        // A .git file that is a FIFO, then one that is a file naming the repository.
        let work = tmp.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let dot_git = work.join(".git");
        mkfifo(&dot_git);
        assert_eq!(
            io_problem(&discover(&work).unwrap_err(), &dot_git),
            fifo_problem
        );
        assert_eq!(
            io_problem(&discover(&dot_git).unwrap_err(), &dot_git),
            fifo_problem
        );
        std::fs::remove_file(&dot_git).unwrap();
        std::fs::write(&dot_git, format!("gitdir: {}\n", git.display())).unwrap();
        assert_eq!(
            discover(&work).unwrap().objects_dir,
            git.join("objects").canonicalize().unwrap()
        );
        // A .git file longer than git accepts.
        std::fs::write(&dot_git, vec![b'x'; MAX_PATH_FILE_LEN as usize + 1]).unwrap();
        assert!(matches!(
            io_problem(&discover(&work).unwrap_err(), &dot_git),
            FileProblem::TooLarge { .. }
        ));
        // A linked worktree's commondir that is a FIFO.
        let wt = git.join("worktrees/w");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join("HEAD"),
            "0000000000000000000000000000000000000000\n",
        )
        .unwrap();
        let commondir = wt.join("commondir");
        mkfifo(&commondir);
        assert_eq!(
            io_problem(&discover(&wt).unwrap_err(), &commondir),
            fifo_problem
        );
        std::fs::remove_file(&commondir).unwrap();
        std::fs::write(&commondir, "../..\n").unwrap();
        assert_eq!(
            discover(&wt).unwrap().objects_dir,
            git.join("objects").canonicalize().unwrap()
        );
    }

    #[test]
    fn alternates_parsing() {
        let p = |s: &str| -> Vec<String> {
            parse_alternates(s.as_bytes())
                .into_iter()
                .map(|b| String::from_utf8(b).unwrap())
                .collect()
        };
        assert_eq!(p("/a\n\n# c\n/b\n"), ["/a", "/b"]);
        assert_eq!(p("/a"), ["/a"]);
        assert_eq!(p(" /a\n"), [" /a"]);
        assert_eq!(
            p("\"/with\\nnewline\\040and space\"\n/b"),
            ["/with\nnewline and space", "/b"]
        );
        assert_eq!(p("\"/q\\\"x\"\n"), ["/q\"x"]);
        // Broken quoting: literal.
        assert_eq!(p("\"/open\n/b\n"), ["\"/open", "/b"]);
        assert_eq!(p("\"/bad\\q\"\n"), ["\"/bad\\q\""]);
        // Like git, one byte after a closing quote is swallowed.
        assert_eq!(p("\"/a\"X/b\n"), ["/a", "/b"]);
        assert_eq!(p("#only a comment"), Vec::<String>::new());
        assert_eq!(p(""), Vec::<String>::new());
    }
}
