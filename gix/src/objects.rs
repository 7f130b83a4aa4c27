//! [`Objects`]: an odb-index [`Handle`] with the data behind each location, for gix's traits. This file holds the
//! type, how it is made and an opened pack ([`Pack`]); what it does is in its siblings, one concern each, as
//! gix-odb splits its handle, none importing another in a circle: `place.rs` (a location's place), `read.rs` (the
//! header, contents, disk size and delta base at a place), `answer.rs` (a location to an answer, with the
//! relocation loop, and the reads by id), `hex_name.rs` (hex object names), `pack.rs` (packs by id, their indices),
//! `find.rs` (gix-object's traits), `batch.rs` and `list.rs` (many objects at once).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use odb_index::{Handle, HashKind, IncompleteMode, Options, PackId, Store};

use crate::Error;
use crate::base_cache::{DEFAULT_LIMIT, DeltaBases, key_of};
use crate::convert::kind_to_gix;
use crate::rev::RevIndex;

/// gix-object's [`Find`](https://docs.rs/gix-object/0.66/gix_object/trait.Find.html) and [`FindHeader`](https://docs.rs/gix-object/0.66/gix_object/trait.FindHeader.html) on an odb-index [`Handle`].
///
/// Lookups go through the handle; packed data is decoded by gix-pack (each `.pack` mapped with its index when
/// the store was opened with [`Options::pack_data`], as [`Objects::open`] opens it, else on first use, and kept
/// until the store no longer lists it; pack ids are never reused, so a cached pack is never mistaken for another),
/// loose objects are inflated with gix-zlib. Not `Sync` (the handle is one thread's); `Clone` gives another for
/// another thread that shares the packs either has opened, before or after the clone (see its `clone`): a pack
/// one thread has read stays readable to all of them after its files are renamed away, as git's one process
/// keeps a pack it has opened. [`Objects::new`] on a [`Store::handle`] gives one that shares nothing.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?;
/// # git(&["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "import 7"])?;
/// # let commit = String::from_utf8(git(&["rev-parse", "HEAD"])?.stdout)?;
/// use odb_index_gix::gix_object::{Find, FindExt, FindHeader};
/// use odb_index_gix::{Objects, gix_hash, gix_object};
///
/// let objects = Objects::open(repo.path())?;
/// let id = gix_hash::ObjectId::from_hex(commit.trim().as_bytes())?;
/// let header = objects.try_header(&id)?.expect("present");
/// assert_eq!(header.kind, gix_object::Kind::Commit);
/// let mut buf = Vec::new();
/// let message = objects.find_commit(&id, &mut buf)?.message.to_string();
/// assert_eq!(message, "import 7\n"); // git ends a message with a newline
/// assert_eq!(buf.len() as u64, header.size);
/// assert!(objects.try_header(&gix_hash::Kind::Sha1.null())?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Objects {
    pub(crate) handle: RefCell<Handle>,
    pub(crate) store: Arc<Store>,
    pub(crate) kind: HashKind,
    /// The packs this reader has opened (or taken from `shared`): the lookups' map, no lock.
    pub(crate) packs: RefCell<HashMap<PackId, Arc<Pack>>>,
    /// The packs every clone of this reader has opened, consulted when `packs` lacks one (a lock, once per pack
    /// and reader), so that a clone never opens a `.pack` another has opened: a file renamed away since is read
    /// through the other's mapping, as one git process reads it.
    pub(crate) shared: Arc<SharedPacks>,
    /// [`Store::listing_version`] when the cached packs were last checked with [`Store::is_pack_live`].
    pub(crate) listing_seen: Cell<u64>,
    pub(crate) inflate: RefCell<gix_zlib::Inflate>,
    /// The loose objects' decompressor (streaming: a loose file is never read whole).
    pub(crate) loose: RefCell<gix_zlib::Decompress>,
    /// Files that were unusable but had a fallback (a broken `.rev`), not yet taken by [`Objects::take_problems`].
    pub(crate) problems: RefCell<Vec<Error>>,
    /// The bases deltas were applied to, resolved ([`Objects::with_delta_base_cache`], `base_cache.rs`).
    pub(crate) delta_bases: RefCell<DeltaBases>,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Objects")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Clone for Objects {
    /// Another reader of the same store, as gix-odb's `Handle` clones: it shares the store (an `Arc`) and the
    /// packs this one and its other clones have opened or will open (their maps are immutable, shared by `Arc`),
    /// and has its own store [`Handle`], decompressors and [`Objects::take_problems`] list, so that each clone
    /// can move to its own thread.
    fn clone(&self) -> Objects {
        let mut clone = Objects::new(self.store.handle());
        clone.shared = Arc::clone(&self.shared);
        clone.packs.replace(self.packs.borrow().clone());
        clone.listing_seen.set(self.listing_seen.get());
        clone.delta_bases = RefCell::new(DeltaBases::new(self.delta_bases.borrow().limit()));
        clone
    }
}

impl Objects {
    /// Read objects through `handle`.
    pub fn new(handle: Handle) -> Objects {
        let store = Arc::clone(handle.store());
        Objects {
            kind: store.hash_kind(),
            listing_seen: Cell::new(store.listing_version()),
            store,
            handle: RefCell::new(handle),
            packs: RefCell::new(HashMap::new()),
            shared: Arc::default(),
            inflate: RefCell::new(gix_zlib::Inflate::default()),
            loose: RefCell::new(gix_zlib::Decompress::new()),
            problems: RefCell::new(Vec::new()),
            delta_bases: RefCell::new(DeltaBases::new(DEFAULT_LIMIT)),
        }
    }

    /// This reader with a delta-base cache of at most `bytes` of object data (0: none). Reading a deltified
    /// object applies its chain of deltas to the chain's base; the cache keeps the objects deltas were applied
    /// to, so that the next object whose chain passes through one of them (the next version of a tree or a
    /// file, in a history walk) inflates only the deltas above it. git's `core.deltaBaseCacheLimit` is the same
    /// bound, 96 MiB by default, which is this reader's default too; each clone has a cache of its own of the
    /// same bound (as each has its own inflater), so `n` threads hold up to `n` times it.
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q"]).current_dir(repo.path()).status()?;
    /// use odb_index_gix::Objects;
    ///
    /// let objects = Objects::open(repo.path())?.with_delta_base_cache(16 << 20); // 16 MiB
    /// assert_eq!(objects.delta_base_cache_limit(), 16 << 20);
    /// assert_eq!(objects.clone().delta_base_cache_limit(), 16 << 20);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_delta_base_cache(self, bytes: usize) -> Objects {
        self.delta_bases.replace(DeltaBases::new(bytes));
        self
    }

    /// The bound of this reader's delta-base cache ([`with_delta_base_cache`](Self::with_delta_base_cache)).
    pub fn delta_base_cache_limit(&self) -> usize {
        self.delta_bases.borrow().limit()
    }

    /// Open the repository at `path` with default [`Options`] (so [`IncompleteMode::Error`](crate::IncompleteMode):
    /// a miss while some index could not be read is an error, never "absent") and read objects through a handle
    /// of it. Same as `Objects::open_with(path, Options::default())`.
    pub fn open(path: impl AsRef<Path>) -> Result<Objects, Error> {
        Objects::open_with(path, Options::default())
    }

    /// Open the repository at `path` (a work tree, a `.git` directory, a bare repository or an objects
    /// directory) with `options` and read objects through a handle of it. A front end answering a batch as git
    /// does (`cat-file --batch`) passes `Options::default().incomplete(IncompleteMode::Miss)`: an index that
    /// cannot be read makes its objects absent (listed by [`Store::problems`]) instead of failing every miss.
    /// The store maps each pack's `.pack` with its index ([`Options::pack_data`] is set here), as git opens a pack
    /// at the lookup that finds an object in it: a pack renamed away after a lookup found an object in it is still
    /// read. ([`Objects::new`] on a store opened without it opens each `.pack` when it first reads it.)
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// # git(&["repack", "-adq"])?;
    /// use odb_index_gix::{IncompleteMode, ObjectId, Objects, Options};
    ///
    /// let pack_dir = repo.path().join(".git/objects/pack");
    /// std::fs::write(pack_dir.join("pack-1234.idx"), b"not an index")?;
    /// std::fs::write(pack_dir.join("pack-1234.pack"), b"PACK")?;
    /// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
    /// let strict = Objects::open(repo.path())?;
    /// assert!(strict.info(&absent).is_err()); // cannot claim absence
    /// let lenient = Objects::open_with(repo.path(), Options::default().incomplete(IncompleteMode::Miss))?;
    /// assert_eq!(lenient.info(&absent)?, None); // as git
    /// assert_eq!(lenient.store().problems().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with(path: impl AsRef<Path>, options: Options) -> Result<Objects, Error> {
        let options = options.pack_data(true);
        Ok(Objects::new(Store::open(path, options)?.handle()))
    }

    /// The store this reads.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// A new handle of the same store, for the store's own API: prefixes ([`Handle::lookup_prefix`],
    /// [`Handle::shortest_unique_len`]), iteration ([`Handle::objects_sorted`], [`Handle::for_each_object`]),
    /// counts. It is the caller's own (nothing here borrows it, so it can be held across any call of `Objects`);
    /// it shares the store's loaded indices, so making one is cheap (see [`Store::handle`]).
    pub fn handle(&self) -> Handle {
        self.store.handle()
    }

    /// Files found unusable since the last call, each once, whose objects were still answered by a fallback, as
    /// git does after a warning: a pack's `.rev` file that cannot be used (truncated, empty, another version,
    /// not a regular file, ...) is replaced by a reverse index built from the `.idx`. A front end prints them as
    /// warnings. (Index files the store could not load are [`Store::problems`].)
    pub fn take_problems(&self) -> Vec<Error> {
        std::mem::take(&mut self.problems.borrow_mut())
    }

    /// The repository's object format, as gix's crates name it (what `gix_object`'s parsers and
    /// `gix_hash::ObjectId::null` take); the store's own is [`Store::hash_kind`].
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q", "--object-format=sha256"]).current_dir(repo.path()).status()?;
    /// use odb_index_gix::{Objects, gix_hash};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// assert_eq!(objects.hash_kind(), gix_hash::Kind::Sha256);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hash_kind(&self) -> gix_hash::Kind {
        kind_to_gix(self.kind)
    }

    /// The repository's object format as the store names it.
    pub(crate) fn store_kind(&self) -> HashKind {
        self.kind
    }

    /// Drop the packs a refresh removed from the listing (their files are closed once no [`Place`] read uses
    /// them): checked with [`Store::is_pack_live`] only when [`Store::listing_version`] has moved.
    pub(crate) fn forget_dead_packs(&self) {
        let version = self.store.listing_version();
        if version != self.listing_seen.get() {
            self.listing_seen.set(version);
            let live = |&id: &PackId, _: &mut Arc<Pack>| self.store.is_pack_live(id);
            self.packs.borrow_mut().retain(live);
            self.shared.lock().retain(live);
        }
    }

    /// Whether the store was opened with [`IncompleteMode::Miss`]: what git answers `missing` is `None`.
    pub(crate) fn answers_missing(&self) -> bool {
        self.store.options().incomplete == IncompleteMode::Miss
    }
}

/// The packs the clones of one [`Objects`] have opened, by id.
#[derive(Default)]
pub(crate) struct SharedPacks(Mutex<HashMap<PackId, Arc<Pack>>>);

impl SharedPacks {
    /// The map. A clone that panicked while holding it left it whole (every change is one `insert` or `retain`),
    /// so a poisoned lock is taken as it is.
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PackId, Arc<Pack>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A `.pack` file's bytes for gix-pack: the mapping the store made with the pack's index
/// ([`Options::pack_data`](odb_index::Options::pack_data)), or one made when first read.
pub(crate) struct PackBytes(Arc<odb_index::data::Data>);

impl std::ops::Deref for PackBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// An opened pack: gix-pack's view of the data and the reverse index, made when first needed (the `.idx` is
/// the store's, reached through [`Handle::with_pack_index`]).
pub(crate) struct Pack {
    pub(crate) id: PackId,
    pub(crate) path: Arc<Path>,
    pub(crate) idx_path: PathBuf,
    pub(crate) kind: HashKind,
    /// The `.pack` as the store mapped it with the index ([`Handle::pack_data`]), if it did: read instead of the
    /// file at `path`, which may have been renamed away since (git reads a pack it opened at its lookup).
    pub(crate) mapped: Option<Arc<odb_index::data::Data>>,
    pub(crate) data: OnceLock<gix_pack::data::File<PackBytes>>,
    pub(crate) rev: OnceLock<Arc<RevIndex>>,
    /// The kinds of delta chains' bases met in this pack (`Objects::delta_header`, `read.rs`).
    pub(crate) base_kinds: OnceLock<crate::base_kinds::BaseKinds>,
}

impl Pack {
    /// The remembered chain base kinds of this pack (made the first time a delta's header is read).
    pub(crate) fn base_kinds(
        &self,
        data: &gix_pack::data::File<PackBytes>,
    ) -> &crate::base_kinds::BaseKinds {
        self.base_kinds
            .get_or_init(|| crate::base_kinds::BaseKinds::for_objects(data.num_objects()))
    }

    /// gix-pack's view of the `.pack` file: the store's mapping made with the index, else mapped on first use
    /// through [`odb_index::data::Data::open`] (a regular file only, opened without blocking).
    pub(crate) fn data(&self) -> Result<&gix_pack::data::File<PackBytes>, Error> {
        if let Some(d) = self.data.get() {
            return Ok(d);
        }
        let map = match &self.mapped {
            Some(m) => PackBytes(Arc::clone(m)),
            None => odb_index::data::Data::open(&self.path, odb_index::LoadMode::Mmap)
                .map(|d| PackBytes(Arc::new(d)))
                .map_err(|source| Error::Io {
                    path: self.path.to_path_buf(),
                    source,
                })?,
        };
        let mut data =
            gix_pack::data::File::from_data(map, self.path.to_path_buf(), kind_to_gix(self.kind))
                .map_err(|source| Error::PackOpen {
                path: self.path.to_path_buf(),
                source,
            })?;
        // The delta-base cache's key: the store's id, never a hash of the path (`base_cache.rs`).
        data.id = key_of(self.id).unwrap_or(u32::MAX);
        Ok(self.data.get_or_init(|| data))
    }

    pub(crate) fn entry(&self, offset: u64) -> Result<gix_pack::data::Entry, Error> {
        self.data()?
            .entry(offset)
            .map_err(|source| Error::PackEntry {
                path: self.path.to_path_buf(),
                offset,
                source,
            })
    }

    pub(crate) fn decode_error(&self, offset: u64) -> impl FnOnce(gix_error::Error) -> Error + '_ {
        move |source| Error::PackEntry {
            path: self.path.to_path_buf(),
            offset,
            source,
        }
    }
}
