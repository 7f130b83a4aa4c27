//! [`Objects`]: an odb-index [`Handle`] with the data behind each location, for gix's traits.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use gix_object::Kind;
use gix_pack::data::decode::{
    entry::ResolvedBase as EntryBase, header::ResolvedBase as HeaderBase,
};
use gix_pack::data::entry::Header as EntryHeader;
use odb_index::{
    Handle, HashKind, IncompleteMode, Location, ObjectId, Options, PackId, Prefix, PrefixLookup,
    Store,
};

use crate::Error;
use crate::answer::{Answer, Want};
use crate::convert::{AnyId, kind_to_gix, oid_from_gix};
use crate::loose::Loose;
use crate::prefix;
use crate::rev::RevIndex;

/// `Objects::info_many`, the batch path.
#[path = "batch.rs"]
mod batch;

/// Where an object's bytes are: what [`Objects::place`] turns a [`Location`] into.
///
/// ```
/// use odb_index_gix::{Objects, Place};
/// use std::process::Command;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let repo = tempfile::tempdir()?;
///     let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
///     git(&["init", "-q"])?;
///     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
///     git(&["hash-object", "-w", "hello.txt"])?; // a loose object
///
///     let objects = Objects::open(repo.path())?;
///     let place = objects.place(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<odb_index_gix::ObjectId>()?)?;
///     let Some(Place::Loose { path, .. }) = place else { panic!("git wrote it loose") };
///     assert!(path.ends_with("ce/013625030ba8dba906f756967f9e9ca394464a"));
///
///     git(&["add", "hello.txt"])?;
///     git(&["repack", "-adq"])?; // now packed
///     let place = objects.place(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<odb_index_gix::ObjectId>()?)?;
///     let Some(place @ Place::Packed { offset: 12, .. }) = place else { panic!("the first entry of a pack") };
///     assert!(place.pack_name().is_some_and(|n| n.starts_with("pack-")));
///     let mut data = Vec::new();
///     objects.read_at(&place, &mut data)?;
///     assert_eq!(data, b"hello\n");
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// An entry of a pack.
    Packed {
        /// The store's id of the pack.
        pack: PackId,
        /// The `.pack` file.
        path: Arc<Path>,
        /// The entry's offset in it.
        offset: u64,
    },
    /// A loose object file (`<objects dir>/xx/yyyy...`).
    Loose {
        /// The stable number of its objects directory ([`Location::Loose`]).
        dir: usize,
        /// The file.
        path: PathBuf,
    },
}

impl Place {
    /// The store's [`Location`] this place was made from.
    pub fn location(&self) -> Location {
        match self {
            Place::Packed { pack, offset, .. } => Location::Packed {
                pack: *pack,
                offset: *offset,
            },
            Place::Loose { dir, .. } => Location::Loose { dir: *dir },
        }
    }

    /// The `.pack` file name (`pack-<hash>.pack`) for a packed object, `None` for a loose one.
    pub fn pack_name(&self) -> Option<&str> {
        match self {
            Place::Packed { path, .. } => path.file_name().and_then(|n| n.to_str()),
            Place::Loose { .. } => None,
        }
    }
}

/// An object's id, type and size, and where it is: what [`Objects::info`], [`Objects::read`] and
/// [`Objects::read_by_name`] answer.
///
/// ```
/// use odb_index_gix::{Info, Objects, gix_object::Kind};
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let repo = tempfile::tempdir()?;
///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
///     git(&["init", "-q"])?;
///     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
///     git(&["hash-object", "-w", "hello.txt"])?;
///
///     let objects = Objects::open(repo.path())?;
///     let mut data = Vec::new();
///     let info: Info = objects.read_by_name("ce0136", &mut data)?.expect("git wrote it");
///     assert_eq!(info.id.to_string(), "ce013625030ba8dba906f756967f9e9ca394464a");
///     assert_eq!((info.kind, info.size), (Kind::Blob, 6));
///     assert_eq!(objects.info(&info.id)?, Some(info));
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The object's id (the full id, also when it was read by an abbreviated name).
    pub id: ObjectId,
    /// The object's type (the type at the end of a delta chain for a deltified entry).
    pub kind: Kind,
    /// The object's size in bytes, inflated and with deltas applied.
    pub size: u64,
    /// Where it is.
    pub place: Place,
}

/// An opened pack: gix-pack's view of the data and the reverse index, made when first needed (the `.idx` is
/// the store's, reached through [`Handle::with_pack_index`]).
struct Pack {
    id: PackId,
    path: Arc<Path>,
    idx_path: PathBuf,
    kind: HashKind,
    data: OnceLock<gix_pack::data::File<odb_index::data::Data>>,
    rev: OnceLock<Arc<RevIndex>>,
    /// The kinds of delta chains' bases met in this pack ([`Objects::delta_header`]).
    base_kinds: OnceLock<crate::base_kinds::BaseKinds>,
}

impl Pack {
    /// The remembered chain base kinds of this pack (made the first time a delta's header is read).
    fn base_kinds(
        &self,
        data: &gix_pack::data::File<odb_index::data::Data>,
    ) -> &crate::base_kinds::BaseKinds {
        self.base_kinds
            .get_or_init(|| crate::base_kinds::BaseKinds::for_objects(data.num_objects()))
    }

    /// gix-pack's view of the `.pack` file, mapped on first use through [`odb_index::data::Data::open`] (a
    /// regular file only, opened without blocking).
    fn data(&self) -> Result<&gix_pack::data::File<odb_index::data::Data>, Error> {
        if let Some(d) = self.data.get() {
            return Ok(d);
        }
        let map = odb_index::data::Data::open(&self.path, odb_index::LoadMode::Mmap).map_err(
            |source| Error::Io {
                path: self.path.to_path_buf(),
                source,
            },
        )?;
        let data =
            gix_pack::data::File::from_data(map, self.path.to_path_buf(), kind_to_gix(self.kind))
                .map_err(|source| Error::PackOpen {
                path: self.path.to_path_buf(),
                source,
            })?;
        Ok(self.data.get_or_init(|| data))
    }

    fn entry(&self, offset: u64) -> Result<gix_pack::data::Entry, Error> {
        self.data()?
            .entry(offset)
            .map_err(|source| Error::PackEntry {
                path: self.path.to_path_buf(),
                offset,
                source,
            })
    }

    fn decode_error(&self, offset: u64) -> impl FnOnce(gix_error::Error) -> Error + '_ {
        move |source| Error::PackEntry {
            path: self.path.to_path_buf(),
            offset,
            source,
        }
    }
}

/// gix-object's [`Find`](https://docs.rs/gix-object/0.66/gix_object/trait.Find.html) and [`FindHeader`](https://docs.rs/gix-object/0.66/gix_object/trait.FindHeader.html) on an odb-index [`Handle`].
///
/// Lookups go through the handle; packed data is decoded by gix-pack (each `.pack` opened on first use and kept
/// until the store no longer lists it; pack ids are never reused, so a cached pack is never mistaken for another),
/// loose objects are inflated with gix-zlib. Not `Sync` (the handle is one thread's); `Clone` gives another for
/// another thread (see its `clone`), or make one per thread from
/// [`Store::handle`].
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
    store: Arc<Store>,
    kind: HashKind,
    packs: RefCell<HashMap<PackId, Arc<Pack>>>,
    /// [`Store::listing_version`] when the cached packs were last checked with [`Store::is_pack_live`].
    listing_seen: Cell<u64>,
    inflate: RefCell<gix_zlib::Inflate>,
    /// The loose objects' decompressor (streaming: a loose file is never read whole).
    loose: RefCell<gix_zlib::Decompress>,
    /// Files that were unusable but had a fallback (a broken `.rev`), not yet taken by [`Objects::take_problems`].
    problems: RefCell<Vec<Error>>,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Objects")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// git's `MINIMUM_ABBREV`: an object name shorter than this is not an abbreviation.
const MIN_NAME_LEN: usize = 4;

impl Clone for Objects {
    /// Another reader of the same store, as gix-odb's `Handle` clones: it shares the store (an `Arc`) and the
    /// packs this one has opened (their maps are immutable, shared by `Arc`), and has its own store
    /// [`Handle`], decompressors and [`Objects::take_problems`] list, so that each clone can move to its own
    /// thread.
    fn clone(&self) -> Objects {
        let clone = Objects::new(self.store.handle());
        clone.packs.replace(self.packs.borrow().clone());
        clone.listing_seen.set(self.listing_seen.get());
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
            inflate: RefCell::new(gix_zlib::Inflate::default()),
            loose: RefCell::new(gix_zlib::Decompress::new()),
            problems: RefCell::new(Vec::new()),
        }
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

    /// The repository's object format.
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// What an object name given as hex means, as `git cat-file` reads it: [`Objects::lookup_name`] in the
    /// shape of the store's [`PrefixLookup`], with a name that is not one ([`Error::BadName`]) answered
    /// [`PrefixLookup::NotFound`] (git's `missing`).
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// # git(&["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "one"])?;
    /// # let commit = String::from_utf8(git(&["rev-parse", "HEAD"])?.stdout)?;
    /// use odb_index_gix::{Objects, PrefixLookup};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let commit = commit.trim();
    /// assert_eq!(objects.resolve(&commit[..12])?, PrefixLookup::Unique(commit.parse()?));
    /// assert_eq!(objects.resolve(commit)?, PrefixLookup::Unique(commit.parse()?));
    /// assert_eq!(objects.resolve("123")?, PrefixLookup::NotFound); // too short
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(&self, hex: &str) -> Result<PrefixLookup, Error> {
        match self.lookup_name(hex) {
            Ok(Some(id)) => Ok(PrefixLookup::Unique(id)),
            Ok(None) | Err(Error::BadName { .. }) => Ok(PrefixLookup::NotFound),
            Err(Error::AmbiguousName { .. }) => Ok(PrefixLookup::Ambiguous),
            Err(e) => Err(e),
        }
    }

    /// The object an object name names, by git's rules for a hex name (`get_oid` on hex digits, any case): a
    /// full-length id names itself if the repository has it; 4 or more digits are an abbreviation, naming the
    /// one object whose id starts with them. `Ok(None)`: no such object (git's `missing`). Errors:
    /// [`Error::AmbiguousName`] (several objects start so; it lists them, as git does) and [`Error::BadName`]
    /// (fewer than 4 digits, more than the hash's length, not hex). This is the one place these rules live:
    /// [`Objects::read_by_name`], [`Objects::resolve`] and the `odb-index` command use it.
    ///
    /// ```
    /// use odb_index_gix::{Error, Objects};
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let repo = tempfile::tempdir()?;
    ///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    ///     git(&["init", "-q"])?;
    ///     // Two blobs whose ids both start with 6bb2: 6bb2f98f... ("195") and 6bb2f4ee... ("389").
    ///     for text in ["195\n", "389\n"] {
    ///         std::fs::write(repo.path().join("f"), text)?;
    ///         git(&["hash-object", "-w", "f"])?;
    ///     }
    ///     let objects = Objects::open(repo.path())?;
    ///     let id = objects.lookup_name("6BB2F9")?.expect("one object starts with 6bb2f9");
    ///     assert_eq!(id.to_string(), "6bb2f98fb0227744dff2c9023c2a8d53cc721588");
    ///     assert_eq!(objects.lookup_name(&id.to_string())?, Some(id));
    ///     assert_eq!(objects.lookup_name("0000")?, None);
    ///     match objects.lookup_name("6bb2") {
    ///         Err(Error::AmbiguousName { candidates, .. }) => assert_eq!(candidates.len(), 2),
    ///         other => panic!("{other:?}"),
    ///     }
    ///     match objects.lookup_name("6bb") {
    ///         Err(Error::BadName { .. }) => {} // fewer than 4 digits
    ///         other => panic!("{other:?}"),
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn lookup_name(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        let bad = |reason| {
            Err(Error::BadName {
                name: name.to_owned(),
                reason,
            })
        };
        if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return bad("not hex digits");
        }
        if name.len() == self.kind.hex_len() {
            let id = ObjectId::from_hex_kind(name.as_bytes(), self.kind)?;
            return Ok(self.handle.borrow_mut().contains(&id)?.then_some(id));
        }
        let prefix = match Prefix::from_hex(name, self.kind) {
            Ok(prefix) => prefix,
            Err(_) if name.len() < MIN_NAME_LEN => return bad("fewer than 4 hex digits"),
            Err(_) => return bad("longer than an object id"),
        };
        // The borrow ends before anything below.
        let found = self.handle.borrow_mut().lookup_prefix(&prefix)?;
        match found {
            PrefixLookup::Unique(id) => Ok(Some(id)),
            PrefixLookup::NotFound => Ok(None),
            PrefixLookup::Ambiguous => {
                let candidates = self.handle.borrow_mut().prefix_candidates(&prefix)?;
                Err(Error::AmbiguousName {
                    name: name.to_owned(),
                    candidates,
                })
            }
        }
    }

    /// Read the object named `name` (hex, full or abbreviated: [`Objects::lookup_name`]'s rules) into `out`, as
    /// [`Objects::read`] does; [`Info::id`] is its full id. A full id costs one lookup, an abbreviation two (the
    /// prefix, then the object). `Ok(None)`: no such object (git's `missing`); [`Error::AmbiguousName`] and
    /// [`Error::BadName`] as [`Objects::lookup_name`].
    ///
    /// ```
    /// use odb_index_gix::{Objects, gix_object::Kind};
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let repo = tempfile::tempdir()?;
    ///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    ///     git(&["init", "-q"])?;
    ///     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    ///     git(&["hash-object", "-w", "hello.txt"])?;
    ///
    ///     let objects = Objects::open(repo.path())?;
    ///     let mut data = Vec::new();
    ///     let info = objects.read_by_name("ce01362", &mut data)?.expect("present");
    ///     assert_eq!((info.kind, &data[..]), (Kind::Blob, &b"hello\n"[..]));
    ///     assert_eq!(objects.read_by_name(&info.id.to_string(), &mut data)?, Some(info));
    ///     assert_eq!(objects.read_by_name("0123456", &mut data)?, None);
    ///     Ok(())
    /// }
    /// ```
    pub fn read_by_name(&self, name: &str, out: &mut Vec<u8>) -> Result<Option<Info>, Error> {
        if name.len() == self.kind.hex_len() && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            // A full id: read it at once (one lookup).
            return self.read(&ObjectId::from_hex_kind(name.as_bytes(), self.kind)?, out);
        }
        match self.lookup_name(name)? {
            Some(id) => self.read(&id, out),
            None => Ok(None),
        }
    }

    /// Where `id` is, as a path and offset, or `None` if the repository does not have it (an id of the other
    /// hash kind is not there either). The `.pack` file of a packed object is opened now: a pack that
    /// disappeared between the lookup and its opening (a repack) is looked for again: [`Objects::answer`] asked
    /// for nothing but the place.
    pub fn place(&self, id: &(impl AnyId + ?Sized)) -> Result<Option<Place>, Error> {
        Ok(self
            .answer(id, Want::default(), &mut Vec::new())?
            .map(|a| a.place))
    }

    /// Where `id` is now, after reading it at `gone` (a place [`Objects::place`] answered for it) found the file
    /// missing: git moved the object and removed the file in between (`repack -d` packs loose objects and
    /// prunes them; `repack -a -d` replaces packs). The store lists the repository again
    /// ([`Handle::locate_again`]) and answers from what is there, as git does when a read fails; `None` if the
    /// object is gone. [`Objects::info`], [`Objects::read`] and the `gix_object` traits call it themselves;
    /// a caller reading a [`Place`] with [`Objects::header_at`] or [`Objects::read_at`] calls it when
    /// [`Error::is_gone`] says so, and reads what it answers ([`Objects::answer_at`] is that loop, bounded, with
    /// the fallback to another copy: prefer it).
    pub fn place_again(
        &self,
        id: &(impl AnyId + ?Sized),
        gone: &Place,
    ) -> Result<Option<Place>, Error> {
        let id = &id.to_object_id();
        let loc = self.handle.borrow_mut().locate_again(id, gone.location())?;
        self.forget_dead_packs();
        let Some(loc) = loc else { return Ok(None) };
        let place = self.place_at(id, loc)?;
        self.open_pack_of(&place)?;
        Ok(Some(place))
    }

    /// Open the `.pack` file of a packed place (so that a pack a repack removed is noticed before its bytes are
    /// needed); nothing for a loose one.
    pub(crate) fn open_pack_of(&self, place: &Place) -> Result<(), Error> {
        match place {
            Place::Packed { pack, .. } => self.pack(*pack)?.data().map(|_| ()),
            Place::Loose { .. } => Ok(()),
        }
    }

    /// The [`Place`] of a [`Location`] the store gave for `id` (from [`Handle::locate`] or the iteration of
    /// [`Handle::for_each_object`]): the `.pack` file's path ([`Handle::pack`]) or the loose file's
    /// ([`Handle::loose_path`]). Nothing is opened; [`odb_index::Error::StalePack`] if the pack is gone.
    pub fn place_at(&self, id: &(impl AnyId + ?Sized), loc: Location) -> Result<Place, Error> {
        let id = &id.to_object_id();
        match loc {
            Location::Packed { pack, offset } => Ok(Place::Packed {
                pack,
                path: Arc::clone(&self.pack(pack)?.path),
                offset,
            }),
            Location::Loose { dir } => match self.handle.borrow().loose_path(dir, id) {
                Some(path) => Ok(Place::Loose { dir, path }),
                // Not a number this store gave (it never renumbers): a bug, reported as a missing file.
                None => Err(Error::Io {
                    path: self.store.objects_dir().to_owned(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("no objects directory numbered {dir}"),
                    ),
                }),
            },
        }
    }

    /// Drop the packs a refresh removed from the listing (their files are closed once no [`Place`] read uses
    /// them): checked with [`Store::is_pack_live`] only when [`Store::listing_version`] has moved.
    pub(crate) fn forget_dead_packs(&self) {
        let version = self.store.listing_version();
        if version != self.listing_seen.get() {
            self.listing_seen.set(version);
            self.packs
                .borrow_mut()
                .retain(|&id, _| self.store.is_pack_live(id));
        }
    }

    /// Type and size of `id` from headers only (a deltified entry's type from the end of its chain, its size
    /// from the delta's header), and where it is; `None` if absent. [`Objects::answer`] with [`Want::HEADER`].
    pub fn info(&self, id: &(impl AnyId + ?Sized)) -> Result<Option<Info>, Error> {
        self.info_of(self.answer(id, Want::HEADER, &mut Vec::new()))
    }

    /// The [`Info`] of an answer with a type and size; `None` for a file that is not a loose object under
    /// [`IncompleteMode::Miss`] (git's `missing`).
    pub(crate) fn info_of(
        &self,
        answer: Result<Option<Answer>, Error>,
    ) -> Result<Option<Info>, Error> {
        match answer {
            Err(e) if e.is_not_a_loose_object() && self.answers_missing() => Ok(None),
            found => Ok(found?.map(|a| Info {
                id: a.id,
                kind: a.kind.expect("asked for"),
                size: a.size.expect("asked for"),
                place: a.place,
            })),
        }
    }

    /// Whether the store was opened with [`IncompleteMode::Miss`]: what git answers `missing` is `None`.
    fn answers_missing(&self) -> bool {
        self.store.options().incomplete == IncompleteMode::Miss
    }

    /// Open the loose object at `path`; a file that is not one ([`Error::is_not_a_loose_object`]) is reported in
    /// [`Store::problems`] under [`IncompleteMode::Miss`].
    fn open_loose(&self, path: &Path, z: &mut gix_zlib::Decompress) -> Result<Loose, Error> {
        Loose::open(path, z).inspect_err(|e| {
            // A file gone since the lookup (nothing at its path) is no problem of the repository: the object is
            // looked for again. A dangling symbolic link is one.
            let gone = e.is_gone() && std::fs::symlink_metadata(path).is_err();
            if e.is_not_a_loose_object() && self.answers_missing() && !gone {
                let reason = match e {
                    Error::LooseCorrupt { reason, .. } => reason.clone(),
                    Error::LooseUnreadable { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                self.store.report_unreadable_loose(path.to_owned(), reason);
            }
        })
    }

    /// Type and size of the object at `place`, from headers only.
    pub fn header_at(&self, place: &Place) -> Result<(Kind, u64), Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let entry = p.entry(*offset)?;
                if let Some(found) = self.delta_header(&p, &entry) {
                    return Ok(found);
                }
                let resolve = |base: &gix_hash::oid| -> gix_error::Result<Option<HeaderBase>> {
                    Ok(self.base_in(&p, base)?.map(HeaderBase::InPack))
                };
                let mut inflate = self.inflate.borrow_mut();
                let out = p
                    .data()?
                    .decode_header(entry, &mut inflate, &resolve)
                    .map_err(p.decode_error(*offset))?;
                Ok((out.kind, out.object_size))
            }
            Place::Loose { path, .. } => {
                let loose = self.open_loose(path, &mut self.loose.borrow_mut())?;
                Ok((loose.kind, loose.size))
            }
        }
    }

    /// A delta entry's type and size as gix-pack's `decode_header` gives them, without its inflating through
    /// zlib's decoding tables: the result size from the delta's first bytes ([`prefix::first_bytes`]), the type
    /// from the chain's base, reached header by header. `None` wherever `decode_header` must decide (not a delta;
    /// a stream `first_bytes` leaves to zlib; a base that is not reached in [`MAX_CHAIN`] steps, or not at all),
    /// so that every answer and error stays gix-pack's: this only saves the tables' cost (docs/BENCHMARKS.md,
    /// "Batches").
    fn delta_header(&self, p: &Pack, entry: &gix_pack::data::Entry) -> Option<(Kind, u64)> {
        if !entry.header.is_delta() || entry.decompressed_size <= prefix::LEN as u64 {
            return None;
        }
        let data = p.data().ok()?;
        let input = data.entry_slice(entry.data_offset..data.data_len() as u64)?;
        let bytes = prefix::first_bytes(input)?;
        let (_base_size, used) = delta_size(&bytes)?;
        let (size, _) = delta_size(&bytes[used..])?;
        // The chain's base kind, from the entries this walk goes through: the first one a walk before has
        // recorded ends it; the kind found is recorded for the first `WALKED` of them.
        let kinds = p.base_kinds(data);
        let mut walked = [0u64; WALKED];
        let mut n = 0;
        let mut e = entry.clone();
        for _ in 0..MAX_CHAIN {
            if let Some(kind) = kinds.get(e.pack_offset()) {
                return Some((remember(kinds, &walked[..n], kind), size));
            }
            if n < WALKED {
                walked[n] = e.pack_offset();
                n += 1;
            }
            e = match e.header {
                EntryHeader::OfsDelta { base_distance } => {
                    let base = e.checked_base_pack_offset(base_distance)?;
                    if let Some(kind) = kinds.get(base) {
                        return Some((remember(kinds, &walked[..n], kind), size));
                    }
                    data.entry(base).ok()?
                }
                EntryHeader::RefDelta { base_id } => self.base_in(p, &base_id).ok()??,
                whole => return Some((remember(kinds, &walked[..n], whole.as_kind()?), size)),
            };
        }
        None
    }

    /// The object's size on disk, as git's `%(objectsize:disk)`: for a pack entry, the bytes up to the next
    /// entry in pack order (from the pack's `.rev` file if git wrote one, else from the `.idx`); for a loose
    /// object, the file's size.
    pub fn disk_size(&self, place: &Place) -> Result<u64, Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let rev = self.rev(&p)?;
                let end = (p.data()?.data_len().saturating_sub(self.kind.len())) as u64;
                self.with_index(&p, |idx| rev.disk_size(idx, *offset, end))?
                    .ok_or_else(|| Error::Index {
                        path: p.idx_path.clone(),
                        reason: format!("no entry at pack offset {offset}"),
                    })
            }
            Place::Loose { path, .. } => odb_index::data::open_regular(path)
                .map(|(_, md)| md)
                .map(|m| m.len())
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                }),
        }
    }

    /// The delta base of the entry at `place`, as git's `%(deltabase)`: the id a REF_DELTA names, the id of the
    /// entry an OFS_DELTA points to (found with the reverse index), `None` for a whole object or a loose one.
    pub fn delta_base(&self, place: &Place) -> Result<Option<ObjectId>, Error> {
        let Place::Packed { pack, offset, .. } = place else {
            return Ok(None);
        };
        let p = self.pack(*pack)?;
        let entry = p.entry(*offset)?;
        match entry.header {
            EntryHeader::RefDelta { base_id } => Ok(Some(oid_from_gix(&base_id))),
            EntryHeader::OfsDelta { base_distance } => {
                let bad = || Error::Index {
                    path: p.idx_path.clone(),
                    reason: format!("the OFS_DELTA at offset {offset} points to no entry"),
                };
                let base = entry
                    .checked_base_pack_offset(base_distance)
                    .ok_or_else(bad)?;
                let rev = self.rev(&p)?;
                let id = self.with_index(&p, |idx| {
                    let i = rev.index_position(idx, base)?;
                    idx.id_at(i).and_then(ObjectId::from_bytes)
                })?;
                id.ok_or_else(bad).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Read object `id` into `out`: one lookup, then one read of the entry (its header read once), inflated
    /// and with deltas applied. `out` is cleared first: on success it holds exactly the object's bytes
    /// (`out.len()` is [`Info::size`]), and on `Ok(None)` (absent; an id of the other hash kind is absent too)
    /// or an error its contents are unspecified. Its capacity is reused, so one buffer serves a whole batch.
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// use odb_index_gix::{ObjectId, Objects, gix_object::Kind};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let id: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?; // hello.txt
    /// let mut buf = b"left over from before".to_vec();
    /// let info = objects.read(&id, &mut buf)?.expect("present");
    /// assert_eq!((info.kind, info.size, &buf[..]), (Kind::Blob, 6, &b"hello\n"[..]));
    /// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
    /// assert_eq!(objects.read(&absent, &mut buf)?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(
        &self,
        id: &(impl AnyId + ?Sized),
        out: &mut Vec<u8>,
    ) -> Result<Option<Info>, Error> {
        self.info_of(self.answer(id, Want::CONTENTS, out))
    }

    /// Read the object at `place` into `out` (inflated, deltas applied; `out` is cleared first and holds exactly
    /// the object's bytes on success); returns its type.
    pub fn read_at(&self, place: &Place, out: &mut Vec<u8>) -> Result<Kind, Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let entry = p.entry(*offset)?;
                let resolve = |base: &gix_hash::oid,
                               _: &mut Vec<u8>|
                 -> gix_error::Result<Option<EntryBase>> {
                    Ok(self.base_in(&p, base)?.map(EntryBase::InPack))
                };
                let mut inflate = self.inflate.borrow_mut();
                let outcome = p
                    .data()?
                    .decode_entry(
                        entry,
                        out,
                        &mut inflate,
                        &resolve,
                        &mut gix_pack::cache::Never,
                    )
                    .map_err(p.decode_error(*offset))?;
                Ok(outcome.kind)
            }
            Place::Loose { path, .. } => {
                let mut z = self.loose.borrow_mut();
                let loose = self.open_loose(path, &mut z)?;
                let kind = loose.kind;
                loose.read_into(&mut z, out)?;
                Ok(kind)
            }
        }
    }

    /// The pack `id` (its files are opened when first needed).
    fn pack(&self, id: PackId) -> Result<Arc<Pack>, Error> {
        if let Some(p) = self.packs.borrow().get(&id) {
            return Ok(Arc::clone(p));
        }
        let info = self.handle.borrow().pack(id)?;
        let pack = Arc::new(Pack {
            id,
            path: info.pack_path.into(),
            idx_path: info.idx_path,
            kind: self.kind,
            data: OnceLock::new(),
            rev: OnceLock::new(),
            base_kinds: OnceLock::new(),
        });
        self.packs.borrow_mut().insert(id, Arc::clone(&pack));
        Ok(pack)
    }

    /// `f` on the store's `.idx` of `pack` (the handle borrowed for the call only).
    fn with_index<R>(
        &self,
        pack: &Pack,
        f: impl FnOnce(&odb_index::idx::PackIndex) -> R,
    ) -> Result<R, Error> {
        Ok(self.handle.borrow_mut().with_pack_index(pack.id, f)?)
    }

    /// The reverse index of `pack`, made on first need: from its `.rev` file, or (none, or one that cannot be
    /// used: reported once through [`Objects::take_problems`]) from the `.idx`'s offsets.
    fn rev(&self, pack: &Pack) -> Result<Arc<RevIndex>, Error> {
        if let Some(r) = pack.rev.get() {
            return Ok(Arc::clone(r));
        }
        let rev_path = pack.path.with_extension("rev");
        let (rev, problem) =
            self.with_index(pack, |idx| RevIndex::open(idx, &rev_path, self.kind))?;
        self.problems.borrow_mut().extend(problem);
        Ok(Arc::clone(pack.rev.get_or_init(|| Arc::new(rev))))
    }

    /// The entry of a REF_DELTA's `base` if it is in the same pack (git's `find_pack_entry_one`), for gix-pack's
    /// resolver: the handle is borrowed for the lookup only, released before gix-pack decodes (and may call
    /// back).
    fn base_in(
        &self,
        pack: &Pack,
        base: &gix_hash::oid,
    ) -> gix_error::Result<Option<gix_pack::data::Entry>> {
        let offset = self
            .handle
            .borrow_mut()
            .locate_in_pack(pack.id, &oid_from_gix(base))
            .map_err(|e| gix_error::Error::from_error(Error::from(e)))?;
        offset
            .map(|o| pack.entry(o))
            .transpose()
            .map_err(gix_error::Error::from_error)
    }
}

impl gix_object::Find for Objects {
    fn try_find<'a>(
        &self,
        id: &gix_hash::oid,
        buffer: &'a mut Vec<u8>,
    ) -> gix_error::Result<Option<gix_object::Data<'a>>> {
        let id = oid_from_gix(id);
        let Some(answer) = self
            .answer(&id, Want::CONTENTS, buffer)
            .map_err(gix_error::Error::from_error)?
        else {
            return Ok(None);
        };
        Ok(Some(gix_object::Data {
            kind: answer.kind.expect("asked for"),
            object_hash: kind_to_gix(self.kind),
            data: buffer,
        }))
    }
}

impl gix_object::FindHeader for Objects {
    fn try_header(&self, id: &gix_hash::oid) -> gix_error::Result<Option<gix_object::Header>> {
        Ok(self
            .info(&oid_from_gix(id))
            .map_err(gix_error::Error::from_error)?
            .map(|i| gix_object::Header {
                kind: i.kind,
                size: i.size,
            }))
    }
}

impl gix_object::Exists for Objects {
    fn exists(&self, id: &gix_hash::oid) -> bool {
        matches!(self.place(&oid_from_gix(id)), Ok(Some(_)))
    }
}

/// How many delta links [`Objects::delta_header`] follows before it leaves the chain to gix-pack (git writes
/// chains of at most 4 095).
const MAX_CHAIN: usize = 10_000;

/// The entries of a chain walk whose base kind [`Objects::delta_header`] records (the nearest to the object
/// read: those the next reads of the same history meet first).
const WALKED: usize = 32;

/// Record `kind` as the chain base kind of the entries at `offsets`; returns it.
fn remember(kinds: &crate::base_kinds::BaseKinds, offsets: &[u64], kind: Kind) -> Kind {
    for &o in offsets {
        kinds.put(o, kind);
    }
    kind
}

/// A size varint of a delta's header and how many bytes it took, as gix-pack's `delta::decode_header_size`
/// reads it (`None` where that errs: more than 64 bits, or cut short).
fn delta_size(d: &[u8]) -> Option<(u64, usize)> {
    let (mut shift, mut size) = (0u32, 0u64);
    for (i, &b) in d.iter().enumerate() {
        if shift >= u64::BITS {
            return None;
        }
        size |= (u64::from(b) & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some((size, i + 1));
        }
    }
    None
}
