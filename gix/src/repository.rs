//! A repository opened as git opens it: gix-discover's discovery, then its objects ([`Objects`]) and refs
//! ([`Refs`]), and the directories it found.

use std::path::{Path, PathBuf};

use crate::discover::Dirs;
use crate::names::Refs;
use crate::{Error, Info, Objects, Options, Store};

/// A git repository found by git's discovery (gix-discover): its directories, its objects and its refs.
///
/// ```
/// use odb_index_gix::Repository;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let dir = tempfile::tempdir()?;
///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(dir.path())
///         .args(["-c", "user.name=A", "-c", "user.email=a@example.com"]).args(args).output();
///     git(&["init", "-q"])?;
///     std::fs::create_dir(dir.path().join("sub"))?;
///     std::fs::write(dir.path().join("sub/hello.txt"), "hello\n")?;
///     git(&["add", "sub/hello.txt"])?;
///     git(&["commit", "-qm", "one"])?;
///
///     // From anywhere in the work tree, as git.
///     let repo = Repository::discover(dir.path().join("sub"))?;
///     let top = dir.path().canonicalize()?;
///     assert_eq!(repo.work_tree(), Some(top.as_path()));
///     assert_eq!(repo.git_dir(), top.join(".git"));
///     assert_eq!(repo.common_dir(), top.join(".git"));
///     assert_eq!(repo.objects_dir(), top.join(".git/objects"));
///
///     let tree = repo.resolve("HEAD^{tree}")?.expect("committed");
///     let mut data = Vec::new();
///     let info = repo.objects().read(&tree, &mut data)?.expect("present");
///     assert_eq!(info.kind, odb_index_gix::gix_object::Kind::Tree);
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct Repository {
    git_dir: PathBuf,
    common_dir: PathBuf,
    work_tree: Option<PathBuf>,
    objects: Objects,
    refs: Refs,
}

impl Repository {
    /// Open the repository at or above `path` as git finds it (gix-discover's `upwards`): a work tree or a
    /// directory in it, a `.git` directory or file, a bare repository, a linked worktree (its own git
    /// directory, `HEAD` included, and the common directory's objects and shared refs) or a submodule. Objects
    /// are read with default [`Options`]. Errors: [`Error::NotARepository`] naming `path` (there is none),
    /// [`Error::Discovery`] or [`Error::Io`] (a system call failed while looking), and the store's errors opening
    /// the objects directory.
    pub fn discover(path: impl AsRef<Path>) -> Result<Repository, Error> {
        Repository::discover_with(path, Options::default())
    }

    /// [`Repository::discover`] with the store opened with `options`.
    pub fn discover_with(path: impl AsRef<Path>, options: Options) -> Result<Repository, Error> {
        let dirs = Dirs::discover(path.as_ref())?;
        let store = Store::open(dirs.common_dir.join("objects"), options)?;
        let relative_to = dirs.relative_to(path.as_ref());
        let Dirs {
            git_dir,
            common_dir,
            work_tree,
        } = dirs;
        let refs = Refs::at(&git_dir, &common_dir, store.hash_kind()).with_relative_to(relative_to);
        Ok(Repository {
            git_dir,
            common_dir,
            work_tree,
            objects: Objects::new(store.handle()),
            refs,
        })
    }

    /// The git directory (canonical): `.git`, a bare repository, or a linked worktree's own
    /// `.git/worktrees/<name>` (where its `HEAD` is).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The common directory (canonical): where the objects, the config and the shared refs are; the git
    /// directory but for a linked worktree.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The objects directory read (canonical).
    pub fn objects_dir(&self) -> &Path {
        self.objects.store().objects_dir()
    }

    /// The work tree (canonical), `None` for a bare repository.
    pub fn work_tree(&self) -> Option<&Path> {
        self.work_tree.as_deref()
    }

    /// The repository's object format, as gix's crates name it ([`Objects::hash_kind`]).
    pub fn hash_kind(&self) -> gix_hash::Kind {
        self.objects.hash_kind()
    }

    /// Its objects. Clone it for another thread.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Its refs.
    pub fn refs(&self) -> &Refs {
        &self.refs
    }

    /// The object `name` names, as git reads it ([`Refs::resolve`]: `HEAD~2`, `main:src/lib.rs`, `v1.0^{}`,
    /// an abbreviated id, ...); `Ok(None)` where git finds nothing.
    pub fn resolve(&self, name: &str) -> Result<Option<crate::ObjectId>, Error> {
        self.refs.resolve(&self.objects, name)
    }

    /// Read the object `name` names ([`Repository::resolve`]) into `out`, as [`Objects::read`] does;
    /// `Ok(None)` where git finds nothing (`cat-file`: `missing`).
    pub fn read_by_name(&self, name: &str, out: &mut Vec<u8>) -> Result<Option<Info>, Error> {
        match self.resolve(name)? {
            Some(id) => self.objects.read(&id, out),
            None => Ok(None),
        }
    }
}
