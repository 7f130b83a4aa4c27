//! How a [`Store`](super::Store) is opened: [`Options`] and the modes it is made of.

use crate::oid::HashKind;

pub use crate::load_mode::LoadMode;

/// How a store consults loose objects.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a, loose
/// use odb_index::{LooseMode, ObjectId, Options, Store};
///
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?; // a loose object
/// let packs_only = Store::open(repo.path(), Options::default().loose(LooseMode::None))?;
/// assert!(!packs_only.handle().contains(&hello)?);
/// let probing = Store::open(repo.path(), Options::default().loose(LooseMode::Probe))?;
/// assert!(probing.handle().contains(&hello)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LooseMode {
    /// Answer from per-fan-out-directory listings that change events keep current (Linux inotify, on a local
    /// file system): each handle probes a fan-out directory (`xx/`) the first time a lookup needs it (one
    /// `fstatat`: a single lookup needs no more), lists it the second time and again only after an event in
    /// that directory, so a lookup makes no system call of its own, and an object
    /// written before the lookup began is always seen. Where events are not available (another OS, a network
    /// file system, a watch limit reached, a queue overflow that cannot be recovered) it is [`Probe`](Self::Probe).
    /// The listings are the handle's own (about 32 bytes per loose object per handle).
    #[default]
    Watched,
    /// Probe the file system on every lookup that reaches the loose objects
    /// (`LooseDb::contains`): one `fstatat`, no allocation, always current.
    Probe,
    /// Answer from a per-fan-out-directory listing read once and kept until refreshed
    /// (`LooseCache`): no system call per lookup after warm-up, but stale for objects
    /// written or deleted after the listing.
    Cached,
    /// Do not look at loose objects at all (for callers that know everything is packed).
    None,
}

/// When the store re-reads the pack directories.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{ObjectId, Options, RefreshMode, Store};
///
/// let never = Store::open(repo.path(), Options::default().refresh(RefreshMode::Never))?;
/// let on_miss = Store::open(repo.path(), Options::default())?; // RefreshMode::OnMiss
/// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
/// assert!(!never.handle().contains(&absent)? && !on_miss.handle().contains(&absent)?);
///
/// // git packs a new object (and removes its loose copy) after both stores listed the packs.
/// std::fs::write(repo.path().join("new.txt"), "new\n")?;
/// git(&["add", "new.txt"])?;
/// git(&["repack", "-adq"])?;
/// let new: ObjectId = "3e757656cf36eca53338e520d134963a44f793f8".parse()?;
/// assert!(on_miss.handle().contains(&new)?); // the miss looked at the pack directory again
/// assert!(!never.handle().contains(&new)?); // until told
/// never.refresh()?;
/// assert!(never.handle().contains(&new)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RefreshMode {
    /// After a miss in packs and loose objects, check whether a pack directory changed; if one did, list again
    /// and search the packs again (git's behaviour). Where change events are available (Linux inotify, on a
    /// local file system) the check is one `ioctl` on the store's inotify descriptor whatever the number of
    /// objects directories; elsewhere it is one `stat` per pack directory (and a directory whose timestamp was
    /// too recent to trust when it was listed is listed again).
    #[default]
    OnMiss,
    /// Never look at the directories again unless [`Store::refresh`](super::Store::refresh) is called. A
    /// steady-state miss then costs no system call except the loose probe.
    ///
    /// What this gives up (git always re-reads the pack directory on a miss): an object packed after the store
    /// listed the packs, then pruned from the loose objects (`git repack -d`, `gc`, `maintenance`), is reported
    /// missing until the next refresh; so is every object of a pack that was deleted and replaced (`repack -a`)
    /// and not yet loaded. Prefix lookups and iteration (which refresh like [`OnMiss`](Self::OnMiss) otherwise)
    /// do not refresh either. Use it for a repository nothing repacks while the store is open, or call
    /// [`Store::refresh`](super::Store::refresh) after maintenance.
    Never,
}

/// What a lookup does once its pack search missed in a settled map (the steady path: `store/lookup/steady.rs`), chosen
/// once when a handle is made ([`MissShape::of`]) from [`RefreshMode`] and [`LooseMode`]: one value to branch on,
/// with no shape that no options make. Each shape keeps git's order (packs, loose, then the pack directories
/// again) and F5 (docs/FRESHNESS.md, section 2): a change check that decides a miss comes after that miss's loose
/// step, unless the loose step reads no file ([`check_first`](Self::check_first)).
///
/// Each shape's discriminant is the set of its properties (`LOOSE`, `REFRESH`, `WATCH`, `FIRST`), so that asking
/// one is a bit test: the steady path's branches cost what one `bool` each did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum MissShape {
    /// [`RefreshMode::Never`] and [`LooseMode::None`]: the miss is final.
    Final = 0,
    /// [`RefreshMode::Never`], [`LooseMode::Probe`] or [`LooseMode::Cached`]: the loose probe, nothing after it.
    Probe = LOOSE,
    /// [`RefreshMode::OnMiss`] and [`LooseMode::None`]: the change check is the whole miss.
    Check = WATCH | REFRESH | FIRST,
    /// [`RefreshMode::OnMiss`], [`LooseMode::Probe`] or [`LooseMode::Cached`]: the loose probe (it reads the file
    /// system), then the change check.
    ProbeThenCheck = LOOSE | WATCH | REFRESH,
    /// [`RefreshMode::OnMiss`] and [`LooseMode::Watched`]: the change check first (it vouches for the watched
    /// listings, which read no file), then the listings; a change re-lists the packs.
    Watched = LOOSE | WATCH | REFRESH | FIRST,
    /// [`RefreshMode::Never`] and [`LooseMode::Watched`]: as [`Watched`](Self::Watched), the packs never re-listed.
    WatchedNoRefresh = LOOSE | WATCH | FIRST,
}

/// [`MissShape`]: loose objects are searched.
const LOOSE: u8 = 1;
/// [`MissShape`]: a miss re-lists the pack directories when they changed.
const REFRESH: u8 = 2;
/// [`MissShape`]: misses ask the listing's change detector.
const WATCH: u8 = 4;
/// [`MissShape`]: the change check comes before the loose step.
const FIRST: u8 = 8;

impl MissShape {
    /// The shape `options` make.
    pub(super) fn of(options: &Options) -> MissShape {
        let refresh = options.refresh == RefreshMode::OnMiss;
        match (refresh, options.loose) {
            (false, LooseMode::None) => MissShape::Final,
            (false, LooseMode::Probe | LooseMode::Cached) => MissShape::Probe,
            (false, LooseMode::Watched) => MissShape::WatchedNoRefresh,
            (true, LooseMode::None) => MissShape::Check,
            (true, LooseMode::Probe | LooseMode::Cached) => MissShape::ProbeThenCheck,
            (true, LooseMode::Watched) => MissShape::Watched,
        }
    }

    #[inline(always)]
    fn has(self, property: u8) -> bool {
        self as u8 & property != 0
    }

    /// Loose objects are searched ([`LooseMode`] is not `None`).
    #[inline(always)]
    pub(super) fn loose_on(self) -> bool {
        self.has(LOOSE)
    }

    /// A miss re-lists the pack directories when they changed ([`RefreshMode::OnMiss`]).
    #[inline(always)]
    pub(super) fn refresh_on_miss(self) -> bool {
        self.has(REFRESH)
    }

    /// Misses ask the listing's change detector (a refresh check, or watched loose listings).
    #[inline(always)]
    pub(super) fn watching(self) -> bool {
        self.has(WATCH)
    }

    /// The change check comes before the loose step, which reads no file (watched listings, as of the last drain,
    /// or no loose objects); in every other watching shape the loose probe comes first and the check after it.
    #[inline(always)]
    pub(super) fn check_first(self) -> bool {
        self.has(FIRST)
    }
}

/// When a store builds its miss filter (see [`Store::miss_filter`](super::Store::miss_filter)).
///
/// The filter is a split-block Bloom filter (1.5 bytes per id) over the ids of the loaded packs; a miss that it
/// answers skips their index searches. It is built once per pack listing, by a lookup that misses after every
/// index is loaded, and shared by all handles.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{MissFilterMode, ObjectId, Options, Store};
///
/// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
/// let off = Store::open(repo.path(), Options::default().miss_filter(MissFilterMode::Off))?;
/// assert!(!off.handle().contains(&absent)?);
/// assert!(off.miss_filter().is_none());
/// let eager = Store::open(repo.path(), Options::default().miss_filter(MissFilterMode::Eager))?;
/// let mut handle = eager.handle();
/// for _ in 0..2 {
///     assert!(!handle.contains(&absent)?); // a miss that finds every index loaded builds it
/// }
/// assert!(eager.miss_filter().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissFilterMode {
    /// Build it once one handle has missed (after every index was loaded) as many times as 1/16 of the ids it
    /// would hold: a store that answers a few lookups never pays for it.
    #[default]
    Auto,
    /// Build it at the first miss that finds every index loaded.
    Eager,
    /// Never build one: every miss searches every index.
    Off,
}

/// What a lookup answers when the object is found nowhere but some index file could not be loaded (a corrupt
/// or unreadable `.idx`), so the object might be in the pack it describes.
///
/// Either way the file is reported once, typed, by [`Store::problems`](super::Store::problems) (after a lookup
/// has tried to load it, or after [`Handle::load_indices`](super::Handle::load_indices)), and every lookup of an
/// object found elsewhere answers normally.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{IncompleteMode, ObjectId, Options, Store};
///
/// // An index git would not write: its objects cannot be known.
/// let pack_dir = repo.path().join(".git/objects/pack");
/// std::fs::write(pack_dir.join("pack-1234.idx"), b"not an index")?;
/// std::fs::write(pack_dir.join("pack-1234.pack"), b"PACK")?;
/// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
/// let strict = Store::open(repo.path(), Options::default())?; // IncompleteMode::Error
/// assert!(strict.handle().contains(&absent).is_err()); // cannot claim absence
/// let lenient = Store::open(repo.path(), Options::default().incomplete(IncompleteMode::Miss))?;
/// assert!(!lenient.handle().contains(&absent)?); // as git: absent, and a problem to report
/// assert_eq!(lenient.problems().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IncompleteMode {
    /// A miss is [`Error::Incomplete`](crate::Error::Incomplete), naming the files: "missing" is never claimed
    /// when it cannot be known. For callers that act on absence (write, fetch, prune).
    #[default]
    Error,
    /// A miss is `Ok(None)`, as git answers (it warns about the file once and treats its pack as absent): for
    /// front ends that answer many lookups in a batch and report repository problems separately
    /// (`cat-file --batch-check`), which a `?` on every lookup would otherwise stop.
    Miss,
}

/// How far a [`Store`](super::Store) trusts the locations a multi-pack-index gives.
///
/// A multi-pack-index exists so that a lookup searches one file instead of every pack's `.idx`. Both modes check
/// every location it gives against its pack (a pack id the file names, an offset inside that pack and past its
/// header, a large offset the file has), and a lookup whose entry fails those checks searches the `.idx` files
/// of the packs it covers instead. An entry that passes them but still lies (an offset off by one, two packs'
/// ids swapped: a file that is consistent but wrong, which `git multi-pack-index verify` and
/// [`MultiPackIndex::verify_with_packs`](crate::midx::MultiPackIndex::verify_with_packs) report, and git's lookup
/// answers as written) is caught only by [`MidxCheck::PackIndex`]. In both modes a miss is confirmed against the
/// order of the file's ids (each fanout bucket checked once), so ids out of order cannot hide an object.
///
/// ```
/// # use std::process::Command;
/// # let tmp = tempfile::tempdir()?;
/// # let git = |args: &[&str], input: Option<&str>| -> std::io::Result<()> {
/// #     let mut c = Command::new("git");
/// #     c.args(args).current_dir(tmp.path()).env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1");
/// #     c.stdin(std::process::Stdio::piped());
/// #     let mut child = c.spawn()?;
/// #     use std::io::Write;
/// #     child.stdin.take().unwrap().write_all(input.unwrap_or("").as_bytes())?;
/// #     assert!(child.wait()?.success());
/// #     Ok(())
/// # };
/// # git(&["init", "-q", "--bare", "."], None)?;
/// # git(&["fast-import", "--quiet"], Some("blob\nmark :1\ndata 5\nhello\ncommit refs/heads/main\ncommitter A <a@b> 0 +0000\ndata 0\nM 100644 :1 f\n"))?;
/// # git(&["repack", "-adq"], None)?;
/// # git(&["multi-pack-index", "write"], None)?;
/// use odb_index::{Location, MidxCheck, ObjectId, Options, Store};
///
/// // A repository whose packs are covered by a multi-pack-index (`git multi-pack-index write`).
/// let store = Store::open(tmp.path(), Options::default().midx_check(MidxCheck::PackIndex))?;
/// let hello: ObjectId = "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0".parse()?;
/// // Found through the multi-pack-index, and the same location in the pack's own .idx.
/// assert!(matches!(store.handle().locate(&hello)?, Some(Location::Packed { .. })));
/// assert!(store.problems().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MidxCheck {
    /// Locations are checked against their pack's bounds (git's behaviour, and more): one search per lookup.
    #[default]
    Bounds,
    /// Every location found is also looked up in its pack's own `.idx` (opened on first use) and must be the
    /// same: a hit costs a second search. An entry that differs is reported by
    /// [`Store::problems`](super::Store::problems) ([`Problem::MultiPackIndexEntryWrong`](super::Problem)) and
    /// the object is looked up in the `.idx` files of the packs the multi-pack-index covers: never a wrong
    /// location, and every object of a good pack found. A pack whose own `.idx` does not load cannot check its
    /// entries: they are answered as written (as under `Bounds`) and that `.idx`'s error is reported. For stores
    /// that must not trust their files (servers reading repositories they do not control).
    PackIndex,
}

/// How a [`Store`](super::Store) is opened.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{IncompleteMode, LoadMode, ObjectId, Options, RefreshMode, Store};
///
/// let options = Options::default()
///     .load(LoadMode::Read)
///     .refresh(RefreshMode::Never)
///     .incomplete(IncompleteMode::Miss);
/// let store = Store::open(repo.path(), options)?;
/// assert_eq!(store.options().refresh, RefreshMode::Never);
/// assert!(store.handle().contains(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<ObjectId>()?)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// When to re-read pack directories (default [`RefreshMode::OnMiss`]).
    pub refresh: RefreshMode,
    /// How loose objects are consulted (default [`LooseMode::Watched`]).
    pub loose: LooseMode,
    /// How index files are brought into memory (default [`LoadMode::Mmap`]).
    pub load: LoadMode,
    /// The object format; `None` reads it from the repository's config.
    pub hash_kind: Option<HashKind>,
    /// Use `objects/pack/multi-pack-index` (or the incremental chain in `objects/pack/multi-pack-index.d/`)
    /// when present (default true).
    pub multi_pack_index: bool,
    /// When to build the miss filter (default [`MissFilterMode::Auto`]).
    pub miss_filter: MissFilterMode,
    /// What a miss answers while some index file cannot be loaded (default [`IncompleteMode::Error`]).
    pub incomplete: IncompleteMode,
    /// How far the multi-pack-index's locations are trusted (default [`MidxCheck::Bounds`]).
    pub midx_check: MidxCheck,
    /// Verify each multi-pack-index's trailing checksum once, when it is loaded, before it answers (default
    /// false; see [`Options::midx_checksum`]).
    pub midx_checksum: bool,
    /// Learn of changes from file system events where they are available (default true; see
    /// [`Store::change_events`](super::Store::change_events)). False: `stat` the pack directories and probe
    /// loose objects, as on systems without events (no inotify descriptor or watches are used).
    pub change_events: bool,
    /// How many misses the store answers with `stat` before it sets change events up (default
    /// [`Options::DEFAULT_CHANGE_EVENTS_AFTER`]; see [`Options::change_events_after`]).
    pub change_events_after: u32,
    /// Map each pack's `.pack` when its `.idx` is loaded (default false; see [`Options::pack_data`]).
    pub pack_data: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            refresh: RefreshMode::OnMiss,
            loose: LooseMode::Watched,
            load: LoadMode::Mmap,
            hash_kind: None,
            multi_pack_index: true,
            miss_filter: MissFilterMode::Auto,
            incomplete: IncompleteMode::Error,
            midx_check: MidxCheck::Bounds,
            midx_checksum: false,
            change_events: true,
            change_events_after: Options::DEFAULT_CHANGE_EVENTS_AFTER,
            pack_data: false,
        }
    }
}

impl Options {
    /// Set the refresh mode.
    pub fn refresh(mut self, mode: RefreshMode) -> Self {
        self.refresh = mode;
        self
    }
    /// Set the loose-object mode.
    pub fn loose(mut self, mode: LooseMode) -> Self {
        self.loose = mode;
        self
    }
    /// Set how index files are loaded.
    pub fn load(mut self, mode: LoadMode) -> Self {
        self.load = mode;
        self
    }
    /// Force the object format instead of reading it from the repository.
    pub fn hash_kind(mut self, kind: HashKind) -> Self {
        self.hash_kind = Some(kind);
        self
    }
    /// Set what a miss answers while some index file cannot be loaded.
    pub fn incomplete(mut self, mode: IncompleteMode) -> Self {
        self.incomplete = mode;
        self
    }
    /// Use (or ignore) the multi-pack-index.
    pub fn multi_pack_index(mut self, on: bool) -> Self {
        self.multi_pack_index = on;
        self
    }
    /// Set when the miss filter is built.
    pub fn miss_filter(mut self, mode: MissFilterMode) -> Self {
        self.miss_filter = mode;
        self
    }
    /// Use file system events for change detection where available (or never).
    pub fn change_events(mut self, on: bool) -> Self {
        self.change_events = on;
        self
    }
    /// The default of [`change_events_after`](Self::change_events_after): 2 048 misses.
    pub const DEFAULT_CHANGE_EVENTS_AFTER: u32 = 2048;
    /// Under [`RefreshMode::OnMiss`], set change events up only once the store's handles have answered `misses`
    /// misses without them (`stat` the pack directories and probe loose objects, as
    /// `change_events(false)` does), a miss counting once per objects directory it stats and probes (with
    /// alternates each miss makes more system calls, which events save); 0 sets them up when the store is
    /// opened. The next miss after the count is
    /// reached lists the pack directories again with the events set up (docs/FRESHNESS.md, section 1, says why
    /// no write is missed across the switch). Handles report their misses in batches of 64 and when dropped.
    ///
    /// Why not at once: an inotify descriptor with watches makes its process wait when it is closed, dropped
    /// with its store or at exit, for the kernel's teardown of the watches (0.3-10 ms measured here, growing
    /// with the machine's load, against about 2.5 us of `stat` and probe that events save per miss and objects
    /// directory), so a store that misses a few times, as a short command does, is faster without them
    /// (`docs/BENCHMARKS.md`, "Short commands"). The default is where the two costs meet: a store that misses
    /// less pays no teardown, one that misses more pays at most about twice what it would have paid knowing its
    /// number of misses in advance. Under [`RefreshMode::Never`] with [`LooseMode::Watched`] the events serve
    /// the loose listings only and are set up at open.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
    /// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").status()?;
    /// use odb_index::{ObjectId, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default().change_events_after(16))?;
    /// assert!(!store.change_events(), "no events before the 16th miss");
    /// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
    /// for _ in 0..16 {
    ///     assert!(!store.handle().contains(&absent)?); // each handle reports its misses when dropped
    /// }
    /// store.handle().contains(&absent)?; // the miss after the count sets them up
    /// assert_eq!(store.change_events(), cfg!(target_os = "linux"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn change_events_after(mut self, misses: u32) -> Self {
        self.change_events_after = misses;
        self
    }
    /// Set how far the multi-pack-index's locations are trusted.
    pub fn midx_check(mut self, mode: MidxCheck) -> Self {
        self.midx_check = mode;
        self
    }
    /// Verify each multi-pack-index's trailing checksum (the hash of everything before it) once, when the file
    /// is loaded and before it answers any lookup, as `git multi-pack-index verify` does first. A file that
    /// fails is not used: it is reported by [`Store::problems`](super::Store::problems)
    /// ([`Problem::MultiPackIndexNotLoaded`](super::Problem::MultiPackIndexNotLoaded), naming the file and the
    /// checksum mismatch) and the packs it covers answer from their own `.idx` files. This catches random
    /// corruption (bit flips, torn writes) anywhere in the file, which the checks at open (header, chunk table,
    /// chunk sizes, fanout, pack names) and at use (bounds, bucket order) may not: a flipped bit inside an id or an
    /// offset can otherwise give a wrong location or a false miss. It does not catch a file rewritten
    /// consistently with wrong contents (see [`MidxCheck::PackIndex`]).
    ///
    /// Off by default, because it costs far more than the target for opening a store and answering its first
    /// miss (0.05 ms): it reads and hashes the whole file (28 bytes per object with SHA-1, more with `RIDX`).
    /// On a 1 000 000-object multi-pack-index (28 MB) open + first miss took 18.8-93.7 ms with it against
    /// 0.13-0.22 ms without (25 runs each, page cache warm, load average 10.5-12.5 on 2 cores), and the
    /// process's peak resident memory rose from 5.6-7.7 MB to 30.8-31.0 MB (every page of the mapped file is
    /// read); docs/RELIABILITY.md has the commands ("A multi-pack-index that lies in the default mode"). The file is hashed once per load, in the
    /// thread that loads it (the loading protocol loads each file once and carries it over a refresh that keeps
    /// it): never per lookup.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", true);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 10, 1, "main");
    /// # odb_index_testkit::git(repo.path(), &["multi-pack-index", "write"]);
    /// # let midx = odb_index_testkit::objects_dir(repo.path()).join("pack/multi-pack-index");
    /// # let ids: Vec<odb_index::ObjectId> =
    /// #     odb_index_testkit::all_objects(repo.path()).iter().map(|id| id.parse().unwrap()).collect();
    /// use odb_index::{Options, Problem, Store};
    ///
    /// // Where each object is, from the intact file.
    /// let good = Store::open(repo.path(), Options::default())?;
    /// let mut g = good.handle();
    /// let expected: Vec<_> = ids.iter().map(|id| g.locate(id).unwrap()).collect();
    /// drop((g, good)); // the file is rewritten in place below
    ///
    /// // A git-written multi-pack-index (`git multi-pack-index write`: its last chunk is `OOFF`) whose last
    /// // object's offset has its lowest bit flipped: a location inside the pack, one byte off.
    /// let mut bytes = std::fs::read(&midx)?;
    /// let at = bytes.len() - 20 - 1;
    /// bytes[at] ^= 1;
    /// std::fs::write(&midx, &bytes)?;
    ///
    /// let store = Store::open(repo.path(), Options::default().midx_checksum(true))?;
    /// let mut h = store.handle();
    /// for (id, want) in ids.iter().zip(&expected) {
    ///     // Every object is found where the intact file put it (through its pack's own .idx now).
    ///     assert!(want.is_some());
    ///     assert_eq!(&h.locate(id)?, want);
    /// }
    /// let problems = store.problems();
    /// assert!(matches!(&problems[..], [Problem::MultiPackIndexNotLoaded { .. }]));
    /// assert!(problems[0].to_string().contains("checksum mismatch"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn midx_checksum(mut self, on: bool) -> Self {
        self.midx_checksum = on;
        self
    }

    /// Map each pack's `.pack` file right after its `.idx` is loaded, and keep it with the index
    /// ([`Handle::pack_data`](super::Handle::pack_data) hands it out), for readers of objects' contents.
    ///
    /// git opens a pack at the lookup that first finds an object in it, so a pack renamed away a moment later
    /// stays readable to it. A reader that opens the `.pack` only when it reads (after a batch of lookups, say)
    /// can find it away although its index was loaded; with this option the file it reads is the one mapped
    /// with the index. Default false: lookups alone never need the `.pack`, and mapping it costs an `open`, an
    /// `fstat`, an `mmap` and a `close` per index loaded (nothing on the lookup path). A `.pack` that cannot be
    /// mapped then is left to the reader (no index fails for it). Indices a multi-pack-index covers are not
    /// loaded, so their packs are not mapped either.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", false);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 1, "main");
    /// # let id = odb_index_testkit::git(repo.path(), &["rev-parse", "main"]);
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(repo.path(), Options::default().pack_data(true))?;
    /// let mut handle = store.handle();
    /// let Some(Location::Packed { pack, offset }) = handle.locate(&id.trim().parse()?)? else { panic!() };
    /// let data = handle.pack_data(pack).expect("mapped with its index");
    /// assert_eq!(&data[..4], b"PACK");
    /// assert!((offset as usize) < data.len());
    /// // Without the option nothing is mapped.
    /// let lookups_only = Store::open(repo.path(), Options::default())?;
    /// let mut handle = lookups_only.handle();
    /// assert!(handle.locate(&id.trim().parse()?)?.is_some());
    /// assert!(handle.pack_data(pack).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pack_data(mut self, on: bool) -> Self {
        self.pack_data = on;
        self
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// Each pair of modes makes the shape whose flags are the ones a handle derived from the modes before
    /// `MissShape` (loose objects on, refresh on a miss, a change detector asked, the check before the loose step).
    #[test]
    fn each_pair_of_modes_makes_its_shape() {
        for refresh in [RefreshMode::OnMiss, RefreshMode::Never] {
            for loose in [
                LooseMode::Watched,
                LooseMode::Probe,
                LooseMode::Cached,
                LooseMode::None,
            ] {
                let s = MissShape::of(&Options::default().refresh(refresh).loose(loose));
                let on_miss = refresh != RefreshMode::Never;
                let listed = matches!(loose, LooseMode::Watched | LooseMode::None);
                let watching = on_miss || loose == LooseMode::Watched;
                assert_eq!(
                    (s.loose_on(), s.refresh_on_miss(), s.watching()),
                    (loose != LooseMode::None, on_miss, watching),
                    "{refresh:?} {loose:?}: {s:?}"
                );
                assert_eq!(s.check_first(), watching && listed, "{refresh:?} {loose:?}");
            }
        }
    }
}
