//! Listing a repository: the objects directories and their loose sources, the packs of each `pack/`
//! directory (with the [`Stamp`]s that tell when to list again), the [`PackId`]s they are given, and the slot
//! plan, in one [`Listing`]. [`list`] goes in phases: the objects directories (`loose_sources.rs`), then under
//! the freshness protocol each pack directory read (`scan.rs`), its multi-pack-index files opened (`plan.rs`), its
//! packs `stat`ed (`scan.rs`) and planned (`plan.rs`), then the listing. Each step is called from here in turn:
//! none calls another back.

pub(crate) mod bloom;
pub(in crate::store) mod filter;
pub(in crate::store) mod load;
pub(in crate::store) mod loose_sources;
pub(in crate::store) mod plan;
pub(in crate::store) mod scan;
pub(in crate::store) mod successor;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use self::loose_sources::{LooseSource, open_objects_dirs};
use self::plan::{Plan, SlotSpec};
use self::scan::{ListedPack, read_pack_dir};
use crate::dir::OpenDir;
use crate::error::Error;
use crate::ids::PackId;
use crate::oid::HashKind;
pub(in crate::store) use crate::store::freshness::Stamp;
use crate::store::freshness::{Detector, Freshness, RealFs, Scanned};
use crate::store::options::Options;
use crate::store::problem::Problem;
use crate::sync::plain::Arc;

/// Everything one slot map describes: the listing it was built from.
pub(in crate::store) struct Listing {
    pub(in crate::store) slots: Box<[SlotSpec]>,
    pub(in crate::store) packs: Box<[ListedPack]>,
    /// Position in `packs` of each pack id (answers `pack_path` without a scan: thousands of packs).
    pub(in crate::store) pack_by_id: HashMap<PackId, usize>,
    /// Objects directories in search order (own first).
    pub(in crate::store) dirs: Arc<[PathBuf]>,
    /// The stable number of each of `dirs` ([`Location::Loose`](crate::store::Location::Loose)'s `dir`).
    pub(in crate::store) dir_ids: Arc<[usize]>,
    /// Every objects directory this store has numbered so far, indexed by its stable number (append-only).
    pub(in crate::store) numbered_dirs: Arc<[PathBuf]>,
    pub(in crate::store) loose: Arc<[LooseSource]>,
    /// `stat` of the own `info/alternates` when it was read.
    pub(in crate::store) alternates_stamp: Option<Stamp>,
    /// Whether this listing is still true: its change detector, token and pack directories' stamps.
    pub(in crate::store) fresh: Freshness,
    /// Problems found while reading the alternates and opening loose directories (kept while the alternates
    /// file is unchanged), then those found while listing packs (an unreadable multi-pack-index).
    pub(in crate::store) problems: Arc<[Problem]>,
    /// How many of `problems` come from the alternates (carried to the next listing with `dirs`).
    pub(in crate::store) alternate_problems: usize,
    /// The miss filter of the map built from this listing (see `filter.rs`).
    pub(in crate::store) filter: self::filter::FilterCell,
    /// Directories and files that could not be read, so a miss cannot be claimed: unreadable alternates (and
    /// `info/alternates` files), objects directories whose loose objects could not be opened, FIFOs, sockets or
    /// devices named like a pack's `.idx`, then unreadable pack directories. A miss reports them in
    /// [`Error::Incomplete`].
    pub(in crate::store) unreadable: Box<[(PathBuf, Arc<Error>)]>,
}

/// What survives refreshes: the pack ids handed out so far.
pub(in crate::store) struct RefreshState {
    /// Pack ids by `.idx` path, with the stamp they were given for and the last listing that saw the file.
    pub(in crate::store) ids: HashMap<PathBuf, (PackId, Stamp, u64)>,
    pub(in crate::store) next_id: u64,
    /// How many listings this state has seen (the current one's number).
    pub(in crate::store) listing_number: u64,
    /// Objects directories by stable number, in the order first seen: never shrinks, so a number always names
    /// the same directory.
    pub(in crate::store) numbered_dirs: Vec<PathBuf>,
    /// Packs kept by [`keep_loaded`](self::successor::keep_loaded) though the last listings missed them: how
    /// many listings in a row did.
    pub(in crate::store) kept: HashMap<PathBuf, u32>,
}

pub(in crate::store) fn pack_path_in(listing: &Listing, pack: PackId) -> Option<PathBuf> {
    let i = *listing.pack_by_id.get(&pack)?;
    Some(listing.packs[i].idx_path.with_extension("pack"))
}

pub(in crate::store) fn slot_path(listing: &Listing, slot: usize) -> PathBuf {
    match &listing.slots[slot] {
        SlotSpec::Pack { pack, .. } => listing.packs[*pack].idx_path.clone(),
        SlotSpec::Midx { path, .. } => path.clone(),
    }
}

impl RefreshState {
    /// A state that has handed out no id.
    pub(in crate::store) fn new() -> RefreshState {
        RefreshState {
            ids: HashMap::new(),
            next_id: 0,
            listing_number: 0,
            numbered_dirs: Vec::new(),
            kept: HashMap::new(),
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

    /// The id of the pack whose index is `idx_path`: the one it had if the file is unchanged (or if its `stat`
    /// failed this time, [`Stamp::unknown`]: a failed call is no evidence of a change, and the locations already
    /// answered keep naming it), else a new one; the file is marked seen by the current listing.
    fn assign_id(&mut self, idx_path: &Path, idx_stamp: Stamp) -> PackId {
        let number = self.listing_number;
        match self.ids.get_mut(idx_path) {
            Some((id, s, seen)) if *s == idx_stamp || idx_stamp.is_unknown() => {
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

/// What [`list`] is asked to list.
pub(in crate::store) struct ListRequest<'a> {
    pub(in crate::store) objects_dir: &'a Path,
    /// `objects_dir` as discovery opened it (the first listing), to `stat` and open its files relative to it.
    pub(in crate::store) opened: Option<OpenDir>,
    pub(in crate::store) kind: HashKind,
    pub(in crate::store) options: &'a Options,
    /// The listing this one replaces, when its objects directories and loose sources still hold (the
    /// alternates unchanged, no fresh loose caches asked for): they are carried over, not opened again.
    pub(in crate::store) reuse_loose: Option<&'a Listing>,
    /// A re-listing after one too recent to trust: its timestamps are trusted ([`Freshness::listing`]).
    pub(in crate::store) trust_timestamps: bool,
    /// A new change detector under `RefreshMode::OnMiss` starts deferred (`Options::change_events_after`).
    pub(in crate::store) defer_events: bool,
}

/// The objects directories of a listing and what was found opening them (the first phase of [`list`]).
struct SearchedDirs {
    dirs: Arc<[PathBuf]>,
    loose: Arc<[LooseSource]>,
    /// The alternates' problems first ([`Listing::alternate_problems`] of them), then the pack directories'.
    problems: Vec<Problem>,
    alternate_problems: usize,
    unreadable: Vec<(PathBuf, Arc<Error>)>,
    alternates_stamp: Option<Stamp>,
    /// Discovery's descriptor of `objects_dir`, unless its loose source took it.
    opened: Option<OpenDir>,
    /// Whether discovery's descriptor went to the own loose source (which probes through it).
    handed_over: bool,
}

impl SearchedDirs {
    /// Discovery's descriptor of the own objects directory: still here, or now its loose source's.
    fn own_dir(&self) -> Option<&OpenDir> {
        match &self.opened {
            Some(d) => Some(d),
            None if self.handed_over => self.loose.first().and_then(LooseSource::dir),
            None => None,
        }
    }
}

/// The packs and slots found under the freshness protocol (the second phase of [`list`]).
struct Packs {
    packs: Vec<ListedPack>,
    plan: Plan,
}

/// List every objects directory's packs (and multi-pack-index) and plan the slots.
pub(in crate::store) fn list(
    mut req: ListRequest<'_>,
    state: &mut RefreshState,
) -> Result<Listing, Error> {
    let mut dirs = objects_dirs(&mut req, state)?;
    let dir_ids: Arc<[usize]> = dirs.dirs.iter().map(|d| state.dir_id(d)).collect();
    let numbered_dirs: Arc<[PathBuf]> = state.numbered_dirs.clone().into();
    state.listing_number += 1;
    // The change detector goes with the directories it watches, until a deferred one has counted its misses
    // (`Options::change_events_after`): then this listing sets events up. `Freshness::listing` takes the
    // detector and its token before it runs the scan below (docs/FRESHNESS.md, F1).
    let detector = Detector::for_options(req.options, req.defer_events);
    let prev = req.reuse_loose.map(|g| &g.fresh);
    let midx = req.options.multi_pack_index.then_some(req.options.load);
    let mut packs = Packs {
        packs: Vec::new(),
        plan: Plan::new(req.kind, midx),
    };
    let searched = Arc::clone(&dirs.dirs);
    let ((), fresh) = Freshness::listing(
        prev,
        detector,
        &searched,
        &RealFs,
        req.trust_timestamps,
        || list_pack_dirs(&mut dirs, &dir_ids, &mut packs, state),
    );
    // Forget ids of packs that are gone (not seen by this listing), so the map does not grow with every repack.
    let number = state.listing_number;
    state.ids.retain(|_, (_, _, seen)| *seen == number);
    let slots = packs.plan.finish();
    if slots.len() > crate::protocol::MAX_SLOTS {
        return Err(Error::TooManyIndexFiles {
            objects_dir: req.objects_dir.to_path_buf(),
            count: slots.len(),
            max: crate::protocol::MAX_SLOTS,
        });
    }
    let pack_by_id = packs
        .packs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, i))
        .collect();
    Ok(Listing {
        slots: slots.into(),
        packs: packs.packs.into(),
        pack_by_id,
        dirs: dirs.dirs,
        dir_ids,
        numbered_dirs,
        loose: dirs.loose,
        alternates_stamp: dirs.alternates_stamp,
        fresh,
        problems: dirs.problems.into(),
        alternate_problems: dirs.alternate_problems,
        filter: Default::default(),
        unreadable: dirs.unreadable.into(),
    })
}

/// The first phase of [`list`]: the stamp of `info/alternates`, the objects directories to search and their
/// loose sources (carried over from `reuse_loose`, or opened with the alternates), and what could not be read.
fn objects_dirs(req: &mut ListRequest<'_>, state: &RefreshState) -> Result<SearchedDirs, Error> {
    let (objects_dir, mut opened) = (req.objects_dir, req.opened.take());
    let alternates_md = crate::dir::stat_at(opened.as_ref(), objects_dir, "info/alternates");
    let alternates_stamp = alternates_md.as_ref().ok().map(|st| st.stamp);
    let alternates_absent = alternates_md.as_ref().is_err_and(|e| {
        matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    });
    let had_opened = opened.is_some();
    let (dirs, loose, problems) = match req.reuse_loose {
        Some(g) => (
            Arc::clone(&g.dirs),
            Arc::clone(&g.loose),
            g.problems[..g.alternate_problems].to_vec(),
        ),
        // The first listing (`Store::open`) has `objects_dir` fresh from discovery, which canonicalized it.
        None => {
            let o = open_objects_dirs(
                objects_dir,
                state.numbered_dirs.is_empty(),
                alternates_absent,
                req.kind,
                req.options.loose,
                &mut opened,
            )?;
            (o.dirs, o.loose, o.problems)
        }
    };
    // An alternate (or an `info/alternates` file) that exists but cannot be read, or an objects directory whose
    // loose objects could not be opened: its objects cannot be searched, so a miss cannot be claimed.
    let unreadable: Vec<(PathBuf, Arc<Error>)> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::Alternate(a) => match &**a {
                crate::repo::AlternateProblem::Unreadable { path, error } => Some((
                    path.clone(),
                    // The OS's error number kept (EIO and EMFILE have no `ErrorKind` of their own): the
                    // fault policy tells a failure that may pass by it (`fault::is_transient`).
                    Arc::new(Error::io(
                        path,
                        error.raw_os_error().map_or_else(
                            || std::io::Error::new(error.kind(), error.to_string()),
                            std::io::Error::from_raw_os_error,
                        ),
                    )),
                )),
                _ => None,
            },
            Problem::LooseNotSearched { dir, error } => Some((dir.clone(), Arc::clone(error))),
            _ => None,
        })
        .collect();
    Ok(SearchedDirs {
        dirs,
        loose,
        alternate_problems: problems.len(),
        problems,
        unreadable,
        alternates_stamp,
        handed_over: had_opened && opened.is_none(),
        opened,
    })
}

/// The second phase of [`list`], the scan the freshness protocol runs: read each objects directory's `pack/`
/// (its packs get their ids from `state`) and plan its slots; returns the pack directories and their stamps.
fn list_pack_dirs(
    dirs: &mut SearchedDirs,
    dir_ids: &[usize],
    packs: &mut Packs,
    state: &mut RefreshState,
) -> Scanned<()> {
    let mut pack_dir_stamps = Vec::with_capacity(dirs.dirs.len());
    let mut pack_dirs = Vec::with_capacity(dirs.dirs.len());
    for (dir_index, dir) in Arc::clone(&dirs.dirs).iter().enumerate() {
        let pack_dir = dir.join("pack");
        let parent = dirs.own_dir().filter(|_| dir_index == 0);
        // A scan in two steps, the multi-pack-index files opened between them: once the directory's entries are
        // read and before its packs are `stat`ed (the packs they cover need no `stat`: `ListedPack::stated`).
        let (stamp, read) = read_pack_dir(&pack_dir, parent);
        let mut midx_problems = Vec::new();
        let scan = read.map(|read| {
            read.map(|read| {
                let covered = packs
                    .plan
                    .open_dir_midx(&pack_dir, read.midx, &mut midx_problems);
                read.stat_packs(&pack_dir, &covered)
            })
        });
        dirs.problems.append(&mut midx_problems);
        pack_dir_stamps.push(stamp);
        pack_dirs.push(pack_dir.clone());
        let scan = match scan {
            Ok(Some(scan)) => scan,
            Ok(None) => continue,
            // Unreadable (permissions, a loop of symbolic links, not a directory): like git, warn and answer
            // from everything else; a miss cannot be claimed.
            Err(e) => {
                let error = Arc::new(e);
                dirs.problems.push(Problem::PackDirUnreadable {
                    dir: pack_dir.clone(),
                    error: Arc::clone(&error),
                });
                dirs.unreadable.push((pack_dir, error));
                continue;
            }
        };
        for (path, e) in scan.special {
            let error = Arc::new(e);
            dirs.problems.push(Problem::IndexNotLoaded {
                path: path.clone(),
                error: Arc::clone(&error),
            });
            dirs.unreadable.push((path, error));
        }
        // Ids in search order, each pack numbered with its objects directory.
        let first = packs.packs.len();
        packs
            .packs
            .extend(scan.packs.into_iter().map(|p| ListedPack {
                id: state.assign_id(&p.idx_path, p.idx_stamp),
                dir: dir_ids[dir_index],
                ..p
            }));
        packs.plan.pack_dir(&packs.packs, first);
    }
    Scanned {
        value: (),
        pack_dirs,
        stamps: pack_dir_stamps,
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::store::options::{LooseMode, RefreshMode};

    /// List `objects` (no refresh, no loose objects) with `state`: each pack's `.idx` name, whether the listing
    /// `stat`ed it, and its id, sorted by name.
    fn listed_packs(objects: &Path, state: &mut RefreshState) -> Vec<(String, bool, PackId)> {
        let options = Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None);
        let req = ListRequest {
            objects_dir: objects,
            opened: None,
            kind: HashKind::Sha1,
            options: &options,
            reuse_loose: None,
            trust_timestamps: false,
            defer_events: false,
        };
        let listing = list(req, state).unwrap();
        let mut v: Vec<(String, bool, PackId)> = listing
            .packs
            .iter()
            .map(|p| {
                let name = p.idx_path.file_name().unwrap().to_string_lossy();
                (name.into_owned(), p.stated, p.id)
            })
            .collect();
        v.sort();
        v
    }

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
        let mut state = RefreshState::new();
        let ids = |state: &mut RefreshState| {
            let v: Vec<(String, PackId)> = listed_packs(&objects, state)
                .into_iter()
                .map(|(name, _, id)| (name, id))
                .collect();
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

    /// A pack the multi-pack-index lists is listed without a `stat` and keeps its id across listings
    /// while its `.idx` is the same file (the same inode); a file renamed over it (git's only way of replacing a
    /// pack) gives it a new id, and an old location's id is then stale. A pack the file does not list is
    /// `stat`ed as before.
    #[cfg(unix)]
    #[test]
    fn a_covered_pack_keeps_its_id_until_a_file_is_renamed_over_it() {
        use crate::midx::write::{PackEntries, write_midx};
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path().canonicalize().unwrap();
        let pack_dir = objects.join("pack");
        std::fs::create_dir(&pack_dir).unwrap();
        for stem in ["pack-a", "pack-b"] {
            std::fs::write(pack_dir.join(format!("{stem}.idx")), b"idx").unwrap();
            std::fs::write(pack_dir.join(format!("{stem}.pack")), b"PACK").unwrap();
        }
        let covers_a = PackEntries {
            name: "pack-a.idx".into(),
            entries: Vec::new(),
        };
        let midx = write_midx(1, HashKind::Sha1, &[covers_a]).unwrap();
        std::fs::write(pack_dir.join("multi-pack-index"), midx).unwrap();
        let mut state = RefreshState::new();
        let ids = |state: &mut RefreshState| listed_packs(&objects, state);
        let first = ids(&mut state);
        assert_eq!(
            first
                .iter()
                .map(|p| (p.0.as_str(), p.1))
                .collect::<Vec<_>>(),
            [("pack-a.idx", false), ("pack-b.idx", true)],
            "the covered pack is not stat'ed, the other is"
        );
        assert_eq!(ids(&mut state), first, "unchanged: the same ids");
        let aside = tmp.path().join("new.idx");
        std::fs::write(&aside, b"new idx").unwrap();
        std::fs::rename(&aside, pack_dir.join("pack-a.idx")).unwrap();
        let third = ids(&mut state);
        assert_ne!(third[0].2, first[0].2, "renamed over: a new id");
        assert_eq!(third[1], first[1], "the other pack keeps its id");
    }
}
