//! Object names as git reads them (`git rev-parse`'s `get_oid`), parsed by gix-revision, refs read by gix-ref.
//!
//! [`Refs::resolve`] answers the common forms: full and abbreviated ids, `HEAD`, ref names by git's rules
//! (`<name>`, `refs/<name>`, `refs/tags/<name>`, `refs/heads/<name>`, `refs/remotes/<name>`,
//! `refs/remotes/<name>/HEAD`; loose or in `packed-refs`; symbolic refs followed), `rev^`, `rev^N`, `rev~N`,
//! `rev^{tree}`/`^{commit}`/`^{blob}`/`^{tag}`/`^{object}`/`^{}`, `rev:path` and git's `describe` output. As in
//! git, a ref wins over an abbreviated id of the same spelling, and a full-length id over a ref. The path of
//! `rev:path` is bytes, read literally as git reads it (`dir/` is the tree, `a/`, `dir//b`, `dir/./b` and `.`
//! name nothing), but for `./path` and `../path`, relative to the work tree's directory the refs were discovered
//! from ([`Refs::resolve_bytes`]).
//!
//! `rev^{/text}` and `:/text` search commit messages as git 2.47 does (the regular
//! expression is regex-automata's, which agrees with POSIX ERE on the common forms). A range (`a..b`, `a...b`,
//! `^a`, `a^!`, `a^@`) names nothing (`Ok(None)`), as git's `get_oid` fails on it.
//!
//! Not resolved, each an [`Error::UnsupportedName`] naming what (never a wrong answer): reflog forms
//! (`@{1}`, `@{yesterday}`, `@{-1}`), `@{upstream}`/`@{push}`, `:path` and `:N:path` (the index), and a
//! repository whose refs are in the reftable format ([`Error::Reftable`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gix_error::ErrorExt;
use gix_hash::ObjectId;
use gix_object::Kind;
use gix_object::bstr::{BStr, ByteSlice};
use gix_revision::spec::parse::delegate::{self, PeelTo, Traversal};

use crate::convert::kind_to_gix;
use crate::packed_refs::PackedRefs;
use crate::{Error, Objects};

/// With the feature `test-hooks`, the environment variable `ODB_INDEX_TEST_PACK_REFS=<n>:<dir>` (for the
/// command the cli's tests run) gives each [`Refs`] made the hook of [`Refs::before_loose_refs_once`] at point
/// `n` that runs `git -C <dir> pack-refs --all` (and panics if git fails: a test's setup went wrong).
#[cfg(feature = "test-hooks")]
fn pack_refs_from_env() -> Option<(usize, Box<dyn FnOnce() + Send>)> {
    let value = std::env::var("ODB_INDEX_TEST_PACK_REFS").ok()?;
    let (nth, dir) = value.split_once(':')?;
    let (nth, dir) = (nth.parse().ok()?, dir.to_owned());
    Some((
        nth,
        Box::new(move || {
            let status = std::process::Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["pack-refs", "--all"])
                .status();
            assert!(status.is_ok_and(|s| s.success()), "git pack-refs failed");
        }),
    ))
}

/// A commit's tree and parents.
#[derive(Clone)]
struct Commit {
    tree: ObjectId,
    parents: Vec<ObjectId>,
}

/// The most commits whose tree and parents [`Refs`] keeps (then it starts again): `rev~N` walks N commits, and names
/// such as `main~500` and `main~501` walk the same ones; git keeps every commit it parsed.
const COMMITS_CACHED: usize = 1 << 20;

/// How many times a ref lookup is made in all when `packed-refs` is rewritten while it looks (each time again
/// needs another rewrite during the lookup: `git pack-refs` running back to back); then the last answer stands.
const PACKED_REFS_TRIES: usize = 8;

/// A test's hook (feature `test-hooks`): how many more points of loose reads to pass, and what to run at the
/// last ([`Refs::before_loose_refs_once`]).
#[cfg(feature = "test-hooks")]
type Hook = Arc<Mutex<Option<(usize, Box<dyn FnOnce() + Send>)>>>;

/// A repository's refs (gix-ref's loose and packed ref store), for [`Refs::resolve`]. For a linked worktree
/// it reads the worktree's own `HEAD` (and other per-worktree refs) from its git directory, and the shared refs
/// from the common directory, as git does.
#[derive(Clone)]
pub struct Refs {
    store: gix_ref::file::Store,
    /// The `reftable` directory, if the refs are in that format (not read here).
    reftable: Option<PathBuf>,
    /// The trees and parents of the commits walked so far (shared by clones and threads).
    commits: Arc<Mutex<gix_hashtable::HashMap<ObjectId, Commit>>>,
    /// The last `packed-refs` read, with its `stat` stamp (shared by clones and threads).
    packed: PackedRefs,
    /// The work tree and the directory in it (relative, `""` or ending in `/`) that `rev:./path` and
    /// `rev:../path` are relative to; `None` outside a work tree (a bare repository, a git directory), where git
    /// refuses them.
    relative_to: Option<(PathBuf, Vec<u8>)>,
    /// git's warnings about refs passed over since [`Refs::take_warnings`] was last called (shared by clones).
    pub(crate) warnings: Arc<Mutex<Vec<String>>>,
    #[cfg(feature = "test-hooks")]
    hook: Hook,
}

// One `Refs` serves several threads (gix-parallel's `parallel` feature, see Cargo.toml).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Refs>();
};

impl std::fmt::Debug for Refs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refs")
            .field("git_dir", &self.store.git_dir())
            .field("common_dir", &self.store.common_dir_resolved())
            .finish()
    }
}

impl Refs {
    /// The refs of the git directory `git_dir` whose common directory is `common_dir` (the same directory but
    /// for a linked worktree), with object ids of `kind`.
    pub fn at(git_dir: &Path, common_dir: &Path, kind: crate::HashKind) -> Refs {
        let kind = kind_to_gix(kind);
        let store = if git_dir == common_dir {
            gix_ref::file::Store::at(git_dir.to_owned(), kind)
        } else {
            gix_ref::file::Store::for_linked_worktree(
                git_dir.to_owned(),
                common_dir.to_owned(),
                kind,
            )
        };
        let reftable = common_dir.join("reftable");
        Refs {
            store,
            reftable: reftable.is_dir().then_some(reftable),
            commits: Arc::default(),
            packed: PackedRefs::default(),
            relative_to: None,
            warnings: Arc::default(),
            #[cfg(feature = "test-hooks")]
            hook: Arc::new(Mutex::new(pack_refs_from_env())),
        }
    }

    /// Run `f` once, at the `nth` (from 1) point where a ref lookup (of this `Refs` or a clone, on any thread)
    /// has its `packed-refs` snapshot and is about to read loose refs: before it reads the name's candidates
    /// (point 1 of a lookup), before it reads each symbolic ref's target (the next points). That is where
    /// `git pack-refs` straddles a lookup. Feature `test-hooks` (this workspace's tests; not for users, not
    /// semver).
    #[cfg(feature = "test-hooks")]
    pub fn before_loose_refs_once(&self, nth: usize, f: impl FnOnce() + Send + 'static) {
        *self.hook.lock().expect("not poisoned") = Some((nth, Box::new(f)));
    }

    /// At a point of loose reads: run the hook if this is its point.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn hook_point(&self) {
        let mut hook = self.hook.lock().expect("not poisoned");
        let due = hook.as_mut().is_some_and(|(n, _)| {
            *n = n.saturating_sub(1);
            *n == 0
        });
        if let Some((_, f)) = hook.take_if(|_| due) {
            drop(hook);
            f();
        }
    }

    /// The refs of the repository at or above `path`, found as [`Repository::discover`](crate::Repository::discover)
    /// finds it, with object ids of `kind` (a front end that has opened the objects already, as the
    /// `odb-index` command has). Errors: [`Error::NotARepository`] naming `path` when there is no repository
    /// there; [`Error::Discovery`] or [`Error::Io`] when a system call failed while looking (there may be one:
    /// git dies there).
    pub fn discover(path: &Path, kind: crate::HashKind) -> Result<Refs, Error> {
        let dirs = crate::discover::Dirs::discover(path)?;
        let mut refs = Refs::at(&dirs.git_dir, &dirs.common_dir, kind);
        refs.relative_to = dirs.relative_to(path);
        Ok(refs)
    }

    /// These refs with `rev:./path` read relative to `dir` of the work tree `work_tree` (see `relative_to`).
    pub(crate) fn with_relative_to(mut self, relative_to: Option<(PathBuf, Vec<u8>)>) -> Refs {
        self.relative_to = relative_to;
        self
    }

    /// The object the ref `name` names by git's rules (`<name>`, `refs/<name>`, `refs/tags/<name>`, ...;
    /// symbolic refs followed, tags not peeled), or `None`; nothing else of [`Refs::resolve`]'s syntax.
    pub fn resolve_ref(&self, objects: &Objects, name: &str) -> Result<Option<ObjectId>, Error> {
        if let Some(path) = &self.reftable {
            return Err(Error::Reftable { path: path.clone() });
        }
        let d = Resolver {
            refs: self,
            objects,
            name: name.as_bytes(),
            current: None,
            outcome: None,
            buf: Vec::new(),
        };
        d.find_ref(name.as_bytes().as_bstr())
    }

    /// The warnings git prints on stderr about refs a lookup passed over since the last call (of this `Refs` or
    /// a clone), without git's `warning: ` prefix: `ignoring broken ref refs/tags/main` (a loose ref that cannot
    /// be read: the next of git's rules is tried), `ignoring dangling symref refs/heads/x` (a symbolic ref whose
    /// target does not resolve). At most 1 024 are kept between two calls.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().expect("not poisoned"))
    }

    /// gix-ref's store, for what [`Refs::resolve`] does not do (iterating refs, reflogs).
    pub fn store(&self) -> &gix_ref::file::Store {
        &self.store
    }

    /// The object (gix's id) `name` names in the repository `objects` reads, as `git rev-parse --verify -q <name>` (and
    /// `git cat-file`) reads it; `Ok(None)` where git finds nothing (`missing`): an unknown ref or id, a path not
    /// in the tree, a parent or type that is not there, a name gix-revision cannot parse.
    ///
    /// Errors: [`Error::AmbiguousName`] for an abbreviation of several objects, [`Error::UnsupportedName`] and
    /// [`Error::Reftable`] (see the [module](self)), and the errors of reading objects and refs.
    ///
    /// ```
    /// use odb_index_gix::Repository;
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let dir = tempfile::tempdir()?;
    ///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(dir.path())
    ///         .args(["-c", "user.name=A", "-c", "user.email=a@example.com"]).args(args).output();
    ///     git(&["init", "-q"])?;
    ///     std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
    ///     git(&["add", "hello.txt"])?;
    ///     git(&["commit", "-qm", "one"])?;
    ///
    ///     let repo = Repository::discover(dir.path())?;
    ///     let blob = repo.resolve("HEAD:hello.txt")?.expect("committed");
    ///     assert_eq!(blob.to_string(), "ce013625030ba8dba906f756967f9e9ca394464a");
    ///     assert_eq!(repo.resolve("HEAD~1")?, None); // the root commit has no parent
    ///     Ok(())
    /// }
    /// ```
    pub fn resolve(&self, objects: &Objects, name: &str) -> Result<Option<ObjectId>, Error> {
        self.resolve_bytes(objects, name.as_bytes())
    }

    /// [`Refs::resolve`] for a name that need not be UTF-8, as git reads it (a path of `rev:path` is bytes:
    /// `HEAD:caf\xe9`). A path starting `./` or `../` is relative to the directory of the work tree the refs were
    /// discovered from ([`Refs::discover`]; [`Error::RelativePath`] outside a work tree or above its top, as git
    /// dies there).
    pub fn resolve_bytes(&self, objects: &Objects, name: &[u8]) -> Result<Option<ObjectId>, Error> {
        if let Some(path) = &self.reftable {
            return Err(Error::Reftable { path: path.clone() });
        }
        let mut d = Resolver {
            refs: self,
            objects,
            name,
            current: None,
            outcome: None,
            buf: Vec::new(),
        };
        let parsed = gix_revision::spec::parse(name.as_bstr(), &mut d);
        match (d.outcome, parsed) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(())), _) => Ok(None),
            (None, Ok(())) => Ok(d.current),
            // gix-revision refused the name: git's `get_oid` fails on it too.
            (None, Err(_)) => Ok(None),
        }
    }
}

/// gix-revision's delegate: the object named so far (`current`), and why parsing stopped, if it was for a
/// reason of ours (`Ok(())`: the name names nothing; `Err`: an error to return).
pub(crate) struct Resolver<'a> {
    pub(crate) refs: &'a Refs,
    pub(crate) objects: &'a Objects,
    name: &'a [u8],
    pub(crate) current: Option<ObjectId>,
    outcome: Option<Result<(), Error>>,
    buf: Vec<u8>,
}

type Step = gix_error::Result<()>;

impl Resolver<'_> {
    /// Stop parsing: the name names nothing.
    fn nothing(&mut self) -> Step {
        self.outcome.get_or_insert(Ok(()));
        Err(gix_error::message("names nothing").raise())
    }

    /// Stop parsing with `e`.
    fn fail(&mut self, e: Error) -> Step {
        self.outcome.get_or_insert(Err(e));
        Err(gix_error::message("failed").raise())
    }

    fn unsupported(&mut self, what: &'static str) -> Step {
        let e = Error::UnsupportedName {
            name: String::from_utf8_lossy(self.name).into_owned(),
            what,
        };
        self.fail(e)
    }

    /// Continue from `id`, or stop if there is none.
    fn set(&mut self, id: Option<ObjectId>) -> Step {
        match id {
            Some(id) => {
                self.current = Some(id);
                Ok(())
            }
            None => self.nothing(),
        }
    }

    /// Read `id` into `self.buf`: its kind, or `None` if absent.
    fn read(&mut self, id: &ObjectId) -> Result<Option<Kind>, Error> {
        Ok(self.objects.read(id, &mut self.buf)?.map(|info| info.kind))
    }

    /// The object the ref `name` (by git's rules) points to, symbolic refs followed; `None` if there is none.
    ///
    /// As git, every loose ref is read before the `packed-refs` it falls back to was last `stat`ed: the lookup
    /// (gix-ref's, each name read loose first, then in the last `packed-refs` snapshot) is followed by a `stat`
    /// of `packed-refs`; if the file was rewritten since the snapshot was read (`git pack-refs` writes the new
    /// file before it deletes the loose ones it packed), a loose ref read may have missed a ref that moved, or
    /// found a value the move replaced, and the lookup is made again with the new file.
    pub(crate) fn find_ref(&self, name: &BStr) -> Result<Option<ObjectId>, Error> {
        let Ok(partial) = <&gix_ref::PartialNameRef>::try_from(name) else {
            return Ok(None);
        };
        let (store, packed_refs) = (&self.refs.store, &self.refs.packed);
        let mut packed = packed_refs.last(store)?;
        let mut found = None;
        for _ in 0..PACKED_REFS_TRIES {
            #[cfg(feature = "test-hooks")]
            self.refs.hook_point();
            found = self.find_ref_in(partial, packed.buffer())?;
            let now = packed_refs.now(store)?;
            if now.same_file(&packed) {
                return Ok(found);
            }
            packed = now;
        }
        Ok(found)
    }

    /// Peel the current object until it is of `kind` (tags to their targets, a commit to its tree).
    pub(crate) fn peel_to(&mut self, kind: Option<Kind>) -> Result<Option<ObjectId>, Error> {
        self.peel(kind, true)
    }

    /// [`Resolver::peel_to`]; `claims` holds each tag to the type its `type` line claims for its target, as git's
    /// `deref_tag` does (a target of another type is git's `error: object ... is a blob, not a commit`: nothing),
    /// where `rev:path` (git's `read_object_with_reference`) goes by what the objects are.
    fn peel(&mut self, kind: Option<Kind>, claims: bool) -> Result<Option<ObjectId>, Error> {
        let hash = self.objects.hash_kind();
        let Some(mut id) = self.current else {
            return Ok(None);
        };
        // The type the tag that led to `id` claims for it.
        let mut claimed: Option<Kind> = None;
        let lies = |claimed: Option<Kind>, is: Kind| claims && claimed.is_some_and(|c| c != is);
        loop {
            if matches!(kind, Some(Kind::Tree | Kind::Commit))
                && let Some(c) = self.refs.commits.lock().expect("not poisoned").get(&id)
            {
                if lies(claimed, Kind::Commit) {
                    return Ok(None);
                }
                return Ok(Some(if kind == Some(Kind::Tree) { c.tree } else { id }));
            }
            let Some(found) = self.read(&id)? else {
                return Ok(None);
            };
            if lies(claimed, found) {
                return Ok(None);
            }
            if Some(found) == kind {
                return Ok(Some(id));
            }
            (id, claimed) = match found {
                Kind::Tag => {
                    let target = gix_object::TagRefIter::from_bytes(&self.buf, hash);
                    let claim = claimed_type(&self.buf);
                    if claims && claim.is_none() {
                        return Ok(None);
                    }
                    (target.target_id()?, claim)
                }
                // `^{}`: the first object that is not a tag.
                _ if kind.is_none() => return Ok(Some(id)),
                Kind::Commit if kind == Some(Kind::Tree) => {
                    let mut tree = gix_object::CommitRefIter::from_bytes(&self.buf, hash);
                    (tree.tree_id()?, None)
                }
                _ => return Ok(None),
            };
        }
    }

    /// The entry at `path` in the tree the current object peels to, read literally as git reads it (see
    /// [`crate::tree_path`]), a path starting `./` or `../` relative to the work tree's directory.
    fn path(&mut self, path: &BStr) -> Result<Option<ObjectId>, Error> {
        let relative;
        let mut path: &[u8] = path;
        if crate::tree_path::is_relative(path) {
            let outside = |work_tree: Option<&PathBuf>| Error::RelativePath {
                path: String::from_utf8_lossy(path).into_owned(),
                work_tree: work_tree.cloned(),
            };
            let Some((work_tree, dir)) = &self.refs.relative_to else {
                return Err(outside(None));
            };
            relative = crate::tree_path::normalize(&[dir.as_slice(), path].concat())
                .ok_or_else(|| outside(Some(work_tree)))?;
            path = &relative;
        }
        let Some(tree) = self.peel(Some(Kind::Tree), false)? else {
            return Ok(None);
        };
        crate::tree_path::entry(self.objects, tree, path, &mut self.buf)
    }

    /// The `n`th parent (1-based) of the current commit (peeled), or `None`.
    fn parent(&mut self, n: usize) -> Result<Option<ObjectId>, Error> {
        let nth = |c: &Commit| c.parents.get(n.wrapping_sub(1)).copied();
        if let Some(id) = self.current
            && let Some(c) = self.refs.commits.lock().expect("not poisoned").get(&id)
        {
            return Ok(nth(c));
        }
        Ok(self.commit()?.as_ref().and_then(nth))
    }

    /// The tree and parents of the commit the current object peels to, from the cache or read and cached.
    fn commit(&mut self) -> Result<Option<Commit>, Error> {
        let Some(id) = self.current else {
            return Ok(None);
        };
        if let Some(c) = self.refs.commits.lock().expect("not poisoned").get(&id) {
            return Ok(Some(c.clone()));
        }
        let Some(commit) = self.peel_to(Some(Kind::Commit))? else {
            return Ok(None);
        };
        // A tag of a cached commit; otherwise `peel_to` read the commit into `buf`.
        if let Some(c) = self.refs.commits.lock().expect("not poisoned").get(&commit) {
            return Ok(Some(c.clone()));
        }
        let hash = self.objects.hash_kind();
        let c = Commit {
            tree: gix_object::CommitRefIter::from_bytes(&self.buf, hash).tree_id()?,
            parents: gix_object::CommitRefIter::from_bytes(&self.buf, hash)
                .parent_ids()
                .collect(),
        };
        let mut cache = self.refs.commits.lock().expect("not poisoned");
        if cache.len() >= COMMITS_CACHED {
            cache.clear();
        }
        cache.insert(commit, c.clone());
        Ok(Some(c))
    }
}

impl Resolver<'_> {
    /// The `n`th first-parent ancestor of the current commit (peeled; `0`: the commit itself), or `None`.
    fn ancestor(&mut self, n: usize) -> Result<Option<ObjectId>, Error> {
        let mut id = self.peel_to(Some(Kind::Commit))?;
        for _ in 0..n {
            if id.is_none() {
                break;
            }
            self.current = id;
            id = self.parent(1)?;
        }
        Ok(id)
    }
}

impl delegate::Revision for Resolver<'_> {
    fn find_ref(&mut self, name: &BStr) -> Step {
        match Resolver::find_ref(self, name) {
            Ok(id) => self.set(id),
            Err(e) => self.fail(e),
        }
    }

    fn disambiguate_prefix(
        &mut self,
        prefix: gix_hash::Prefix,
        hint: Option<delegate::PrefixHint<'_>>,
    ) -> Step {
        let hex = prefix.to_string();
        // git (`get_oid_basic`): a full id first, then a ref, then an abbreviation.
        if hex.len() < self.objects.store_kind().hex_len() {
            match Resolver::find_ref(self, hex.as_bytes().as_bstr()) {
                Ok(Some(id)) => return self.set(Some(id)),
                Ok(None) => {}
                Err(e) => return self.fail(e),
            }
        }
        match self.objects.lookup_name(&hex) {
            Ok(Some(id)) => self.set(Some(id)),
            Err(e @ Error::AmbiguousName { .. }) => self.fail(e),
            // git takes a full id as the id, object or not (a ref spelled like it is never read): missing.
            Ok(None) if hint.is_none() && hex.len() == self.objects.store_kind().hex_len() => {
                self.nothing()
            }
            // No such object, or not a name of ours (another hash's length): gix-revision tries the name as a
            // ref next (`git describe` output, a ref spelled in hex).
            Ok(None) | Err(Error::BadName { .. }) => Err(gix_error::message("no object").raise()),
            Err(e) => self.fail(e),
        }
    }

    fn reflog(&mut self, _query: delegate::ReflogLookup) -> Step {
        self.unsupported("reflog entries (@{n}, @{date})")
    }

    fn nth_checked_out_branch(&mut self, _branch_no: usize) -> Step {
        self.unsupported("previously checked-out branches (@{-n})")
    }

    fn sibling_branch(&mut self, _kind: delegate::SiblingBranch) -> Step {
        self.unsupported("upstream and push branches (@{upstream}, @{push})")
    }
}

impl delegate::Navigate for Resolver<'_> {
    fn traverse(&mut self, kind: Traversal) -> Step {
        let found = match kind {
            Traversal::NthParent(n) => self.parent(n),
            Traversal::NthAncestor(n) => self.ancestor(n),
        };
        match found {
            Ok(id) => self.set(id),
            Err(e) => self.fail(e),
        }
    }

    fn peel_until(&mut self, kind: PeelTo<'_>) -> Step {
        let found = match kind {
            PeelTo::ObjectKind(k) => self.peel_to(Some(k)),
            PeelTo::ValidObject => match self.current {
                Some(id) => self.read(&id).map(|k| k.map(|_| id)),
                None => Ok(None),
            },
            PeelTo::RecursiveTagObject => self.peel_to(None),
            PeelTo::Path(path) => self.path(path),
        };
        match found {
            Ok(id) => self.set(id),
            Err(e) => self.fail(e),
        }
    }

    fn find(&mut self, regex: &BStr, negated: bool) -> Step {
        match self.search(regex, negated) {
            Ok(id) => self.set(id),
            Err(e) => self.fail(e),
        }
    }

    fn index_lookup(&mut self, _path: &BStr, _stage: u8) -> Step {
        self.unsupported("paths in the index (:path, :N:path)")
    }
}

impl delegate::Kind for Resolver<'_> {
    fn kind(&mut self, _kind: gix_revision::spec::Kind) -> Step {
        // A range (`a..b`, `a...b`, `^a`, `a^!`, `a^@`, `a^-`) names no one object: git's `get_oid` fails on it.
        self.nothing()
    }
}

impl gix_revision::spec::parse::Delegate for Resolver<'_> {
    fn done(&mut self) -> Step {
        Ok(())
    }
}

/// The type a tag's `type` header line claims for its target, if it names one.
fn claimed_type(tag: &[u8]) -> Option<Kind> {
    let headers = tag.split(|&b| b == b'\n').take_while(|l| !l.is_empty());
    let name = headers.into_iter().find_map(|l| l.strip_prefix(b"type "))?;
    Kind::from_bytes(name).ok()
}
