//! Where a lookup finds loose objects: the loose source of each objects directory ([`LooseSource`]: probe,
//! watched, cached or off, opened by [`open_objects_dirs`] with the alternates), how a lookup's loose step asks
//! them ([`LooseStep`]), and a handle's own listings of watched fan-out directories ([`FanoutLists`],
//! [`LooseMode::Watched`]): what lets a miss answer loose objects without a system call while change events vouch
//! for the listings.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::dir::OpenDir;
use crate::error::Error;
use crate::loose::{LooseCache, LooseDb};
use crate::oid::{HashKind, ObjectId};
use crate::store::options::LooseMode;
use crate::store::problem::Problem;
use crate::store::watch::Watch;
use crate::sync::plain::Arc;

/// How a lookup's loose step asks the loose sources: on which path (the steady one gives up, for the slow one to
/// do, where the slow one lists fan-out directories and records failed probes) and whether the change detector
/// vouches that the watched fan-out listings whose version is current are complete (else
/// [`LooseMode::Watched`] probes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum LooseStep {
    /// The steady path, events quiet: watched listings answer; a stale listing or a failed probe gives up.
    SteadyQuiet,
    /// The steady path without the detector's word: every source probes; a failed probe gives up.
    SteadyProbe,
    /// The slow path, events quiet after its drain: watched listings answer, listed afresh where stale; failed
    /// probes are recorded (another directory may still have the object).
    SlowQuiet,
    /// The slow path otherwise: every source probes; failed probes are recorded.
    SlowProbe,
}

impl LooseStep {
    /// The slow path's step: [`SlowQuiet`](Self::SlowQuiet) if the detector vouches for the listings.
    pub(in crate::store) fn slow(quiet: bool) -> LooseStep {
        if quiet {
            LooseStep::SlowQuiet
        } else {
            LooseStep::SlowProbe
        }
    }

    /// Whether the watched listings may answer.
    #[inline(always)]
    pub(in crate::store) fn quiet(self) -> bool {
        matches!(self, LooseStep::SteadyQuiet | LooseStep::SlowQuiet)
    }

    /// Whether this is the slow path (list fan-out directories as needed, record failed probes).
    #[inline(always)]
    pub(in crate::store) fn is_slow(self) -> bool {
        matches!(self, LooseStep::SlowQuiet | LooseStep::SlowProbe)
    }
}

/// The loose objects of one objects directory, as the store's [`LooseMode`] asks for them.
pub(in crate::store) enum LooseSource {
    Probe(LooseDb),
    /// [`LooseMode::Watched`]: the handle's own listings where the store's [`Watch`] has events, else a probe.
    Watched(LooseDb),
    Cached(LooseCache),
    Off,
}

impl LooseSource {
    #[inline]
    pub(in crate::store) fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        match self {
            LooseSource::Probe(db) | LooseSource::Watched(db) => db.contains(id),
            // A name the listing has is confirmed by a probe (one `fstatat`, on a loose hit only): a file gone
            // since the listing (`repack -d` moved the object into a pack and pruned it) is not answered; the
            // lookup goes on to its refresh check and finds the object where it is now (F2).
            LooseSource::Cached(c) => Ok(c.contains(id)? && c.db().contains(id)?),
            LooseSource::Off => Ok(false),
        }
    }

    /// Whether the directory holds a file for `id` now, asked of the file system whatever the mode (a cached
    /// listing is not consulted): for [`Handle::locate_other`](crate::store::Handle::locate_other), which looks for
    /// every copy.
    pub(in crate::store) fn probe(&self, id: &ObjectId) -> Result<bool, Error> {
        match self {
            LooseSource::Probe(db) | LooseSource::Watched(db) => db.contains(id),
            LooseSource::Cached(c) => c.db().contains(id),
            LooseSource::Off => Ok(false),
        }
    }

    /// The descriptor of its objects directory, if it has one open.
    pub(in crate::store) fn dir(&self) -> Option<&OpenDir> {
        #[cfg(unix)]
        match self {
            LooseSource::Probe(db) | LooseSource::Watched(db) => Some(db.dir()),
            LooseSource::Cached(c) => Some(c.db().dir()),
            LooseSource::Off => None,
        }
        #[cfg(not(unix))]
        None
    }

    /// Call `f` with every loose object of fan-out directory `xx/` (`first` its byte) until it breaks: the
    /// directory is listed afresh whatever the mode (see [`LooseDb::each_in_fanout`]); `Off` holds none.
    pub(in crate::store) fn each_in_fanout(
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

/// The objects directories to search, in order, with the loose source of each and the problems met opening them.
pub(in crate::store) struct ObjectsDirs {
    pub(in crate::store) dirs: Arc<[PathBuf]>,
    pub(in crate::store) loose: Arc<[LooseSource]>,
    pub(in crate::store) problems: Vec<Problem>,
}

/// The objects directories to search (`objects_dir`, then its alternates), the loose source of each, and the
/// problems met on the way (alternates not followed, loose directories that could not be opened). `opened`:
/// `objects_dir` as discovery opened it; taken by its loose source, if it has one (not opened again).
pub(in crate::store) fn open_objects_dirs(
    objects_dir: &Path,
    canonical: bool,
    alternates_absent: bool,
    kind: HashKind,
    mode: LooseMode,
    opened: &mut Option<OpenDir>,
) -> Result<ObjectsDirs, Error> {
    // A later listing resolves the path again (and fails, as before, if the directory is gone).
    let alts = if canonical {
        crate::repo::alternates_of_canonical_env(objects_dir, alternates_absent)
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
    for (i, d) in dirs.iter().enumerate() {
        loose.push(match mode {
            LooseMode::None => LooseSource::Off,
            mode => match open_loose(d, kind, opened.take_if(|_| i == 0)) {
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
    Ok(ObjectsDirs {
        dirs: dirs.into(),
        loose: loose.into(),
        problems,
    })
}

/// The loose objects of objects directory `dir`, through `opened` (its descriptor) if given.
fn open_loose(dir: &Path, kind: HashKind, opened: Option<OpenDir>) -> Result<LooseDb, Error> {
    match opened {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        Some(fd) => Ok(LooseDb::with_dir(dir, kind, fd)),
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        Some(_) => LooseDb::open(dir, kind),
        None => LooseDb::open(dir, kind),
    }
}

/// What a handle holds of one fan-out directory.
#[derive(Clone)]
enum Listed {
    /// Never looked at by this handle: the first miss in it probes (one `fstatat`), which is all a single
    /// miss needs; watching and listing the directory (two watches and a listing) pays off from the second.
    Unseen,
    /// Probed once, or its listing was dropped: the next miss watches and lists it.
    Probed,
    /// Listed at this version: its ids (sorted, zero-padded to 32 bytes).
    At(u64, Box<[[u8; 32]]>),
}

/// One handle's listings of watched fan-out directories: per objects directory, per fan-out byte, the version
/// of the directory it was listed at and its ids (sorted, zero-padded to 32 bytes). Kept across refreshes
/// while the change detector is the same.
#[derive(Default)]
pub(in crate::store) struct FanoutLists {
    /// The detector the versions are of.
    watch: Option<Arc<Watch>>,
    lists: Vec<Vec<Listed>>,
}

impl FanoutLists {
    /// Whether `id` is in directory `dir`'s listing. `None` when the listing is missing or stale and `fill` is
    /// false; with `fill`, lists the directory (watching it first). Without a watch on the directory (a
    /// fallback), a probe.
    #[inline(always)]
    pub(in crate::store) fn contains(
        &mut self,
        watch: &Arc<Watch>,
        dir: usize,
        db: &LooseDb,
        id: &ObjectId,
        fill: bool,
    ) -> Option<Result<bool, Error>> {
        let b = id.first_byte();
        if let Some(w) = &self.watch
            && Arc::ptr_eq(w, watch)
            && let Some(Listed::At(v, list)) = self.lists.get(dir).map(|l| &l[usize::from(b)])
            && watch.fanout_version(dir, b) == Some(*v)
        {
            return Some(Ok(list.binary_search(&crate::loose::key_of(id)).is_ok()));
        }
        if !fill {
            return None;
        }
        Some(self.fill(watch, dir, db, id))
    }

    #[cold]
    fn fill(
        &mut self,
        watch: &Arc<Watch>,
        dir: usize,
        db: &LooseDb,
        id: &ObjectId,
    ) -> Result<bool, Error> {
        if !self.watch.as_ref().is_some_and(|w| Arc::ptr_eq(w, watch)) {
            self.watch = Some(Arc::clone(watch));
            self.lists.clear();
        }
        if self.lists.len() <= dir {
            self.lists
                .resize_with(dir + 1, || vec![Listed::Unseen; 256]);
        }
        let b = id.first_byte();
        let slot = &mut self.lists[dir][usize::from(b)];
        if matches!(slot, Listed::Unseen) {
            *slot = Listed::Probed;
            return db.contains(id);
        }
        // The version is read before the directory is listed: an event after it makes the listing stale.
        let Some(v) = watch.watch_fanout(dir, db.path(), b) else {
            *slot = Listed::Probed;
            return db.contains(id);
        };
        let list = db.read_fanout(b)?;
        let found = list.binary_search(&crate::loose::key_of(id)).is_ok();
        *slot = Listed::At(v, list);
        Ok(found)
    }
}
