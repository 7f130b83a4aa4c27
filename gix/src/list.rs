//! Every object with its type and size, in one pass ([`Objects::for_each_info`]): what `git cat-file
//! --batch-all-objects --batch-check` lists, for a front end that walks a whole repository.

use std::collections::HashSet;
use std::ops::ControlFlow;

use odb_index::{Location, ObjectId};

use crate::answer::Want;
use crate::{Error, Info, Objects};

impl Objects {
    /// Call `f` with the [`Info`] (id, type, size, place) of every object of the repository, once each, until `f`
    /// breaks: the store's iteration ([`Handle::for_each_object`](odb_index::Handle::for_each_object): the
    /// packs, newest first, each in id order, then the loose objects), each object's header read where the
    /// iteration found it ([`Objects::answer_at`]: a file git removed since is read where the object is now; an
    /// object gone from the repository meanwhile is passed over). The locations are gathered first (16 to 40
    /// bytes an object), then read.
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// # git(&["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "one"])?;
    /// use odb_index_gix::{Objects, gix_object::Kind};
    /// use std::collections::BTreeMap;
    /// use std::ops::ControlFlow;
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let mut by_kind = BTreeMap::new();
    /// objects.for_each_info(|info| {
    ///     *by_kind.entry(info.kind.to_string()).or_insert(0) += 1;
    ///     ControlFlow::Continue(())
    /// })?;
    /// assert_eq!(by_kind, BTreeMap::from([("blob".into(), 1), ("commit".into(), 1), ("tree".into(), 1)]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: those of the iteration, and the first object whose header cannot be read.
    pub fn for_each_info(&self, mut f: impl FnMut(Info) -> ControlFlow<()>) -> Result<(), Error> {
        let mut listed: Vec<(ObjectId, Location)> = Vec::new();
        // The handle is borrowed during the visit: the objects are read after it.
        self.handle().for_each_object(|id, loc| {
            listed.push((*id, loc));
            ControlFlow::Continue(())
        })?;
        let mut seen = HashSet::with_capacity(listed.len());
        let mut scratch = Vec::new();
        for (id, loc) in listed {
            if !seen.insert(id) {
                continue;
            }
            let answered = self.answer_at(&id, loc, Want::HEADER, &mut scratch);
            if let Some(info) = self.info_of(answered)?
                && f(info).is_break()
            {
                break;
            }
        }
        Ok(())
    }
}
