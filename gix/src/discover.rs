//! A repository's directories as git finds them (gix-discover, then a linked worktree's `commondir`), for
//! [`Repository::discover`](crate::Repository::discover) and [`Refs::discover`](crate::Refs::discover).

use std::path::{Path, PathBuf};

use gix_error::ErrorExt;

use crate::Error;

/// The most bytes read from a `commondir` file (git's limit for such path files is `4 * PATH_MAX`).
const MAX_PATH_FILE_LEN: u64 = 4 * 4096;

/// A repository's directories, as gix-discover finds them (canonical).
pub(crate) struct Dirs {
    pub(crate) git_dir: PathBuf,
    pub(crate) common_dir: PathBuf,
    pub(crate) work_tree: Option<PathBuf>,
}

impl Dirs {
    /// The directories of the repository at or above `path`. Errors: [`Error::NotARepository`] when there is
    /// none; [`Error::Discovery`] or [`Error::Io`] (naming the file) when a system call failed while looking.
    pub(crate) fn discover(path: &Path) -> Result<Dirs, Error> {
        // Looked for from the directory `path` resolves to, as git after `chdir(path)`: gix-discover 0.57 takes a
        // relative `../x.git` for `../.git`. A path that does not exist is looked for as given (and not found); a
        // failure to resolve it that may pass is an error, never "no repository".
        let from = match path.is_relative() {
            false => path.to_owned(),
            true => match odb_index::fault::check(odb_index::fault::Call::Resolve)
                .and_then(|()| path.canonicalize())
            {
                Ok(resolved) => resolved,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    path.to_owned()
                }
                Err(source) => {
                    return Err(Error::Io {
                        path: path.to_owned(),
                        source,
                    });
                }
            },
        };
        let (found, _trust) = gix_discover::upwards(&from).map_err(|source| {
            // gix-discover's own error says it looked and found none; anything else is a failed system call.
            if source
                .downcast_any_ref::<gix_discover::upwards::Error>()
                .is_some()
            {
                Error::NotARepository {
                    path: path.to_owned(),
                    source,
                }
            } else {
                Error::Discovery {
                    path: path.to_owned(),
                    source,
                }
            }
        })?;
        let (git_dir, work_tree) = found.into_repository_and_work_tree_directories();
        if !head_is_valid(&git_dir)? {
            let source =
                gix_error::message("HEAD is neither a symbolic ref to refs/ nor an object id")
                    .raise();
            return Err(Error::NotARepository {
                path: path.to_owned(),
                source,
            });
        }
        let canonical = |p: &Path| {
            odb_index::fault::check(odb_index::fault::Call::Resolve)
                .and_then(|()| p.canonicalize())
                .map_err(|source| Error::Io {
                    path: p.to_owned(),
                    source,
                })
        };
        let git_dir = canonical(&git_dir)?;
        let work_tree = work_tree.as_deref().map(canonical).transpose()?;
        let common_dir = match common_dir_of(&git_dir)? {
            Some(dir) => canonical(&dir)?,
            None => git_dir.clone(),
        };
        Ok(Dirs {
            git_dir,
            common_dir,
            work_tree,
        })
    }
}

impl Dirs {
    /// The work tree and the directory `path` names in it (relative, `""` at its top, else ending in `/`), as
    /// git's `prefix` for `rev:./path`; `None` when `path` is not in the work tree (a bare repository, a git
    /// directory: git is then outside a work tree) or cannot be made canonical.
    pub(crate) fn relative_to(&self, path: &Path) -> Option<(PathBuf, Vec<u8>)> {
        let work_tree = self.work_tree.as_ref()?;
        let path = path.canonicalize().ok()?;
        if path.starts_with(&self.git_dir) {
            return None;
        }
        let rest = path.strip_prefix(work_tree).ok()?;
        let dir: Vec<u8> = rest
            .components()
            .flat_map(|c| [c.as_os_str().as_encoded_bytes(), b"/"].concat())
            .collect();
        Some((work_tree.clone(), dir))
    }
}

/// Whether the `HEAD` of `git_dir` is one git takes for a repository's (`validate_headref`): a symbolic link to
/// `refs/...`, `ref:` and a name starting `refs/` (white space between), or an object id (40 or 64 hex digits);
/// git takes a directory with any other `HEAD` for no repository. A `HEAD` that cannot be read is no repository's
/// either (git's answer), but a failed `stat` or read other than "not found" is an error (there may be one).
fn head_is_valid(git_dir: &Path) -> Result<bool, Error> {
    let head = git_dir.join("HEAD");
    let io = |source| Error::Io {
        path: head.clone(),
        source,
    };
    let stat = odb_index::fault::check(odb_index::fault::Call::Stat)
        .and_then(|()| head.symlink_metadata());
    let meta = match stat {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(e)),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&head).map_err(io)?;
        return Ok(target.as_os_str().as_encoded_bytes().starts_with(b"refs/"));
    }
    let data = match odb_index::data::read_bounded(&head, 255) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        // Longer than git reads of it: left to the refs' reader.
        Err(e) if odb_index::data::file_problem(&e).is_some() => return Ok(true),
        Err(e) => return Err(io(e)),
    };
    if let Some(rest) = data.strip_prefix(b"ref:") {
        let name = rest.trim_ascii_start();
        if name.starts_with(b"refs/") {
            return Ok(true);
        }
    }
    let hex = |n: usize| data.len() >= n && data[..n].iter().all(u8::is_ascii_hexdigit);
    Ok(hex(40) || hex(64))
}

/// The common directory a linked worktree's git directory names in its `commondir` file (relative to it), or
/// `None` when it has none.
fn common_dir_of(git_dir: &Path) -> Result<Option<PathBuf>, Error> {
    let file = git_dir.join("commondir");
    let data = match odb_index::data::read_bounded(&file, MAX_PATH_FILE_LEN) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path: file, source }),
    };
    let text = String::from_utf8_lossy(&data);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.is_empty() {
        let source = std::io::Error::new(std::io::ErrorKind::InvalidData, "empty commondir file");
        return Err(Error::Io { path: file, source });
    }
    Ok(Some(git_dir.join(text)))
}
