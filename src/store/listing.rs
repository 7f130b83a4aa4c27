//! Listing a repository: the objects directories and their loose sources, the packs of each `pack/`
//! directory (with the [`Stamp`]s that tell when to list again), the [`PackId`]s they are given, and the slot
//! plan of a [`Generation`] (multi-pack-indices first, then the packs they do not cover, then covered packs).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::options::{LooseMode, Options, RefreshMode};
use super::problem::Problem;
use super::watch::Watch;
use crate::data::LoadMode;
use crate::error::Error;
use crate::ids::PackId;
use crate::loose::{LooseCache, LooseDb};
use crate::midx::MultiPackIndex;
use crate::oid::{HashKind, ObjectId};
use crate::sync::plain::Arc;
use crate::sync::plain::atomic::AtomicU64;

/// Identity of a file or directory as `stat` reports it: a change in any field means "changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Stamp {
    pub(super) mtime: Option<SystemTime>,
    pub(super) size: u64,
    pub(super) ino: u64,
    pub(super) dev: u64,
}

impl Stamp {
    pub(super) fn of(path: &Path) -> Option<Stamp> {
        let md = std::fs::metadata(path).ok()?;
        Some(Stamp::from_metadata(&md))
    }

    pub(super) fn from_metadata(md: &std::fs::Metadata) -> Stamp {
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
pub(super) enum SlotSpec {
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
        /// For a layer of an incremental chain: the checksum it is named after (and must end with).
        layer: Option<ObjectId>,
    },
}

/// A pack present in one generation.
#[derive(Debug)]
pub(super) struct PackInfo {
    pub(super) id: PackId,
    pub(super) idx_path: PathBuf,
    pub(super) idx_stamp: Stamp,
    /// Modification time of the `.pack` (git's recency order).
    pub(super) mtime: SystemTime,
    /// Size of the `.pack` in bytes when it was listed.
    pub(super) pack_size: u64,
    /// A `.keep` file sits beside the pack.
    pub(super) keep: bool,
    /// A `.promisor` file sits beside the pack.
    pub(super) promisor: bool,
    /// The stable number of the objects directory holding it (see [`Generation::dir_ids`]).
    pub(super) dir: usize,
}

pub(super) enum LooseSource {
    Probe(LooseDb),
    /// [`LooseMode::Watched`]: the handle's own listings where the store's [`Watch`] has events, else a probe.
    Watched(LooseDb),
    Cached(LooseCache),
    Off,
}

impl LooseSource {
    #[inline]
    pub(super) fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        match self {
            LooseSource::Probe(db) | LooseSource::Watched(db) => db.contains(id),
            LooseSource::Cached(c) => c.contains(id),
            LooseSource::Off => Ok(false),
        }
    }

    /// Call `f` with every loose object of fan-out directory `xx/` (`first` its byte) until it breaks: the
    /// directory is listed afresh whatever the mode (see [`LooseDb::each_in_fanout`]); `Off` holds none.
    pub(super) fn each_in_fanout(
        &self,
        first: u8,
        f: &mut dyn FnMut(ObjectId) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, Error> {
        match self {
            LooseSource::Probe(db) | LooseSource::Watched(db) => db.each_in_fanout(first, f),
            LooseSource::Cached(c) => c.db().each_in_fanout(first, f),
            LooseSource::Off => Ok(ControlFlow::Continue(())),
        }
    }
}

/// Everything one slot map describes: the listing it was built from.
pub(super) struct Generation {
    pub(super) slots: Box<[SlotSpec]>,
    pub(super) packs: Box<[PackInfo]>,
    /// Position in `packs` of each pack id (answers `pack_path` without a scan: thousands of packs).
    pub(super) pack_by_id: HashMap<PackId, usize>,
    /// Objects directories in search order (own first).
    pub(super) dirs: Arc<[PathBuf]>,
    /// The stable number of each of `dirs` ([`Location::Loose`](super::Location::Loose)'s `dir`).
    pub(super) dir_ids: Arc<[usize]>,
    /// Every objects directory this store has numbered so far, indexed by its stable number (append-only).
    pub(super) numbered_dirs: Arc<[PathBuf]>,
    pub(super) loose: Arc<[LooseSource]>,
    /// Each objects directory's `pack/` (precomputed: the refresh check must not allocate).
    pub(super) pack_dirs: Box<[PathBuf]>,
    /// `stat` of each of `pack_dirs` when it was listed (`None`: missing).
    pub(super) pack_dir_stamps: Box<[Option<Stamp>]>,
    /// `stat` of the own `info/alternates` when it was read.
    pub(super) alternates_stamp: Option<Stamp>,
    /// A pack directory's timestamp was too close to the listing time to trust: list again once.
    pub(super) untrusted: bool,
    /// Problems found while reading the alternates and opening loose directories (kept while the alternates
    /// file is unchanged), then those found while listing packs (an unreadable multi-pack-index).
    pub(super) problems: Arc<[Problem]>,
    /// How many of `problems` come from the alternates (carried to the next listing with `dirs`).
    pub(super) alternate_problems: usize,
    /// The miss filter of the map built from this listing (see `filter.rs`).
    pub(super) filter: super::filter::FilterCell,
    /// The change detector of `dirs` (carried to the next listing with them).
    pub(super) watch: Arc<Watch>,
    /// The pack-change count ([`Watch::drain`]) this listing was made after, raised by a refresh that finds the
    /// listing unchanged. Relaxed: it orders nothing (the listing it vouches for is already published).
    pub(super) watch_token: AtomicU64,
    /// Directories and files that could not be read, so a miss cannot be claimed: unreadable alternates (and
    /// `info/alternates` files), FIFOs, sockets or devices named like a pack's `.idx`, then unreadable pack
    /// directories. A miss reports them in [`Error::Incomplete`].
    pub(super) unreadable: Box<[(PathBuf, Arc<Error>)]>,
}

/// What survives refreshes: the pack ids handed out so far.
pub(super) struct RefreshState {
    /// Pack ids by `.idx` path, with the stamp they were given for.
    pub(super) ids: HashMap<PathBuf, (PackId, Stamp)>,
    pub(super) next_id: u64,
    /// Objects directories by stable number, in the order first seen: never shrinks, so a number always names
    /// the same directory.
    pub(super) numbered_dirs: Vec<PathBuf>,
}

pub(super) fn pack_path_in(g: &Generation, pack: PackId) -> Option<PathBuf> {
    let i = *g.pack_by_id.get(&pack)?;
    Some(g.packs[i].idx_path.with_extension("pack"))
}

pub(super) fn slot_path(g: &Generation, slot: usize) -> PathBuf {
    match &g.slots[slot] {
        SlotSpec::Pack { pack, .. } => g.packs[*pack].idx_path.clone(),
        SlotSpec::Midx { path, .. } => path.clone(),
    }
}

impl RefreshState {
    /// A state that has handed out no id.
    pub(super) fn new() -> RefreshState {
        RefreshState {
            ids: HashMap::new(),
            next_id: 0,
            numbered_dirs: Vec::new(),
        }
    }

    /// The stable number of objects directory `dir`, given one if it has none yet.
    fn dir_id(&mut self, dir: &Path) -> usize {
        match self.numbered_dirs.iter().position(|d| d == dir) {
            Some(i) => i,
            None => {
                self.numbered_dirs.push(dir.to_path_buf());
                self.numbered_dirs.len() - 1
            }
        }
    }

    /// The id of the pack whose index is `idx_path`: the one it had if the file is unchanged, else a new one.
    fn assign_id(&mut self, idx_path: &Path, idx_stamp: Stamp) -> PackId {
        match self.ids.get(idx_path) {
            Some((id, s)) if *s == idx_stamp => *id,
            _ => {
                let id = PackId(self.next_id);
                self.next_id += 1;
                self.ids.insert(idx_path.to_path_buf(), (id, idx_stamp));
                id
            }
        }
    }
}

/// List every objects directory's packs (and multi-pack-index) and plan the slots.
pub(super) fn list(
    objects_dir: &Path,
    kind: HashKind,
    options: &Options,
    state: &mut RefreshState,
    reuse_loose: Option<&Generation>,
    trust_timestamps: bool,
) -> Result<Generation, Error> {
    let started = SystemTime::now();
    let alternates_stamp = Stamp::of(&objects_dir.join("info/alternates"));
    let (dirs, loose, mut problems) = match reuse_loose {
        Some(g) => (
            Arc::clone(&g.dirs),
            Arc::clone(&g.loose),
            g.problems[..g.alternate_problems].to_vec(),
        ),
        // The first listing (`Store::open`) has `objects_dir` fresh from discovery, which canonicalized it.
        None => open_objects_dirs(
            objects_dir,
            state.numbered_dirs.is_empty(),
            kind,
            options.loose,
        )?,
    };
    // The change detector goes with the directories it watches. Drained before the pack directories are
    // listed: the listing sees every file whose event the token counts.
    let watch = match reuse_loose {
        Some(g) => Arc::clone(&g.watch),
        None if options.change_events
            && (options.refresh == RefreshMode::OnMiss || options.loose == LooseMode::Watched) =>
        {
            Arc::new(Watch::open(&dirs))
        }
        None => Arc::new(Watch::stat()),
    };
    // A token never carries the fallback bit: a fallen-back state then never equals it.
    let watch_token = watch.drain() & !super::watch::FALLBACK;
    let alternate_problems = problems.len();
    // An alternate (or an `info/alternates` file) that exists but cannot be read: its objects cannot be
    // searched, so a miss cannot be claimed.
    let mut unreadable: Vec<(PathBuf, Arc<Error>)> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::Alternate(a) => match &**a {
                crate::repo::AlternateProblem::Unreadable { path, error } => Some((
                    path.clone(),
                    Arc::new(Error::io(
                        path,
                        std::io::Error::new(error.kind(), error.to_string()),
                    )),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let dir_ids: Arc<[usize]> = dirs.iter().map(|d| state.dir_id(d)).collect();
    let numbered_dirs: Arc<[PathBuf]> = state.numbered_dirs.clone().into();

    let mut packs: Vec<PackInfo> = Vec::new();
    let mut slots: Vec<SlotSpec> = Vec::new();
    let mut covered_slots: Vec<SlotSpec> = Vec::new();
    let mut pack_dir_stamps = Vec::with_capacity(dirs.len());
    let mut pack_dirs = Vec::with_capacity(dirs.len());
    let mut untrusted = false;
    let mut seen_paths: HashMap<PathBuf, PackId> = HashMap::new();
    for (dir_index, dir) in dirs.iter().enumerate() {
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
        let scan = match scan_pack_dir(&pack_dir) {
            Ok(Some(scan)) => scan,
            Ok(None) => continue,
            // Unreadable (permissions, a loop of symbolic links, not a directory): like git, warn and answer
            // from everything else; a miss cannot be claimed.
            Err(e) => {
                let error = Arc::new(e);
                problems.push(Problem::PackDirUnreadable {
                    dir: pack_dir.clone(),
                    error: Arc::clone(&error),
                });
                unreadable.push((pack_dir, error));
                continue;
            }
        };
        for (path, e) in scan.special {
            let error = Arc::new(e);
            problems.push(Problem::IndexNotLoaded {
                path: path.clone(),
                error: Arc::clone(&error),
            });
            unreadable.push((path, error));
        }
        let first_pack = packs.len();
        for p in scan.packs {
            let id = state.assign_id(&p.idx_path, p.idx_stamp);
            seen_paths.insert(p.idx_path.clone(), id);
            packs.push(PackInfo {
                id,
                idx_path: p.idx_path,
                idx_stamp: p.idx_stamp,
                mtime: p.mtime,
                pack_size: p.pack_size,
                keep: p.keep,
                promisor: p.promisor,
                dir: dir_ids[dir_index],
            });
        }
        // The multi-pack-index (or, if there is none, the layers of an incremental chain, as git does): read
        // their pack names now, to know which packs they cover.
        let mut covered = HashMap::new();
        if options.multi_pack_index {
            let mut plan = |path: PathBuf, layer: Option<ObjectId>, problems: &mut Vec<Problem>| {
                plan_midx(
                    path,
                    layer,
                    kind,
                    options.load,
                    &packs,
                    first_pack,
                    &mut slots,
                    problems,
                    &mut covered,
                )
            };
            if scan.has_midx {
                plan(pack_dir.join("multi-pack-index"), None, &mut problems);
            } else {
                match crate::midx::chain::read_chain(&pack_dir, kind) {
                    Ok(Some(layers)) => {
                        for l in layers {
                            plan(l.path, Some(l.checksum), &mut problems);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => problems.push(Problem::MultiPackIndexIgnored {
                        path: crate::midx::chain::chain_path(&pack_dir),
                        error: Arc::new(e),
                    }),
                }
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
        return Err(Error::TooManyIndexFiles {
            objects_dir: objects_dir.to_path_buf(),
            count: slots.len(),
            max: crate::protocol::MAX_SLOTS,
        });
    }
    let pack_by_id = packs.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    Ok(Generation {
        slots: slots.into(),
        packs: packs.into(),
        pack_by_id,
        dirs,
        dir_ids,
        numbered_dirs,
        loose,
        pack_dirs: pack_dirs.into(),
        pack_dir_stamps: pack_dir_stamps.into(),
        alternates_stamp,
        untrusted,
        problems: problems.into(),
        alternate_problems,
        filter: Default::default(),
        watch,
        watch_token: AtomicU64::new(watch_token),
        unreadable: unreadable.into(),
    })
}

/// The objects directories to search (`objects_dir`, then its alternates), the loose source of each, and the
/// problems met on the way (alternates not followed, loose directories that could not be opened).
#[allow(clippy::type_complexity)]
fn open_objects_dirs(
    objects_dir: &Path,
    canonical: bool,
    kind: HashKind,
    mode: LooseMode,
) -> Result<(Arc<[PathBuf]>, Arc<[LooseSource]>, Vec<Problem>), Error> {
    // A later listing resolves the path again (and fails, as before, if the directory is gone).
    let alts = if canonical {
        crate::repo::alternates_of_canonical_env(objects_dir)
    } else {
        crate::repo::alternates(objects_dir)?
    };
    let mut problems: Vec<Problem> = alts
        .problems
        .into_iter()
        .map(|p| Problem::Alternate(Arc::new(p)))
        .collect();
    let mut dirs = vec![objects_dir.to_path_buf()];
    dirs.extend(alts.dirs);
    let mut loose = Vec::with_capacity(dirs.len());
    for d in &dirs {
        loose.push(match mode {
            LooseMode::None => LooseSource::Off,
            mode => match LooseDb::open(d, kind) {
                Ok(db) if mode == LooseMode::Cached => LooseSource::Cached(LooseCache::new(db)),
                Ok(db) if mode == LooseMode::Watched => LooseSource::Watched(db),
                Ok(db) => LooseSource::Probe(db),
                Err(e) => {
                    problems.push(Problem::LooseNotSearched {
                        dir: d.clone(),
                        error: Arc::new(e),
                    });
                    LooseSource::Off
                }
            },
        });
    }
    Ok((dirs.into(), loose.into(), problems))
}

/// One pack found by [`scan_pack_dir`].
struct ScannedPack {
    idx_path: PathBuf,
    idx_stamp: Stamp,
    /// The `.pack`'s modification time.
    mtime: SystemTime,
    pack_size: u64,
    keep: bool,
    promisor: bool,
}

/// What one `pack/` directory holds.
struct PackDirScan {
    /// Each pack with an index, newest first.
    packs: Vec<ScannedPack>,
    /// Whether there is a `multi-pack-index`.
    has_midx: bool,
    /// `.idx` names (with a `.pack` beside them) that are FIFOs, sockets or devices: never opened, each an
    /// error naming it.
    special: Vec<(PathBuf, Error)>,
}

/// Read `pack_dir`: its packs (those with both an `.idx` and a `.pack` file) and whether it has a
/// multi-pack-index. `None` if the directory does not exist; an error naming it if it cannot be read.
fn scan_pack_dir(pack_dir: &Path) -> Result<Option<PackDirScan>, Error> {
    let entries = match std::fs::read_dir(pack_dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(pack_dir, e)),
    };
    let mut dir_packs: Vec<ScannedPack> = Vec::new();
    let mut has_midx = false;
    let mut special = Vec::new();
    // Stems (`pack-<hash>`) with a `.keep` or `.promisor` file.
    let mut keep: std::collections::HashSet<String> = Default::default();
    let mut promisor: std::collections::HashSet<String> = Default::default();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(pack_dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == "multi-pack-index" {
            has_midx = true;
            continue;
        }
        if let Some(stem) = name.strip_suffix(".keep") {
            keep.insert(stem.to_owned());
            continue;
        }
        if let Some(stem) = name.strip_suffix(".promisor") {
            promisor.insert(stem.to_owned());
            continue;
        }
        // git reads every `*.idx` with a `.pack` beside it, whatever its name (t5319's `test-64-<hash>.idx`).
        if !name.ends_with(".idx") {
            continue;
        }
        let idx_path = pack_dir.join(name);
        // git ignores an index whose pack is missing; so do we. Directories named like packs are skipped, and
        // FIFOs, sockets and devices are never opened (`stat` only).
        let Ok(idx_md) = std::fs::metadata(&idx_path) else {
            continue;
        };
        if idx_md.is_dir() {
            continue;
        }
        let Ok(pack_md) = std::fs::metadata(idx_path.with_extension("pack")) else {
            continue;
        };
        if !pack_md.is_file() {
            continue;
        }
        if !idx_md.is_file() {
            // A FIFO, socket or device where a pack's index should be: say what it is, without opening it.
            if let Err(e) = crate::data::check_regular(&idx_md) {
                special.push((idx_path.clone(), Error::io(&idx_path, e)));
            }
            continue;
        }
        let mtime = pack_md.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        dir_packs.push(ScannedPack {
            idx_path,
            idx_stamp: Stamp::from_metadata(&idx_md),
            mtime,
            pack_size: pack_md.len(),
            keep: false,
            promisor: false,
        });
    }
    for p in &mut dir_packs {
        if let Some(stem) = p.idx_path.file_stem().and_then(|s| s.to_str()) {
            p.keep = keep.contains(stem);
            p.promisor = promisor.contains(stem);
        }
    }
    // Newest first (git's order), name as a tie-break for determinism.
    dir_packs.sort_by(|a, b| {
        b.mtime
            .cmp(&a.mtime)
            .then_with(|| a.idx_path.cmp(&b.idx_path))
    });
    Ok(Some(PackDirScan {
        packs: dir_packs,
        has_midx,
        special,
    }))
}

/// Plan the slot of the multi-pack-index at `midx_path` (a pack directory's `multi-pack-index`, or a `layer` of
/// its incremental chain): read its pack names, match them to `packs[first_pack..]` (this directory's packs) and
/// push a [`SlotSpec::Midx`] onto `slots`. Records in `covered` which of the packs it covers (pack index → the
/// multi-pack-index's slot). A file that cannot be read is a [`Problem`] and covers nothing; a
/// `multi-pack-index` (not a chain layer) gone since the directory was read is not (git removed it).
#[allow(clippy::too_many_arguments)]
fn plan_midx(
    midx_path: PathBuf,
    layer: Option<ObjectId>,
    kind: HashKind,
    load: LoadMode,
    packs: &[PackInfo],
    first_pack: usize,
    slots: &mut Vec<SlotSpec>,
    problems: &mut Vec<Problem>,
    covered: &mut HashMap<usize, usize>,
) {
    let midx_stamp = Stamp::of(&midx_path);
    let names = if load == LoadMode::Read {
        // No mapping at all in this mode, even a short-lived one (a file truncated in place would raise
        // SIGBUS): read the whole file and take its names.
        MultiPackIndex::open_with(&midx_path, kind, LoadMode::Read).map(|m| m.pack_names().to_vec())
    } else {
        crate::midx::read_pack_names(&midx_path, kind)
    };
    match (names, midx_stamp) {
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
                layer,
            });
        }
        // A `multi-pack-index` removed since the directory was read (a gc or repack): as if it were not there,
        // as git has it. A layer the chain file names but that is not there stays a problem (git warns).
        (Err(e), _) if layer.is_none() && e.is_vanished() => {}
        (Err(e), _) => problems.push(Problem::MultiPackIndexIgnored {
            path: midx_path,
            error: Arc::new(e),
        }),
        (Ok(_), None) => {}
    }
}
