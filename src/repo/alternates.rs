//! Following `objects/info/alternates` the way git does.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use super::{bytes_to_path, canonical};
use crate::error::Error;

/// git's limit on alternate nesting: an alternate added at depth 5 (the sixth in a chain, counting the ones
/// listed by the repository itself as depth 0) has its own alternates ignored with an error.
pub(crate) const MAX_ALTERNATE_DEPTH: usize = 5;

/// The alternates of an objects directory, in git's search order, and what was wrong on the way.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::repo;
///
/// let other = tempfile::tempdir()?;
/// std::fs::create_dir(other.path().join("objects"))?;
/// let objects = repo.path().join(".git/objects");
/// std::fs::write(objects.join("info/alternates"), format!("{}\n", other.path().join("objects").display()))?;
/// let alternates = repo::alternates(&objects)?;
/// assert_eq!(alternates.dirs.len(), 1);
/// assert!(alternates.problems.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Alternates {
    /// Alternate objects directories (canonicalized), in search order: depth-first, in file order, as git adds
    /// them. The objects directory that was asked about is not included.
    pub dirs: Vec<PathBuf>,
    /// Entries that were skipped. None of them is fatal (git prints an error and goes on).
    pub problems: Vec<AlternateProblem>,
}

/// An alternates entry that was not followed.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::repo::{self, AlternateProblem};
///
/// let objects = repo.path().join(".git/objects");
/// std::fs::write(objects.join("info/alternates"), "/no/such/directory\n")?;
/// let alternates = repo::alternates(&objects)?;
/// assert!(alternates.dirs.is_empty());
/// assert!(matches!(&alternates.problems[..], [AlternateProblem::Missing { .. }]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// The alternates of an alternate at depth `MAX_ALTERNATE_DEPTH` were ignored (git: "ignoring alternate
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
///   `d + 1`. An alternate at depth `MAX_ALTERNATE_DEPTH` (5) that lists alternates has them ignored and a
///   [`AlternateProblem::TooDeep`] recorded: a chain reaches at most six alternates deep, as with git.
/// - Entries resolving to `objects_dir` itself or to a directory already found are skipped (compared after
///   canonicalization; git compares `realpath`s too), recorded as [`AlternateProblem::Cycle`] or
///   [`AlternateProblem::Duplicate`].
/// - An entry that names no directory is [`AlternateProblem::Missing`]; an `info/alternates` file that
///   exists but cannot be read (or is not a regular file, or is longer than
///   16 MiB) is [`AlternateProblem::Unreadable`]. Neither is fatal.
///
/// - Before those, the entries of the environment variable `GIT_ALTERNATE_OBJECT_DIRECTORIES` (as git's
///   `prepare_alt_odb` does): separated by `:` (`;` on Windows), each possibly C-quoted like an alternates
///   line, relative ones taken relative to the current directory; they are at depth 0 and their own alternates
///   are followed. Problems with them name `ENV_ALTERNATES` as the file that lists them.
///
/// Deviations: git compares paths case-insensitively when `core.ignoreCase` is set; this compares
/// canonicalized paths exactly.
///
/// Fails only if `objects_dir` itself cannot be canonicalized ([`Error::Io`]).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// use odb_index::repo;
///
/// let other = tempfile::tempdir()?;
/// std::fs::create_dir(other.path().join("objects"))?;
/// let objects = repo.path().join(".git/objects");
/// std::fs::write(objects.join("info/alternates"), format!("{}\n", other.path().join("objects").display()))?;
/// assert_eq!(repo::alternates(&objects)?.dirs, [other.path().canonicalize()?.join("objects")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn alternates(objects_dir: &Path) -> Result<Alternates, Error> {
    alternates_with_env(objects_dir, std::env::var_os(ENV_ALTERNATES).as_deref())
}

/// The environment variable git reads extra alternates from.
pub(crate) const ENV_ALTERNATES: &str = "GIT_ALTERNATE_OBJECT_DIRECTORIES";

/// [`alternates`] with `env` as the value of `GIT_ALTERNATE_OBJECT_DIRECTORIES` (`None`: unset).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// use odb_index::repo;
///
/// let other = tempfile::tempdir()?;
/// std::fs::create_dir(other.path().join("objects"))?;
/// let env = other.path().join("objects").into_os_string();
/// let alternates = repo::alternates_with_env(&repo.path().join(".git/objects"), Some(&env))?;
/// assert_eq!(alternates.dirs, [other.path().canonicalize()?.join("objects")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn alternates_with_env(objects_dir: &Path, env: Option<&OsStr>) -> Result<Alternates, Error> {
    Ok(alternates_of_canonical(
        &canonical(objects_dir)?,
        env,
        false,
    ))
}

/// [`alternates`] of an objects directory already canonicalized (the store's, from discovery), without
/// resolving its path again (a `readlink` per component). `file_absent`: the caller's `stat` of
/// `info/alternates`, taken just before, found nothing there (not found, or `info` not a directory), so the
/// file is not looked for a second time (the caller keeps that `stat` as its stamp: a file created since
/// changes it).
pub(crate) fn alternates_of_canonical_env(own: &Path, file_absent: bool) -> Alternates {
    alternates_of_canonical(
        own,
        std::env::var_os(ENV_ALTERNATES).as_deref(),
        file_absent,
    )
}

fn alternates_of_canonical(own: &Path, env: Option<&OsStr>, file_absent: bool) -> Alternates {
    if env.is_none() && file_absent {
        // Nothing lists an alternate (the common case): nothing to build.
        return Alternates::default();
    }
    let own = own.to_path_buf();
    let mut out = Alternates::default();
    let mut chain = vec![own.clone()];
    if let Some(env) = env {
        let sep = if cfg!(windows) { b';' } else { b':' };
        let cwd = crate::fault::check(crate::fault::Call::Resolve)
            .and_then(|()| std::env::current_dir())
            .unwrap_or_default();
        let listed_in = PathBuf::from(ENV_ALTERNATES);
        for entry in parse_entries(env.as_encoded_bytes(), sep) {
            let entry = cwd.join(bytes_to_path(&entry));
            add_alternate(&own, listed_in.clone(), entry, 0, &mut chain, &mut out);
        }
    }
    let entries = if file_absent {
        Vec::new()
    } else {
        read_alternates_file(&own, &mut out.problems)
    };
    let listed_in = own.join("info").join("alternates");
    for entry in entries {
        add_alternate(&own, listed_in.clone(), entry, 0, &mut chain, &mut out);
    }
    out
}

/// Add the alternate `entry` (as listed in `listed_in`; relative to `listing_dir`) at `depth`, then its own
/// alternates.
fn add_alternate(
    listing_dir: &Path,
    listed_in: PathBuf,
    entry: PathBuf,
    depth: usize,
    chain: &mut Vec<PathBuf>,
    out: &mut Alternates,
) {
    let joined = if entry.is_absolute() {
        entry
    } else {
        listing_dir.join(entry)
    };
    let resolved = crate::fault::check(crate::fault::Call::Resolve)
        .and_then(|()| std::fs::canonicalize(&joined));
    let dir = match resolved {
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
    // Not a directory: missing. A `stat` that fails (but for "not found") is no evidence that the directory is
    // gone: unreadable, so that a miss is not claimed.
    match crate::fault::check(crate::fault::Call::Stat).and_then(|()| std::fs::metadata(&dir)) {
        Ok(md) if md.is_dir() => {}
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            out.problems.push(AlternateProblem::Unreadable {
                path: joined,
                error: e,
            });
            return;
        }
        _ => {
            out.problems.push(AlternateProblem::Missing {
                listed_in,
                path: joined,
            });
            return;
        }
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
    let listed_in = dir.join("info").join("alternates");
    for e in entries {
        add_alternate(&dir, listed_in.clone(), e, depth + 1, chain, out);
    }
    chain.pop();
}

/// The entries of `objects_dir/info/alternates` (none if the file does not exist).
fn read_alternates_file(objects_dir: &Path, problems: &mut Vec<AlternateProblem>) -> Vec<PathBuf> {
    let file = objects_dir.join("info").join("alternates");
    match crate::data::read_bounded(&file, super::MAX_ALTERNATES_LEN) {
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
    parse_entries(data, b'\n')
}

/// Split `data` into entries separated by `sep`, as git's `parse_alt_odb_entry` does.
fn parse_entries(data: &[u8], sep: u8) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let line_end = |from: usize| {
        data[from..]
            .iter()
            .position(|&b| b == sep)
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
