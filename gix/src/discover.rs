//! A repository's directories as git finds them (gix-discover, then a linked worktree's `commondir`), for
//! [`Repository::discover`](crate::Repository::discover) and [`Refs::discover`](crate::Refs::discover).

use std::path::{Path, PathBuf};

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
        let (found, _trust) = gix_discover::upwards(path).map_err(|source| {
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
