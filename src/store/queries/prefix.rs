//! Abbreviated ids over every source of a store: [`Handle::lookup_prefix`] (unique, ambiguous or not found, as
//! gix-odb's `lookup_prefix`), [`Handle::prefix_candidates`] and [`Handle::shortest_unique_len`] (git's
//! `find_unique_abbrev`).

use std::ops::{ControlFlow, RangeInclusive};
use std::path::{Path, PathBuf};

use super::iter::Visit;
use crate::error::Error;
use crate::oid::ObjectId;
use crate::prefix::{MIN_HEX_LEN, Prefix, common_hex_digits};
use crate::store::Handle;
use crate::store::options::IncompleteMode;
use crate::sync::plain::Arc;

/// What a [`Prefix`] names in a store.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{HashKind, Options, Prefix, PrefixLookup, Store};
///
/// let mut handle = Store::open(repo.path(), Options::default())?.handle();
/// let prefix = Prefix::from_hex("ce01", HashKind::Sha1)?;
/// assert_eq!(handle.lookup_prefix(&prefix)?, PrefixLookup::Unique("ce013625030ba8dba906f756967f9e9ca394464a".parse()?));
/// let prefix = Prefix::from_hex("0000", HashKind::Sha1)?;
/// assert_eq!(handle.lookup_prefix(&prefix)?, PrefixLookup::NotFound);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixLookup {
    /// No object has this prefix.
    NotFound,
    /// Exactly one object has it.
    Unique(ObjectId),
    /// Two or more objects have it (git: "short object ID … is ambiguous").
    Ambiguous,
}

/// `each_with_prefix`'s visitor: `f` with every id starting with `prefix`; the loose fan-out directories that
/// cannot be read are recorded and skipped.
struct WithPrefix<'a> {
    prefix: &'a Prefix,
    f: &'a mut dyn FnMut(ObjectId) -> ControlFlow<()>,
    loose_failed: Vec<(PathBuf, Arc<Error>)>,
}

impl Visit for WithPrefix<'_> {
    fn packs(&mut self, handle: &mut Handle) -> ControlFlow<()> {
        handle.packed_with_prefix(self.prefix, self.f)
    }

    fn fanouts(&self) -> RangeInclusive<u8> {
        let first = self.prefix.as_id().first_byte();
        first..=first
    }

    fn loose(&mut self, _: usize, id: ObjectId) -> ControlFlow<()> {
        if self.prefix.matches(&id) {
            (self.f)(id)
        } else {
            ControlFlow::Continue(())
        }
    }

    fn loose_failed(&mut self, dir: &Path, error: Error) -> Result<(), Error> {
        self.loose_failed.push((dir.to_path_buf(), Arc::new(error)));
        Ok(())
    }
}

impl Handle {
    /// Call `f` with the id of every entry, in every source, that starts with `prefix` (an object stored twice
    /// comes twice, and once more if a refresh finds it again) until it breaks. `locate`'s order: the packs (every
    /// index loaded first), the loose objects, then, if a pack directory changed or an index vanished
    /// ([`should_refresh`](Handle::should_refresh)) or another thread's refresh replaced the listing, the packs
    /// of the new listing ([`load_all_relisted`](Handle::load_all_relisted)). Loose fan-out directories
    /// that cannot be read are skipped and returned (as `locate` skips a loose directory it cannot probe).
    fn each_with_prefix(
        &mut self,
        prefix: &Prefix,
        f: &mut dyn FnMut(ObjectId) -> ControlFlow<()>,
    ) -> Result<Vec<(PathBuf, Arc<Error>)>, Error> {
        let kind = self.store().hash_kind();
        if prefix.kind() != kind {
            return Err(Error::WrongIdHashKind {
                objects_dir: self.store().objects_dir().to_path_buf(),
                expected: kind,
                found: prefix.kind(),
            });
        }
        let mut visit = WithPrefix {
            prefix,
            f,
            loose_failed: Vec::new(),
        };
        self.walk(&mut visit)?;
        Ok(visit.loose_failed)
    }

    /// The packed part of [`each_with_prefix`](Self::each_with_prefix): every index loaded, then each entry
    /// starting with `prefix`.
    fn packed_with_prefix(
        &mut self,
        prefix: &Prefix,
        f: &mut dyn FnMut(ObjectId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (snap, _) = self.load_all();
        for p in &snap.packs {
            for i in p.idx.prefix_range(prefix) {
                if let Some(id) = p.idx.id_at(i).and_then(ObjectId::from_bytes) {
                    f(id)?;
                }
            }
        }
        for m in &snap.midx {
            for i in m.midx.prefix_range(prefix) {
                let Some(raw) = m.midx.id_at(i) else { continue };
                // Entries of packs that are not on disk are not answered by lookups either.
                let pack_present = m
                    .midx
                    .find(raw)
                    .ok()
                    .flatten()
                    .is_some_and(|(p, _)| m.packs.get(p as usize).is_some_and(Option::is_some));
                if pack_present && let Some(id) = ObjectId::from_bytes(raw) {
                    f(id)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The end of a prefix lookup that found no unique answer: as a miss of [`locate`](Self::locate), an
    /// [`Error::Incomplete`] under [`IncompleteMode::Error`](crate::store::IncompleteMode::Error) when an index failed
    /// to load or a loose fan-out directory could not be read.
    fn check_prefix_complete(
        &self,
        mut loose_failed: Vec<(PathBuf, Arc<Error>)>,
    ) -> Result<(), Error> {
        match self.check_complete() {
            Err(Error::Incomplete { mut failed }) => {
                failed.append(&mut loose_failed);
                Err(Error::Incomplete { failed })
            }
            Err(e) => Err(e),
            Ok(())
                if loose_failed.is_empty()
                    || (self.store().options.incomplete == IncompleteMode::Miss
                        && !loose_failed.iter().any(|(_, e)| e.is_transient())) =>
            {
                Ok(())
            }
            Ok(()) => Err(Error::Incomplete {
                failed: loose_failed,
            }),
        }
    }

    /// Which object `prefix` names: [`PrefixLookup::Unique`], [`PrefixLookup::Ambiguous`] or
    /// [`PrefixLookup::NotFound`], over every source (packs, multi-pack-indices, loose objects, alternates).
    /// An object stored in several places counts once.
    ///
    /// Loads every index file on first use. Errors: [`Error::WrongIdHashKind`] for a prefix of the other hash
    /// kind; I/O errors reading a loose fan-out directory; [`Error::Incomplete`] (under
    /// [`IncompleteMode::Error`](crate::store::IncompleteMode::Error)) when an index could not be loaded and the answer
    /// is not `Ambiguous` (the unreadable index might hold another match).
    ///
    /// ```
    /// # use std::process::Command;
    /// # let tmp = tempfile::tempdir()?;
    /// # let git = |args: &[&str], input: &str| {
    /// #     use std::io::Write;
    /// #     let mut c = Command::new("git").args(args).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1")
    /// #         .stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
    /// #     c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    /// #     let out = c.wait_with_output().unwrap();
    /// #     assert!(out.status.success());
    /// #     String::from_utf8(out.stdout).unwrap()
    /// # };
    /// # git(&["init", "-q", "--bare", "."], "");
    /// # let hello = git(&["hash-object", "-w", "--stdin"], "hello\n"); // ce013625030ba8dba906f756967f9e9ca394464a
    /// use odb_index::{HashKind, Options, Prefix, PrefixLookup, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let p = Prefix::from_hex("ce0136", HashKind::Sha1)?;
    /// assert_eq!(handle.lookup_prefix(&p)?, PrefixLookup::Unique(hello.trim().parse()?));
    /// let p = Prefix::from_hex("0000", HashKind::Sha1)?;
    /// assert_eq!(handle.lookup_prefix(&p)?, PrefixLookup::NotFound);
    /// assert_eq!(handle.shortest_unique_len(&hello.trim().parse()?, 4)?, 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lookup_prefix(&mut self, prefix: &Prefix) -> Result<PrefixLookup, Error> {
        let mut found: Option<ObjectId> = None;
        let mut ambiguous = false;
        let loose_failed = self.each_with_prefix(prefix, &mut |id| match found {
            Some(f) if f != id => {
                ambiguous = true;
                ControlFlow::Break(())
            }
            _ => {
                found = Some(id);
                ControlFlow::Continue(())
            }
        })?;
        if ambiguous {
            return Ok(PrefixLookup::Ambiguous);
        }
        if found.is_none() {
            self.check_prefix_complete(loose_failed)?;
        }
        Ok(found.map_or(PrefixLookup::NotFound, PrefixLookup::Unique))
    }

    /// Every object whose id starts with `prefix`, sorted, each once (for git's "the candidates are" hint).
    /// Errors as [`lookup_prefix`](Self::lookup_prefix).
    pub fn prefix_candidates(&mut self, prefix: &Prefix) -> Result<Vec<ObjectId>, Error> {
        let mut out = Vec::new();
        let loose_failed = self.each_with_prefix(prefix, &mut |id| {
            out.push(id);
            ControlFlow::Continue(())
        })?;
        out.sort_unstable();
        out.dedup();
        if out.len() < 2 {
            self.check_prefix_complete(loose_failed)?;
        }
        Ok(out)
    }

    /// The fewest hex digits, at least `min_len` (and at least git's minimum of 4), that abbreviate `id` without
    /// ambiguity among the objects of the store: git's `find_unique_abbrev` (`git rev-parse --short=<min_len>`).
    /// `id` itself need not be in the store. Errors as [`lookup_prefix`](Self::lookup_prefix) (an unreadable
    /// index might hold a longer common prefix).
    pub fn shortest_unique_len(&mut self, id: &ObjectId, min_len: usize) -> Result<usize, Error> {
        let hex_len = id.kind().hex_len();
        let min_len = min_len.clamp(MIN_HEX_LEN, hex_len);
        // Only ids sharing the first MIN_HEX_LEN digits can need more than MIN_HEX_LEN.
        let prefix = Prefix::new(id, MIN_HEX_LEN).map_err(|_| Error::WrongIdHashKind {
            objects_dir: self.store().objects_dir().to_path_buf(),
            expected: self.store().hash_kind(),
            found: id.kind(),
        })?;
        let mut longest = 0;
        let loose_failed = self.each_with_prefix(&prefix, &mut |other| {
            if other != *id {
                longest = longest.max(common_hex_digits(id.as_bytes(), other.as_bytes()));
            }
            ControlFlow::Continue(())
        })?;
        self.check_prefix_complete(loose_failed)?;
        Ok((longest + 1).clamp(min_len, hex_len))
    }
}
