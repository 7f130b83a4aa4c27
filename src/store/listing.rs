//! Listing a repository: the objects directories and their loose sources, the packs of each `pack/`
//! directory (with the [`Stamp`]s that tell when to list again), the [`PackId`]s they are given, and the slot
//! plan of a [`Listing`] (multi-pack-indices first, then the packs they do not cover, then covered packs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub(super) use super::freshness::Stamp;
use super::freshness::{Detector, Freshness, RealFs, Scanned};
use super::loose_sources::{LooseSource, open_objects_dirs};
use super::options::Options;
use super::problem::Problem;
use crate::data::LoadMode;
use crate::dir::{Entries, Kind, OpenDir};
use crate::error::Error;
use crate::ids::PackId;
use crate::midx::MultiPackIndex;
use crate::oid::{HashKind, ObjectId};
// plain: an `Arc` of values immutable once shared (a count, no protocol: slots and cells publish them).
use crate::sync::plain::Arc;

/// What one slot loads.
#[derive(Debug)]
pub(super) enum SlotSpec {
    /// A pack's `.idx`. `covered_by` is the slot of a multi-pack-index that lists this pack: if that loads, this
    /// slot loads nothing.
    Pack {
        pack: usize,
        covered_by: Option<usize>,
    },
    /// A multi-pack-index; `packs[i]` is the pack (index into `Listing::packs`) for pack-int-id `i`, and
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

/// A pack present in one listing.
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
    /// The stable number of the objects directory holding it (see [`Listing::dir_ids`]).
    pub(super) dir: usize,
}

/// Everything one slot map describes: the listing it was built from.
pub(super) struct Listing {
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
    /// `stat` of the own `info/alternates` when it was read.
    pub(super) alternates_stamp: Option<Stamp>,
    /// Whether this listing is still true: its change detector, token and pack directories' stamps.
    pub(super) fresh: Freshness,
    /// Problems found while reading the alternates and opening loose directories (kept while the alternates
    /// file is unchanged), then those found while listing packs (an unreadable multi-pack-index).
    pub(super) problems: Arc<[Problem]>,
    /// How many of `problems` come from the alternates (carried to the next listing with `dirs`).
    pub(super) alternate_problems: usize,
    /// The miss filter of the map built from this listing (see `filter.rs`).
    pub(super) filter: super::filter::FilterCell,
    /// Directories and files that could not be read, so a miss cannot be claimed: unreadable alternates (and
    /// `info/alternates` files), FIFOs, sockets or devices named like a pack's `.idx`, then unreadable pack
    /// directories. A miss reports them in [`Error::Incomplete`].
    pub(super) unreadable: Box<[(PathBuf, Arc<Error>)]>,
}

/// What survives refreshes: the pack ids handed out so far.
pub(super) struct RefreshState {
    /// Pack ids by `.idx` path, with the stamp they were given for and the last listing that saw the file.
    pub(super) ids: HashMap<PathBuf, (PackId, Stamp, u64)>,
    pub(super) next_id: u64,
    /// How many listings this state has seen (the current one's number).
    listing_number: u64,
    /// Objects directories by stable number, in the order first seen: never shrinks, so a number always names
    /// the same directory.
    pub(super) numbered_dirs: Vec<PathBuf>,
}

pub(super) fn pack_path_in(g: &Listing, pack: PackId) -> Option<PathBuf> {
    let i = *g.pack_by_id.get(&pack)?;
    Some(g.packs[i].idx_path.with_extension("pack"))
}

pub(super) fn slot_path(g: &Listing, slot: usize) -> PathBuf {
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
            listing_number: 0,
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

    /// The id of the pack whose index is `idx_path`: the one it had if the file is unchanged, else a new one;
    /// the file is marked seen by the current listing.
    fn assign_id(&mut self, idx_path: &Path, idx_stamp: Stamp) -> PackId {
        let number = self.listing_number;
        match self.ids.get_mut(idx_path) {
            Some((id, s, seen)) if *s == idx_stamp => {
                *seen = number;
                *id
            }
            _ => {
                let id = PackId(self.next_id);
                self.next_id += 1;
                self.ids
                    .insert(idx_path.to_path_buf(), (id, idx_stamp, number));
                id
            }
        }
    }
}

/// List every objects directory's packs (and multi-pack-index) and plan the slots. `opened`: `objects_dir` as
/// discovery opened it (the first listing), to `stat` and open its files relative to it. `defer_events`: a new
/// change detector under `RefreshMode::OnMiss` starts deferred (`Options::change_events_after`).
#[allow(clippy::too_many_arguments)]
pub(super) fn list(
    objects_dir: &Path,
    mut opened: Option<OpenDir>,
    kind: HashKind,
    options: &Options,
    state: &mut RefreshState,
    reuse_loose: Option<&Listing>,
    trust_timestamps: bool,
    defer_events: bool,
) -> Result<Listing, Error> {
    let alternates_md = crate::dir::stat_at(opened.as_ref(), objects_dir, "info/alternates");
    let alternates_stamp = alternates_md.as_ref().ok().map(|st| st.stamp);
    let alternates_absent = alternates_md.as_ref().is_err_and(|e| {
        matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    });
    let had_opened = opened.is_some();
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
            alternates_absent,
            kind,
            options.loose,
            &mut opened,
        )?,
    };
    // Discovery's descriptor of `objects_dir`: still here, or now its loose source's (which probes through it).
    let handed_over = had_opened && opened.is_none();
    let own_dir = match &opened {
        Some(d) => Some(d),
        None if handed_over => loose.first().and_then(LooseSource::dir),
        None => None,
    };
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
    state.listing_number += 1;
    // The change detector goes with the directories it watches, until a deferred one has counted its misses
    // (`Options::change_events_after`): then this listing sets events up. `Freshness::listing` takes the
    // detector and its token before it runs the scan below (docs/PROTOCOL.md, F1).
    let detector = Detector::for_options(options, defer_events);
    let prev = reuse_loose.map(|g| &g.fresh);
    let ((), fresh) = Freshness::listing(prev, detector, &dirs, &RealFs, trust_timestamps, || {
        let mut pack_dir_stamps = Vec::with_capacity(dirs.len());
        let mut pack_dirs = Vec::with_capacity(dirs.len());
        for (dir_index, dir) in dirs.iter().enumerate() {
            let pack_dir = dir.join("pack");
            let (stamp, scan) = scan_pack_dir(&pack_dir, own_dir.filter(|_| dir_index == 0));
            pack_dir_stamps.push(stamp);
            pack_dirs.push(pack_dir.clone());
            let scan = match scan {
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
                let mut plan =
                    |path: PathBuf, layer: Option<ObjectId>, problems: &mut Vec<Problem>| {
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
                } else if scan.has_chain_dir {
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
        Scanned {
            value: (),
            pack_dirs,
            stamps: pack_dir_stamps,
        }
    });
    // Forget ids of packs that are gone (not seen by this listing), so the map does not grow with every repack.
    let number = state.listing_number;
    state.ids.retain(|_, (_, _, seen)| *seen == number);
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
    Ok(Listing {
        slots: slots.into(),
        packs: packs.into(),
        pack_by_id,
        dirs,
        dir_ids,
        numbered_dirs,
        loose,
        alternates_stamp,
        fresh,
        problems: problems.into(),
        alternate_problems,
        filter: Default::default(),
        unreadable: unreadable.into(),
    })
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
    /// Whether there is a `multi-pack-index.d` (where an incremental chain lives): without one, no chain file
    /// is looked for (one `stat` fewer; a chain made after the listing changes the directory's stamp).
    has_chain_dir: bool,
    /// `.idx` names (with a `.pack` beside them) that are FIFOs, sockets or devices: never opened, each an
    /// error naming it.
    special: Vec<(PathBuf, Error)>,
}

/// Read `pack_dir`: its stamp, its packs (those with both an `.idx` and a `.pack` file) and whether it has a
/// multi-pack-index (or a chain of them). `None` (and no stamp) if the directory does not exist; an error
/// naming it if it cannot be read (then the stamp is its path's `stat`, if any). `parent`: its objects directory
/// opened, if it was.
fn scan_pack_dir(
    pack_dir: &Path,
    parent: Option<&OpenDir>,
) -> (Option<Stamp>, Result<Option<PackDirScan>, Error>) {
    let mut dir = match Entries::open(pack_dir, parent) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, Ok(None)),
        Err(e) => return (Stamp::of(pack_dir), Err(Error::io(pack_dir, e))),
    };
    (Some(dir.stamp), scan_entries(&mut dir, pack_dir).map(Some))
}

fn scan_entries(dir: &mut Entries, pack_dir: &Path) -> Result<PackDirScan, Error> {
    let mut dir_packs: Vec<ScannedPack> = Vec::new();
    let mut has_midx = false;
    let mut has_chain_dir = false;
    let mut special = Vec::new();
    // Stems (`pack-<hash>`) with a `.keep` or `.promisor` file.
    let mut keep: std::collections::HashSet<String> = Default::default();
    let mut promisor: std::collections::HashSet<String> = Default::default();
    // The `.pack` name beside each `.idx` (one buffer for the directory).
    let mut pack_name = String::new();
    while let Some(name) = dir.next_name() {
        let Some(name) = name.map_err(|e| Error::io(pack_dir, e))? else {
            continue;
        };
        if name == "multi-pack-index" {
            has_midx = true;
            continue;
        }
        if name == crate::midx::chain::CHAIN_DIR {
            has_chain_dir = true;
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
        // git reads every `*.idx` with a `.pack` beside it, whatever its name (t5319's `test-64-<hash>.idx`),
        // but for its own temporary files: `repack` writes `.tmp-<pid>-pack-<hash>.*` and renames them into
        // place, `.pack` first, removing the old packs only after (so their objects are never only there).
        let Some(stem) = name.strip_suffix(".idx") else {
            continue;
        };
        if stem.starts_with(".tmp-") {
            continue;
        }
        // git ignores an index whose pack is missing; so do we. Directories named like packs are skipped, and
        // FIFOs, sockets and devices are never opened (`stat` only).
        let Ok(idx_md) = dir.stat(&name) else {
            continue;
        };
        if idx_md.kind == Kind::Dir {
            continue;
        }
        pack_name.clear();
        pack_name.push_str(stem);
        pack_name.push_str(".pack");
        let Ok(pack_md) = dir.stat(&pack_name) else {
            continue;
        };
        if pack_md.kind != Kind::File {
            continue;
        }
        let idx_path = pack_dir.join(&name);
        if idx_md.kind != Kind::File {
            // A FIFO, socket or device where a pack's index should be: say what it is, without opening it.
            if let Err(e) =
                std::fs::metadata(&idx_path).and_then(|md| crate::data::check_regular(&md))
            {
                special.push((idx_path.clone(), Error::io(&idx_path, e)));
            }
            continue;
        }
        dir_packs.push(ScannedPack {
            idx_path,
            idx_stamp: idx_md.stamp,
            mtime: pack_md.stamp.mtime.unwrap_or(SystemTime::UNIX_EPOCH),
            pack_size: pack_md.stamp.size,
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
    Ok(PackDirScan {
        packs: dir_packs,
        has_midx,
        has_chain_dir,
        special,
    })
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

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::store::options::{LooseMode, RefreshMode};

    /// A pack keeps its id across listings while its `.idx` is unchanged, gets a new one when it changes, and
    /// is forgotten once a listing no longer sees it (the map does not grow with every repack).
    #[test]
    fn pack_ids_survive_listings_and_are_forgotten_when_gone() {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path().canonicalize().unwrap();
        let pack_dir = objects.join("pack");
        std::fs::create_dir(&pack_dir).unwrap();
        let add = |stem: &str, idx: &[u8]| {
            std::fs::write(pack_dir.join(format!("{stem}.idx")), idx).unwrap();
            std::fs::write(pack_dir.join(format!("{stem}.pack")), b"PACK").unwrap();
        };
        let options = Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None);
        let mut state = RefreshState::new();
        let ids = |state: &mut RefreshState| {
            let g = list(
                &objects,
                None,
                HashKind::Sha1,
                &options,
                state,
                None,
                false,
                false,
            )
            .unwrap();
            let mut v: Vec<(String, PackId)> = g
                .packs
                .iter()
                .map(|p| {
                    (
                        p.idx_path
                            .file_name()
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                        p.id,
                    )
                })
                .collect();
            v.sort();
            assert_eq!(
                state.ids.len(),
                v.len(),
                "the state holds the packs listed, no more"
            );
            v
        };
        add("pack-a", b"a");
        let first = ids(&mut state);
        assert_eq!(first.len(), 1);
        add("pack-b", b"b");
        let second = ids(&mut state);
        assert_eq!(second[0], first[0], "unchanged: same id");
        assert_ne!(second[1].1, first[0].1);
        std::fs::remove_file(pack_dir.join("pack-a.idx")).unwrap();
        let third = ids(&mut state);
        assert_eq!(third, vec![second[1].clone()], "a forgotten, b kept");
        add("pack-b", b"bb");
        let fourth = ids(&mut state);
        assert_eq!(fourth.len(), 1);
        assert_ne!(fourth[0].1, third[0].1, "a changed .idx: a new id");
        add("pack-a", b"a");
        let fifth = ids(&mut state);
        assert!(
            fifth.iter().all(|(_, id)| *id != first[0].1),
            "a forgotten id is not handed out again"
        );
    }

    /// The listing's stamp of a pack directory is its path's `stat`, and a `multi-pack-index.d` is seen (a chain
    /// is looked for only then); a missing directory has neither a stamp nor a scan.
    #[test]
    fn scan_stamps_the_directory_and_sees_the_chain_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let pack_dir = tmp.path().join("pack");
        let (stamp, scan) = scan_pack_dir(&pack_dir, None);
        assert!(stamp.is_none() && matches!(scan, Ok(None)));
        std::fs::create_dir(&pack_dir).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, None);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert!(!scan.unwrap().unwrap().has_chain_dir);
        std::fs::create_dir(pack_dir.join(crate::midx::chain::CHAIN_DIR)).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, None);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert!(scan.unwrap().unwrap().has_chain_dir);
    }
}
