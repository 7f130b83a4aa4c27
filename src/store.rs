//! The concurrent store: lazily loaded pack indices, cached per-thread handles, refresh on miss.
//!
//! A [`Store`] is shared by `Arc`; each thread makes its own [`Handle`]. Index files are loaded on demand, one
//! slot at a time, by whichever lookup needs them first, through the protocol in [`crate::protocol`]. A lookup
//! that must wait for another thread's load blocks, and a steady-state miss touches shared memory with one
//! Acquire load.
//!
//! ```
//! # use std::process::Command;
//! # let tmp = tempfile::tempdir()?;
//! # let git = |args: &[&str]| {
//! #     let st = Command::new("git").args(args).current_dir(tmp.path())
//! #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
//! #     assert!(st.status.success());
//! #     String::from_utf8(st.stdout).unwrap()
//! # };
//! # git(&["init", "-q", "."]);
//! # let id = git(&["hash-object", "-w", "--stdin"]); // the empty blob, written loose
//! # let id = id.trim();
//! use odb_index::{Location, Options, Store};
//!
//! let store = Store::open(tmp.path(), Options::default())?;
//! let mut handle = store.handle();
//! let id = id.parse()?;
//! assert!(matches!(handle.locate(&id)?, Some(Location::Loose { dir: 0 })));
//! let absent = "0123456789012345678901234567890123456789".parse()?;
//! assert_eq!(handle.locate(&absent)?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::data::LoadMode;
use crate::error::Error;
use crate::idx::PackIndex;
pub use crate::loose::LooseMode;
use crate::loose::{LooseCache, LooseDb};
use crate::midx::MultiPackIndex;
use crate::oid::{HashKind, ObjectId};
use crate::protocol::{Current, Settled, SlotMap, SlotRef, View};
use crate::sync::plain::Arc;
use crate::sync::{self, AtomicU64, Mutex, Ordering, lock};

/// Names one pack file for as long as it exists in the repository, across refreshes.
///
/// Ids are serial numbers handed out by one [`Store`]; a pack keeps its id while a refresh sees the same file
/// (same path, size, modification time and inode). [`Store::pack_path`] turns an id into the pack's path, or
/// reports [`Error::StalePack`] once the pack is gone, never another pack's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackId(pub(crate) u64);

impl PackId {
    /// The raw serial number.
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

/// Where an object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// In a pack, at this byte offset of the `.pack` file.
    Packed {
        /// Which pack ([`Store::pack_path`], [`Handle::pack_path`]).
        pack: PackId,
        /// Offset of the object's entry in the `.pack` file.
        offset: u64,
    },
    /// A loose object in objects directory number `dir` (0: the repository's own, then its alternates in
    /// search order; see [`Store::objects_dirs`]).
    Loose {
        /// Index into [`Store::objects_dirs`].
        dir: usize,
    },
}

/// When the store re-reads the pack directories.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RefreshMode {
    /// After a miss in packs and loose objects, `stat` each pack directory; if one changed (or its timestamp was
    /// too recent to trust when it was listed), list again and search the packs again (git's behaviour).
    #[default]
    OnMiss,
    /// Never look at the directories again unless [`Store::refresh`] is called. A steady-state miss then costs
    /// no system call except the loose probe.
    Never,
}

/// How a [`Store`] is opened.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// When to re-read pack directories (default [`RefreshMode::OnMiss`]).
    pub refresh: RefreshMode,
    /// How loose objects are consulted (default [`LooseMode::Probe`]).
    pub loose: LooseMode,
    /// How index files are brought into memory (default [`LoadMode::Mmap`]).
    pub load: LoadMode,
    /// The object format; `None` reads it from the repository's config.
    pub hash_kind: Option<HashKind>,
    /// Use `objects/pack/multi-pack-index` when present (default true).
    pub multi_pack_index: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            refresh: RefreshMode::OnMiss,
            loose: LooseMode::Probe,
            load: LoadMode::Mmap,
            hash_kind: None,
            multi_pack_index: true,
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
    /// Use (or ignore) the multi-pack-index.
    pub fn multi_pack_index(mut self, on: bool) -> Self {
        self.multi_pack_index = on;
        self
    }
}

/// Identity of a file or directory as `stat` reports it: a change in any field means "changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Stamp {
    mtime: Option<SystemTime>,
    size: u64,
    ino: u64,
    dev: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let md = std::fs::metadata(path).ok()?;
        Some(Stamp::from_metadata(&md))
    }

    fn from_metadata(md: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (ino, dev) = {
            use std::os::unix::fs::MetadataExt as _;
            (md.ino(), md.dev())
        };
        #[cfg(not(unix))]
        let (ino, dev) = (0, 0);
        Stamp {
            mtime: md.modified().ok(),
            size: md.len(),
            ino,
            dev,
        }
    }
}

/// What one slot loads.
#[derive(Debug)]
enum SlotSpec {
    /// A pack's `.idx`. `covered_by` is the slot of a multi-pack-index that lists this pack: if that loads, this
    /// slot loads nothing.
    Pack {
        pack: usize,
        covered_by: Option<usize>,
    },
    /// A multi-pack-index; `packs[i]` is the pack (index into `Generation::packs`) for pack-int-id `i`, and
    /// `names` the pack names it listed when the directory was listed (the file loaded later must list the same).
    Midx {
        names: Box<[String]>,
        path: PathBuf,
        stamp: Stamp,
        packs: Box<[Option<usize>]>,
    },
}

/// A pack present in one generation.
#[derive(Debug)]
struct PackInfo {
    id: PackId,
    idx_path: PathBuf,
    idx_stamp: Stamp,
    /// Modification time of the `.pack` (git's recency order).
    mtime: SystemTime,
}

enum LooseSource {
    Probe(LooseDb),
    Cached(LooseCache),
    Off,
}

impl LooseSource {
    #[inline]
    fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        match self {
            LooseSource::Probe(db) => db.contains(id),
            LooseSource::Cached(c) => c.contains(id),
            LooseSource::Off => Ok(false),
        }
    }
}

/// Everything one slot map describes: the listing it was built from.
struct Generation {
    slots: Box<[SlotSpec]>,
    packs: Box<[PackInfo]>,
    /// Position in `packs` of each pack id (answers `pack_path` without a scan: thousands of packs).
    pack_by_id: HashMap<PackId, usize>,
    /// Objects directories in search order (own first).
    dirs: Arc<[PathBuf]>,
    loose: Arc<[LooseSource]>,
    /// Each objects directory's `pack/` (precomputed: the refresh check must not allocate).
    pack_dirs: Box<[PathBuf]>,
    /// `stat` of each of `pack_dirs` when it was listed (`None`: missing).
    pack_dir_stamps: Box<[Option<Stamp>]>,
    /// `stat` of the own `info/alternates` when it was read.
    alternates_stamp: Option<Stamp>,
    /// A pack directory's timestamp was too close to the listing time to trust: list again once.
    untrusted: bool,
    /// Problems found while reading the alternates and opening loose directories (kept while the alternates
    /// file is unchanged), then those found while listing packs (an unreadable multi-pack-index).
    problems: Arc<[String]>,
    /// How many of `problems` come from the alternates (carried to the next listing with `dirs`).
    alternate_problems: usize,
}

/// A loaded pack index.
#[derive(Debug)]
struct LoadedPack {
    id: PackId,
    mtime: SystemTime,
    idx: PackIndex,
}

/// A loaded multi-pack-index with its pack-int-id → pack map.
#[derive(Debug)]
struct LoadedMidx {
    midx: Arc<MultiPackIndex>,
    packs: Box<[Option<PackId>]>,
}

/// What a slot holds once loaded.
#[derive(Clone, Debug)]
enum Loaded {
    Pack(Arc<LoadedPack>),
    Midx(Arc<LoadedMidx>),
    /// A pack covered by a loaded multi-pack-index: nothing to load.
    Covered,
    /// The load failed; misses report [`Error::Incomplete`] (for a multi-pack-index: fall back to the packs).
    Failed {
        error: Arc<Error>,
        midx: bool,
    },
}

type Map = SlotMap<Loaded, Generation>;

/// A repository's object lookup state, shared by all threads (`Send + Sync`, use it through `Arc`).
pub struct Store {
    objects_dir: PathBuf,
    kind: HashKind,
    options: Options,
    current: Current<Loaded, Generation>,
    /// Serializes refreshes and owns what survives them.
    refresh: Mutex<RefreshState>,
    /// Index files opened so far (statistics; touched once per load, never on a lookup).
    loads: AtomicU64,
}

struct RefreshState {
    /// Pack ids by `.idx` path, with the stamp they were given for.
    ids: HashMap<PathBuf, (PackId, Stamp)>,
    next_id: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("objects_dir", &self.objects_dir)
            .field("kind", &self.kind)
            .finish()
    }
}

impl Store {
    /// Open the repository at `path` (a work tree, a `.git` directory, a bare repository or an objects
    /// directory). Lists the pack directories (and reads the multi-pack-index's pack names) but loads no index.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Arc<Store>, Error> {
        let path = path.as_ref();
        let repo = match options.hash_kind {
            Some(k) => crate::repo::discover_with_hash_kind(path, k)?,
            None => crate::repo::discover(path)?,
        };
        let mut state = RefreshState {
            ids: HashMap::new(),
            next_id: 0,
        };
        let generation = list(
            &repo.objects_dir,
            repo.hash_kind,
            &options,
            &mut state,
            None,
            false,
        )?;
        let (ready, unloaded) = (Vec::new(), generation.slots.len());
        let map = SlotMap::new(ready, unloaded, generation);
        Ok(Arc::new(Store {
            objects_dir: repo.objects_dir,
            kind: repo.hash_kind,
            options,
            current: Current::new(map),
            refresh: Mutex::new(state),
            loads: AtomicU64::new(0),
        }))
    }

    /// A new handle for one thread.
    pub fn handle(self: &Arc<Self>) -> Handle {
        let map = self.current.get();
        Handle {
            store: Arc::clone(self),
            view: View::new(map),
            snap: Snapshot::default(),
            _not_sync: PhantomData,
        }
    }

    /// How many index files (`.idx` and multi-pack-index) this store has opened so far, failed opens included.
    /// Each file is opened at most once while it is unchanged, however many threads and refreshes there are.
    pub fn index_loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// The object format.
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// The repository's objects directory.
    pub fn objects_dir(&self) -> &Path {
        &self.objects_dir
    }

    /// The objects directories searched, in order: the repository's own, then its alternates
    /// ([`Location::Loose`] indexes this list).
    pub fn objects_dirs(&self) -> Vec<PathBuf> {
        self.current.get().meta().dirs.to_vec()
    }

    /// Problems found while listing the repository (an unreadable multi-pack-index, a missing alternate): the
    /// store works around them and reports them here.
    pub fn problems(&self) -> Vec<String> {
        let map = self.current.get();
        let mut problems = map.meta().problems.to_vec();
        // A multi-pack-index that failed to load is worked around (its packs load their own indices): say so.
        for (_, v) in map.ready() {
            if let Loaded::Failed { error, midx: true } = v {
                problems.push(format!(
                    "multi-pack-index not used, searching the .idx files instead: {error}"
                ));
            }
        }
        problems
    }

    /// The path of the `.pack` file for `pack`, or [`Error::StalePack`] if it is no longer in the repository.
    pub fn pack_path(&self, pack: PackId) -> Result<PathBuf, Error> {
        pack_path_in(self.current.get().meta(), pack).ok_or(Error::StalePack { pack })
    }

    /// All packs currently listed, as `(id, .idx path)`, in search order (newest first per objects directory).
    pub fn packs(&self) -> Vec<(PackId, PathBuf)> {
        self.current
            .get()
            .meta()
            .packs
            .iter()
            .map(|p| (p.id, p.idx_path.clone()))
            .collect()
    }

    /// Re-read the pack directories now (and the alternates, and loose caches), whatever the refresh mode.
    /// Returns whether the pack listing changed. Loaded indices that are still present are kept, never reloaded.
    pub fn refresh(&self) -> Result<bool, Error> {
        let map = self.current.get();
        self.refresh_from(&map, true)
    }

    /// Replace `seen` (if it is still current) with a fresh listing. Returns whether the map was replaced by
    /// this call or by another since `seen`.
    fn refresh_from(&self, seen: &sync::Arc<Map>, force: bool) -> Result<bool, Error> {
        let mut state = lock(&self.refresh);
        let current = self.current.get();
        if !sync::Arc::ptr_eq(&current, seen) {
            // Another thread refreshed since `seen` was current.
            return Ok(true);
        }
        let old = current.meta();
        let alternates_changed =
            Stamp::of(&self.objects_dir.join("info/alternates")) != old.alternates_stamp;
        // A re-list because the last listing was too recent to trust happens once: its timestamps are trusted.
        let trust = old.untrusted && !force;
        // An explicit refresh of cached loose objects starts fresh caches in the new map. The old caches go
        // with the old map, once no handle uses it (a cache cannot free a listing a reader may be searching).
        let fresh_loose = force && self.options.loose == LooseMode::Cached;
        let generation = list(
            &self.objects_dir,
            self.kind,
            &self.options,
            &mut state,
            (!alternates_changed && !fresh_loose).then_some(old),
            trust,
        )?;
        let same = same_listing(old, &generation);
        if same
            && generation.pack_dir_stamps == old.pack_dir_stamps
            && !old.untrusted
            && !generation.untrusted
            && !fresh_loose
        {
            return Ok(false);
        }
        // Replace the map even when only the stamps changed, so the next miss compares against them.
        self.current
            .replace(|old_map| build_successor(old_map, generation));
        Ok(!same)
    }
}

fn pack_path_in(g: &Generation, pack: PackId) -> Option<PathBuf> {
    let i = *g.pack_by_id.get(&pack)?;
    Some(g.packs[i].idx_path.with_extension("pack"))
}

fn same_listing(a: &Generation, b: &Generation) -> bool {
    fn midx(g: &Generation) -> Vec<(&Path, Stamp)> {
        g.slots
            .iter()
            .filter_map(|s| match s {
                SlotSpec::Midx { path, stamp, .. } => Some((path.as_path(), *stamp)),
                SlotSpec::Pack { .. } => None,
            })
            .collect()
    }
    a.dirs == b.dirs
        && a.packs.len() == b.packs.len()
        && a.packs
            .iter()
            .zip(b.packs.iter())
            .all(|(x, y)| x.id == y.id)
        && {
            let (ma, mb) = (midx(a), midx(b));
            ma.len() == mb.len() && ma.iter().all(|x| mb.contains(x))
        }
}

/// Build the map that replaces `old`: every slot whose file is unchanged keeps its loaded value (or its
/// recorded failure) and comes first, ready; the rest are empty, in load order.
fn build_successor(old: &Map, mut generation: Generation) -> Map {
    // What the old map loaded, keyed by file identity.
    let mut carried_packs: HashMap<(PathBuf, Stamp), Loaded> = HashMap::new();
    let mut carried_midx: HashMap<(PathBuf, Stamp), Loaded> = HashMap::new();
    let og = old.meta();
    for (i, v) in old.ready() {
        match (&og.slots[i], v) {
            (_, Loaded::Covered) => {}
            (SlotSpec::Pack { pack, .. }, v) => {
                let p = &og.packs[*pack];
                carried_packs.insert((p.idx_path.clone(), p.idx_stamp), v.clone());
            }
            (SlotSpec::Midx { path, stamp, .. }, v) => {
                carried_midx.insert((path.clone(), *stamp), v.clone());
            }
        }
    }
    // Partition the new slots: carried (ready) first, then the rest in their planned order.
    let old_slots = std::mem::take(&mut generation.slots).into_vec();
    let mut ready_specs = Vec::new();
    let mut ready_vals = Vec::new();
    let mut rest = Vec::new();
    for (i, spec) in old_slots.into_iter().enumerate() {
        let carried = match &spec {
            SlotSpec::Pack { pack, .. } => {
                let p = &generation.packs[*pack];
                carried_packs
                    .get(&(p.idx_path.clone(), p.idx_stamp))
                    .cloned()
            }
            SlotSpec::Midx {
                path, stamp, packs, ..
            } => {
                carried_midx.get(&(path.clone(), *stamp)).map(|v| match v {
                    // Pack ids may differ in the new generation: rebuild the int-id map.
                    Loaded::Midx(m) => Loaded::Midx(Arc::new(LoadedMidx {
                        midx: Arc::clone(&m.midx),
                        packs: packs
                            .iter()
                            .map(|p| p.map(|p| generation.packs[p].id))
                            .collect(),
                    })),
                    other => other.clone(),
                })
            }
        };
        match carried {
            Some(v) => {
                ready_specs.push((i, spec));
                ready_vals.push(v);
            }
            None => rest.push((i, spec)),
        }
    }
    // Slot indices moved: remap `covered_by` references.
    let mut new_index = vec![0usize; ready_specs.len() + rest.len()];
    for (new, (old_i, _)) in ready_specs.iter().chain(rest.iter()).enumerate() {
        new_index[*old_i] = new;
    }
    let slots: Box<[SlotSpec]> = ready_specs
        .into_iter()
        .chain(rest)
        .map(|(_, s)| match s {
            SlotSpec::Pack { pack, covered_by } => SlotSpec::Pack {
                pack,
                covered_by: covered_by.map(|c| new_index[c]),
            },
            m => m,
        })
        .collect();
    let n_ready = ready_vals.len();
    generation.slots = slots;
    SlotMap::new(ready_vals, generation.slots.len() - n_ready, generation)
}

/// List every objects directory's packs (and multi-pack-index) and plan the slots.
fn list(
    objects_dir: &Path,
    kind: HashKind,
    options: &Options,
    state: &mut RefreshState,
    reuse_loose: Option<&Generation>,
    trust_timestamps: bool,
) -> Result<Generation, Error> {
    let started = SystemTime::now();
    let mut problems = Vec::new();
    let alternates_stamp = Stamp::of(&objects_dir.join("info/alternates"));
    let (dirs, loose): (Arc<[PathBuf]>, Arc<[LooseSource]>) = match reuse_loose {
        Some(g) => {
            problems.extend(g.problems[..g.alternate_problems].iter().cloned());
            (Arc::clone(&g.dirs), Arc::clone(&g.loose))
        }
        None => {
            let alts = crate::repo::alternates(objects_dir)?;
            problems.extend(alts.problems.iter().map(|p| p.to_string()));
            let mut dirs = vec![objects_dir.to_path_buf()];
            dirs.extend(alts.dirs);
            let mut loose = Vec::with_capacity(dirs.len());
            for d in &dirs {
                loose.push(match options.loose {
                    LooseMode::None => LooseSource::Off,
                    mode => match LooseDb::open(d, kind) {
                        Ok(db) if mode == LooseMode::Cached => {
                            LooseSource::Cached(LooseCache::new(db))
                        }
                        Ok(db) => LooseSource::Probe(db),
                        Err(e) => {
                            problems.push(format!("loose objects not searched: {e}"));
                            LooseSource::Off
                        }
                    },
                });
            }
            (dirs.into(), loose.into())
        }
    };
    let alternate_problems = problems.len();

    let mut packs: Vec<PackInfo> = Vec::new();
    let mut slots: Vec<SlotSpec> = Vec::new();
    let mut covered_slots: Vec<SlotSpec> = Vec::new();
    let mut pack_dir_stamps = Vec::with_capacity(dirs.len());
    let mut pack_dirs = Vec::with_capacity(dirs.len());
    let mut untrusted = false;
    let mut seen_paths: HashMap<PathBuf, PackId> = HashMap::new();
    for dir in dirs.iter() {
        let pack_dir = dir.join("pack");
        let stamp = Stamp::of(&pack_dir);
        pack_dir_stamps.push(stamp);
        pack_dirs.push(pack_dir.clone());
        if let Some(Stamp { mtime: Some(m), .. }) = stamp {
            // A directory changed within a second of the listing may change again within its timestamp's
            // granularity without a visible mtime change: list it again once on the next miss.
            if !trust_timestamps && m + Duration::from_secs(1) >= started {
                untrusted = true;
            }
        }
        let entries = match std::fs::read_dir(&pack_dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(pack_dir, e)),
        };
        let mut dir_packs: Vec<(PathBuf, Stamp, SystemTime)> = Vec::new();
        let mut has_midx = false;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&pack_dir, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name == "multi-pack-index" {
                has_midx = true;
                continue;
            }
            if !(name.starts_with("pack-") && name.ends_with(".idx")) {
                continue;
            }
            let idx_path = pack_dir.join(name);
            // git ignores an index whose pack is missing; so do we. Directories named like packs are skipped.
            let Ok(idx_md) = std::fs::metadata(&idx_path) else {
                continue;
            };
            if !idx_md.is_file() {
                continue;
            }
            let Ok(pack_md) = std::fs::metadata(idx_path.with_extension("pack")) else {
                continue;
            };
            if !pack_md.is_file() {
                continue;
            }
            let mtime = pack_md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            dir_packs.push((idx_path, Stamp::from_metadata(&idx_md), mtime));
        }
        // Newest first (git's order), name as a tie-break for determinism.
        dir_packs.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        let first_pack = packs.len();
        for (idx_path, idx_stamp, mtime) in dir_packs {
            let id = match state.ids.get(&idx_path) {
                Some((id, s)) if *s == idx_stamp => *id,
                _ => {
                    let id = PackId(state.next_id);
                    state.next_id += 1;
                    state.ids.insert(idx_path.clone(), (id, idx_stamp));
                    id
                }
            };
            seen_paths.insert(idx_path.clone(), id);
            packs.push(PackInfo {
                id,
                idx_path,
                idx_stamp,
                mtime,
            });
        }
        // The multi-pack-index: read its pack names now, to know which packs it covers.
        let mut covered: HashMap<usize, usize> = HashMap::new();
        if has_midx && options.multi_pack_index {
            let midx_path = pack_dir.join("multi-pack-index");
            let midx_stamp = Stamp::of(&midx_path);
            match (
                if options.load == LoadMode::Read {
                    // No mapping at all in this mode, even a short-lived one (a file truncated in place would
                    // raise SIGBUS): read the whole file and take its names.
                    MultiPackIndex::open_with(&midx_path, kind, LoadMode::Read)
                        .map(|m| m.pack_names().to_vec())
                } else {
                    crate::midx::read_pack_names(&midx_path, kind)
                },
                midx_stamp,
            ) {
                (Ok(names), Some(midx_stamp)) => {
                    let by_name: HashMap<&str, usize> = packs[first_pack..]
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| {
                            p.idx_path
                                .file_name()?
                                .to_str()
                                .map(|n| (n, first_pack + i))
                        })
                        .collect();
                    let map: Box<[Option<usize>]> = names
                        .iter()
                        .map(|n| match n.strip_suffix(".pack") {
                            // PNAM names the .idx (what git writes); accept a .pack name too.
                            Some(stem) => by_name.get(format!("{stem}.idx").as_str()).copied(),
                            None => by_name.get(n.as_str()).copied(),
                        })
                        .collect();
                    let slot = slots.len();
                    for p in map.iter().flatten() {
                        covered.insert(*p, slot);
                    }
                    slots.push(SlotSpec::Midx {
                        names: names.into(),
                        path: midx_path,
                        stamp: midx_stamp,
                        packs: map,
                    });
                }
                (Err(e), _) => problems.push(format!(
                    "multi-pack-index ignored, using the .idx files: {e}"
                )),
                (Ok(_), None) => {}
            }
        }
        for p in first_pack..packs.len() {
            match covered.get(&p) {
                Some(&m) => covered_slots.push(SlotSpec::Pack {
                    pack: p,
                    covered_by: Some(m),
                }),
                None => slots.push(SlotSpec::Pack {
                    pack: p,
                    covered_by: None,
                }),
            }
        }
    }
    // Forget ids of packs that are gone, so the map does not grow with every repack.
    state.ids.retain(|p, _| seen_paths.contains_key(p));
    // Covered packs load last: by then the multi-pack-index has usually answered for them.
    slots.extend(covered_slots);
    if slots.len() > crate::protocol::MAX_SLOTS {
        return Err(Error::NotARepository {
            path: objects_dir.to_path_buf(),
            reason: format!(
                "{} index files is more than one store can hold",
                slots.len()
            ),
        });
    }
    let pack_by_id = packs.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    Ok(Generation {
        slots: slots.into(),
        packs: packs.into(),
        pack_by_id,
        dirs,
        loose,
        pack_dirs: pack_dirs.into(),
        pack_dir_stamps: pack_dir_stamps.into(),
        alternates_stamp,
        untrusted,
        problems: problems.into(),
        alternate_problems,
    })
}

/// One thread's cached picture of the store: the loaded indices it has seen, in search order.
#[derive(Default)]
struct Snapshot {
    /// Single-pack indices, newest pack first.
    packs: Vec<Arc<LoadedPack>>,
    /// Multi-pack-indices.
    midx: Vec<Arc<LoadedMidx>>,
    /// Index files that failed to load (not counting a multi-pack-index, whose packs are searched instead).
    failed: Vec<(PathBuf, Arc<Error>)>,
    /// Position in `packs` of the last hit: tried first.
    last_hit: usize,
}

impl Snapshot {
    /// Search everything loaded so far. No allocation, no shared writes.
    #[inline]
    fn search(&mut self, id: &[u8]) -> Option<Location> {
        if let Some(p) = self.packs.get(self.last_hit)
            && let Some(offset) = p.idx.lookup(id)
        {
            return Some(Location::Packed { pack: p.id, offset });
        }
        for (i, p) in self.packs.iter().enumerate() {
            if i == self.last_hit {
                continue;
            }
            if let Some(offset) = p.idx.lookup(id) {
                self.last_hit = i;
                return Some(Location::Packed { pack: p.id, offset });
            }
        }
        for m in &self.midx {
            if let Some(loc) = m.lookup(id) {
                return Some(loc);
            }
        }
        None
    }

    /// Add a newly visible slot's value; search it for `id`.
    fn add(
        &mut self,
        g: &Generation,
        slot: usize,
        r: SlotRef<'_, Loaded>,
        id: &[u8],
    ) -> Option<Location> {
        match r {
            SlotRef::Ready(Loaded::Pack(p)) => {
                let at = self.packs.partition_point(|q| q.mtime > p.mtime);
                self.packs.insert(at, Arc::clone(p));
                if at <= self.last_hit && self.packs.len() > 1 {
                    self.last_hit += 1;
                }
                p.idx
                    .lookup(id)
                    .map(|offset| Location::Packed { pack: p.id, offset })
            }
            SlotRef::Ready(Loaded::Midx(m)) => {
                self.midx.push(Arc::clone(m));
                m.lookup(id)
            }
            SlotRef::Ready(Loaded::Failed { error, midx }) => {
                if !midx {
                    self.failed.push((slot_path(g, slot), Arc::clone(error)));
                }
                None
            }
            SlotRef::Ready(Loaded::Covered) | SlotRef::Pending => None,
            SlotRef::Abandoned => {
                let path = slot_path(g, slot);
                let is_midx = matches!(g.slots[slot], SlotSpec::Midx { .. });
                if !is_midx {
                    self.failed
                        .push((path.clone(), Arc::new(Error::LoaderPanicked { path })));
                }
                None
            }
        }
    }
}

impl LoadedMidx {
    #[inline]
    fn lookup(&self, id: &[u8]) -> Option<Location> {
        let (pack, offset) = self.midx.lookup(id)?;
        let pack = (*self.packs.get(pack as usize)?)?;
        Some(Location::Packed { pack, offset })
    }
}

fn slot_path(g: &Generation, slot: usize) -> PathBuf {
    match &g.slots[slot] {
        SlotSpec::Pack { pack, .. } => g.packs[*pack].idx_path.clone(),
        SlotSpec::Midx { path, .. } => path.clone(),
    }
}

/// Load what slot `slot` of `map` describes. Runs outside every lock, in whichever thread claimed the slot.
fn load_slot(map: &Map, slot: usize, store: &Store) -> Loaded {
    let (kind, mode) = (store.kind, store.options.load);
    let g = map.meta();
    match &g.slots[slot] {
        SlotSpec::Midx {
            path, packs, names, ..
        } => {
            store.loads.fetch_add(1, Ordering::Relaxed);
            match MultiPackIndex::open_with(path, kind, mode) {
                // Replaced since the listing (git renames a new one over it): its pack numbers mean other packs
                // than `packs` says. Do not use it; the packs it covers load their own indices, and the next
                // refresh lists the new file.
                Ok(midx) if midx.pack_names() != &names[..] => Loaded::Failed {
                    error: Arc::new(Error::BadRepositoryFile {
                        path: path.clone(),
                        reason: "rewritten after the pack directory was listed; not used until the next refresh"
                            .to_owned(),
                    }),
                    midx: true,
                },
                Ok(midx) => Loaded::Midx(Arc::new(LoadedMidx {
                    midx: Arc::new(midx),
                    packs: packs.iter().map(|p| p.map(|p| g.packs[p].id)).collect(),
                })),
                Err(e) => Loaded::Failed {
                    error: Arc::new(e),
                    midx: true,
                },
            }
        }
        SlotSpec::Pack { pack, covered_by } => {
            if let Some(m) = covered_by {
                // Wait for the multi-pack-index that covers this pack (claimed before it) to finish loading: if
                // it loaded, this pack needs nothing; if it failed, load the pack's own index.
                loop {
                    match map.get(*m) {
                        SlotRef::Ready(Loaded::Midx(_)) => return Loaded::Covered,
                        SlotRef::Pending => {
                            let w = map.load();
                            if matches!(map.get(*m), SlotRef::Pending) {
                                map.wait_for_change(w);
                            }
                        }
                        _ => break,
                    }
                }
            }
            let p = &g.packs[*pack];
            store.loads.fetch_add(1, Ordering::Relaxed);
            match PackIndex::open_with(&p.idx_path, kind, mode) {
                Ok(idx) => Loaded::Pack(Arc::new(LoadedPack {
                    id: p.id,
                    mtime: p.mtime,
                    idx,
                })),
                Err(e) => Loaded::Failed {
                    error: Arc::new(name_wrong_hash_kind(e, &p.idx_path, kind, mode)),
                    midx: false,
                },
            }
        }
    }
}

/// A `.idx` carries no hash id: one written for the other hash function just looks malformed. If it is a
/// valid index of the other kind, say so instead of "corrupt" (only on this failure path).
fn name_wrong_hash_kind(e: Error, path: &Path, kind: HashKind, mode: LoadMode) -> Error {
    let other = match kind {
        HashKind::Sha1 => HashKind::Sha256,
        HashKind::Sha256 => HashKind::Sha1,
    };
    match e {
        Error::CorruptIndex { .. } if PackIndex::open_with(path, other, mode).is_ok() => {
            Error::WrongHashKind {
                path: path.to_path_buf(),
                expected: kind,
                found: other,
            }
        }
        e => e,
    }
}

/// One thread's access to a [`Store`]: cheap to make, `Send` but not `Sync`; lookups take `&mut self`.
///
/// A handle caches the indices it has seen and re-collects only when the store's state changed, so a hit
/// allocates nothing and a steady-state miss does one Acquire load of shared memory (plus the loose probe and,
/// under [`RefreshMode::OnMiss`], one `stat` per pack directory).
pub struct Handle {
    store: Arc<Store>,
    view: View<Loaded, Generation>,
    snap: Snapshot,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl Handle {
    /// The store this handle reads.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Where `id` is, or `None` if it is in no pack and no loose directory.
    ///
    /// Errors: [`Error::Incomplete`] when the object was not found and some index file could not be loaded (so
    /// "missing" cannot be claimed); [`Error::WrongHashKind`] for an id of the other hash kind; I/O errors of
    /// the loose probe other than "not found".
    pub fn locate(&mut self, id: &ObjectId) -> Result<Option<Location>, Error> {
        if id.kind() != self.store.kind {
            return Err(Error::WrongHashKind {
                path: self.store.objects_dir.clone(),
                expected: self.store.kind,
                found: id.kind(),
            });
        }
        let bytes = id.as_bytes();
        let mut refreshed = false;
        loop {
            // 1. Packs: what this handle has seen, then whatever became visible or is left to load.
            if let Some(loc) = self.snap.search(bytes) {
                // Hits notice a retired map too (one Acquire load), or a hit-only handle would keep the indices
                // of deleted packs mapped forever.
                if self.view.map().load().is_retired() {
                    self.move_to_current();
                    continue;
                }
                return Ok(Some(loc));
            }
            // A steady-state miss stops here: one Acquire load (P4).
            let settled = if self.view.is_settled() {
                Settled::Exhausted
            } else {
                self.settle(bytes)
            };
            match settled {
                // Like a snapshot hit: an answer from a map a refresh has replaced may name a deleted pack.
                Settled::Found(_) if self.view.map().load().is_retired() => {
                    self.move_to_current();
                    continue;
                }
                Settled::Found(loc) => return Ok(Some(loc)),
                Settled::Retired => {
                    self.move_to_current();
                    continue;
                }
                Settled::Exhausted => {}
            }
            if refreshed {
                break;
            }
            // 2. Loose objects (git's order: packs, loose, then re-read the pack directories).
            let g = self.view.map().meta();
            for (dir, l) in g.loose.iter().enumerate() {
                if l.contains(id)? {
                    return Ok(Some(Location::Loose { dir }));
                }
            }
            // 3. Refresh: only if a pack directory changed (or was listed too recently to trust).
            if self.store.options.refresh == RefreshMode::Never || !self.pack_dirs_changed() {
                break;
            }
            let map = sync::Arc::clone(self.view.map());
            self.store.refresh_from(&map, false)?;
            refreshed = true;
            if !sync::Arc::ptr_eq(&map, &self.store.current.get()) {
                self.move_to_current();
            }
            // 4. Search the packs again: a repack + prune-packed between steps 1 and 2 moved the object.
        }
        if self.snap.failed.is_empty() {
            Ok(None)
        } else {
            Err(Error::Incomplete {
                failed: self.snap.failed.clone(),
            })
        }
    }

    /// True if `id` is in the repository (see [`locate`](Self::locate)).
    pub fn contains(&mut self, id: &ObjectId) -> Result<bool, Error> {
        self.locate(id).map(|l| l.is_some())
    }

    /// The `.pack` path of `pack` as this handle's snapshot knows it (no lock), or [`Error::StalePack`].
    pub fn pack_path(&self, pack: PackId) -> Result<PathBuf, Error> {
        pack_path_in(self.view.map().meta(), pack).map_or_else(|| self.store.pack_path(pack), Ok)
    }

    fn settle(&mut self, id: &[u8]) -> Settled<Location> {
        // No reference count is touched here: the map is reached through the view.
        let snap = &mut self.snap;
        let store = &*self.store;
        self.view.settle(
            &mut |map: &Map, slot, r| snap.add(map.meta(), slot, r, id),
            &mut |map: &Map, slot| load_slot(map, slot, store),
        )
    }

    fn move_to_current(&mut self) {
        self.view = View::new(self.store.current.get());
        self.snap = Snapshot::default();
    }

    fn pack_dirs_changed(&self) -> bool {
        let g = self.view.map().meta();
        if g.untrusted {
            return true;
        }
        g.pack_dirs
            .iter()
            .zip(g.pack_dir_stamps.iter())
            .any(|(d, s)| Stamp::of(d) != *s)
    }
}
