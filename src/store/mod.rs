//! The concurrent store: lazily loaded pack indices, cached per-thread handles, refresh on miss.
//!
//! A [`Store`] is shared by `Arc`; each thread makes its own [`Handle`]. Index files are loaded on demand, one
//! slot at a time, by whichever lookup needs them first, through the crate-private protocol of `src/protocol.rs`
//! (`docs/PROTOCOL.md`). A lookup that must wait for another thread's load blocks. Once everything is loaded, a
//! miss reads the protocol's shared state with one Acquire load (no read-modify-write, lock or allocation); what
//! else it does depends on the options (`docs/PROTOCOL.md`, P4, and `docs/FRESHNESS.md`, section 1): under
//! `RefreshMode::Never`, no system call but the loose probe asked for (one `fstatat` per objects directory with
//! `LooseMode::Probe`); in the default configuration, once change events are set up (after 2 048 misses, on
//! Linux), one `ioctl` (`FIONREAD` on the store's inotify descriptor) and one more Acquire load, of the change
//! detector's state, in place of the pack directories' `stat`s and the probes it makes before.
//!
//! # The files, along the data path
//!
//! - `mod.rs` (here): [`Store`] (open, refresh, problems) and [`Location`].
//! - `lookup/`: answering one id or many. `handle.rs` ([`Handle`], the search order, the slow path), `steady.rs`
//!   (the steady path, one arm per `MissShape`), `snapshot.rs` (the search of what a handle has loaded),
//!   `midx_lookup.rs` (through a multi-pack-index), `miss.rs` (the answer for an id found nowhere), `batch.rs`
//!   ([`Handle::locate_many`]).
//! - `listing/`: what a repository holds and how it is loaded. `mod.rs` (the `Listing`, built in phases),
//!   `loose_sources.rs` (the objects directories), `scan.rs` (a pack directory), `plan.rs` (the slots),
//!   `load.rs` (loading one slot), `successor.rs` (the next listing's map, what it keeps), `filter.rs` and
//!   `bloom.rs` (the listing's miss filter).
//! - `queries/`: the rest of the API: `prefix.rs`, `iter.rs`, `in_pack.rs`, `copies.rs`, `pack.rs`
//!   ([`PackInfo`], liveness), `verify.rs`.
//! - Freshness, the second protocol (`docs/FRESHNESS.md`): `freshness.rs` (is a listing still true), `watch.rs`
//!   (the change detectors: `stat`, and inotify in `watch/inotify.rs`), `relist.rs` (listing again after a miss
//!   or a fault).
//! - `options.rs`, `metrics.rs`, `problem.rs`; `hooks.rs` (the points where the crate's own tests act, nothing
//!   outside them); the tests that need the store's internals: `edge_tests.rs`, `relist_tests.rs`.
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

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::oid::HashKind;
use crate::protocol::{Current, SlotMap};
// `lock_plain` locks the report lists (`Store::problems`), which no answer reads.
use crate::sync::plain::{Arc, lock as lock_plain};
use crate::sync::{self, Mutex, Ordering, lock};

#[cfg(all(test, not(any(loom, shuttle))))]
mod edge_tests;
mod freshness;
mod hooks;
pub(crate) mod listing;
mod lookup;
mod metrics;
mod options;
mod problem;
mod queries;
mod relist;
#[cfg(all(test, not(any(loom, shuttle))))]
mod relist_tests;
mod watch;
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
pub use freshness::model as freshness_model;
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
pub use freshness::model::batch as batch_model;
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
pub use watch::model as watch_model;

pub use listing::filter::MissFilterStats;
pub use lookup::handle::Handle;
pub use metrics::Metrics;
pub use options::{
    IncompleteMode, LoadMode, LooseMode, MidxCheck, MissFilterMode, Options, RefreshMode,
};
pub use problem::Problem;
pub use queries::iter::ObjectCounts;
pub use queries::pack::PackInfo;
pub use queries::prefix::PrefixLookup;
pub use queries::verify::Verified;

pub use crate::ids::PackId;

use listing::load::{Loaded, Map};
use listing::successor::{self, build_successor, same_listing};
use listing::{ListRequest, Listing, RefreshState, Stamp, list, pack_path_in, slot_path};
use metrics::Counters;

/// Where an object is: what a caller needs to read it (see `docs/API.md`, "From a Location to bytes").
///
/// - `Packed { pack, offset }`: [`Store::pack`] (or [`Handle::pack`]) gives the pack's path, size and markers;
///   the object's entry starts at `offset` in the `.pack` file. A [`PackId`] names one pack for as long as it
///   exists and is never reused, so a location never leads to another pack's bytes: once the pack is gone,
///   [`Store::pack`] answers [`Error::StalePack`] (refresh, then locate again).
/// - `Loose { dir }`: the object is the zlib-compressed file [`Store::loose_path`]`(dir, id)`
///   (`<objects dir>/xx/yyyy…`). `dir` is a stable number of the objects directory: 0 is the repository's own,
///   alternates are numbered as the store first sees them, and a refresh that changes the alternates never
///   renumbers a directory.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a, loose
/// use odb_index::{Location, ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?;
/// let mut handle = store.handle();
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// let Some(Location::Loose { dir }) = handle.locate(&hello)? else { panic!("loose") };
/// assert_eq!(dir, 0); // the repository's own objects directory, before its alternates
/// assert!(handle.loose_path(dir, &hello).expect("a directory the store numbered").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// In a pack, at this byte offset of the `.pack` file.
    Packed {
        /// Which pack ([`Store::pack`], [`Handle::pack`]).
        pack: PackId,
        /// Offset of the object's entry in the `.pack` file.
        offset: u64,
    },
    /// A loose object in the objects directory numbered `dir`.
    Loose {
        /// The stable number of the objects directory ([`Store::objects_dir_of`], [`Store::loose_path`]).
        dir: usize,
    },
}

/// A repository's object lookup state, shared by all threads (`Send + Sync`, use it through `Arc`).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?; // shared: an `Arc<Store>`
/// let mut handle = store.handle(); // one per thread
/// let hello: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
/// assert!(handle.contains(&hello)?);
/// assert_eq!(store.pack_infos().len(), 1);
/// assert!(store.problems().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Store {
    objects_dir: PathBuf,
    kind: HashKind,
    options: Options,
    current: Current<Loaded, Listing>,
    /// Serializes refreshes and owns what survives them.
    refresh: Mutex<RefreshState>,
    /// What the store has done ([`Store::metrics`]; touched once per load, listing or build, never on a lookup).
    counters: Counters,
    /// Loose files a reader found not to be objects ([`Store::report_unreadable_loose`]), the first
    /// [`MAX_UNREADABLE_LOOSE`] of them, each path once.
    #[expect(
        clippy::disallowed_types,
        reason = "sync::plain: a report list under one lock, which no answer reads"
    )]
    unreadable_loose: crate::sync::plain::Mutex<Vec<Problem>>,
}

/// How many unreadable loose files [`Store::problems`] keeps (each is reported when a reader meets it).
#[cfg(feature = "reader-hooks")]
const MAX_UNREADABLE_LOOSE: usize = 64;

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
        let (repo, opened) = crate::repo::discover_objects(path, options.hash_kind)?;
        let mut state = RefreshState::new();
        let req = ListRequest {
            objects_dir: &repo.objects_dir,
            opened,
            kind: repo.hash_kind,
            options: &options,
            reuse_loose: None,
            trust_timestamps: false,
            defer_events: options.change_events_after > 0,
        };
        let listing = list(req, &mut state)?;
        let (ready, unloaded) = (Vec::new(), listing.slots.len());
        let map = SlotMap::new(ready, unloaded, listing);
        Ok(Arc::new(Store {
            objects_dir: repo.objects_dir,
            kind: repo.hash_kind,
            options,
            current: Current::new(map),
            refresh: Mutex::new(state),
            counters: Counters {
                listings: 1.into(),
                ..Counters::default()
            },
            unreadable_loose: Default::default(),
        }))
    }

    /// Whether lookups learn of changes to the repository from file system events (inotify: Linux, local
    /// file systems) rather than by `stat` and probing: then a miss asks the kernel one question (one `ioctl`)
    /// whatever the number of objects directories, and [`LooseMode::Watched`] answers loose objects from
    /// listings. False until the store's handles have answered
    /// [`change_events_after`](Options::change_events_after) misses (2 048 by default; the miss after that sets
    /// them up), on other systems, on network file systems, with [`RefreshMode::Never`] and a loose mode
    /// other than `Watched`, and once events cannot be trusted (a watch limit reached, a pack or objects
    /// directory replaced): the store then stats and probes, as correct and slower. Each store with events
    /// holds one inotify descriptor; the kernel limits how many one user has (`fs.inotify.max_user_instances`,
    /// often 128), and a store opened past the limit uses `stat`.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
    /// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").status()?;
    /// use odb_index::{LooseMode, Options, RefreshMode, Store};
    ///
    /// let never = Options::default().refresh(RefreshMode::Never).loose(LooseMode::Probe);
    /// assert!(!Store::open(tmp.path(), never)?.change_events());
    /// // The default uses events where it can (and is as correct without them), after its first misses.
    /// assert!(!Store::open(tmp.path(), Options::default())?.change_events());
    /// let at_open = Store::open(tmp.path(), Options::default().change_events_after(0))?;
    /// assert_eq!(at_open.change_events(), cfg!(target_os = "linux"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn change_events(&self) -> bool {
        self.current.get().meta().fresh.events_in_use()
    }

    /// What this store has done since it was opened: index files loaded, listings, refreshes, miss filters built
    /// and the misses they answered ([`Metrics`], with an example).
    pub fn metrics(&self) -> Metrics {
        self.counters.snapshot()
    }

    /// A number that grows each time a refresh changes the listing (packs added or removed, a multi-pack-index
    /// replaced, alternates changed): the cheap way (one relaxed load) for a caller that keeps packs open by
    /// [`PackId`] to learn when to ask [`Store::is_pack_live`] about them, instead of diffing [`Store::packs`].
    ///
    /// ```
    /// # use std::process::Command;
    /// # let tmp = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| {
    /// #     let st = Command::new("git").args(args).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
    /// #     assert!(st.status.success());
    /// # };
    /// # git(&["init", "-q", "--bare", "."]);
    /// use odb_index::{Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let seen = store.listing_version();
    /// assert!(!store.refresh()?); // nothing changed
    /// assert_eq!(store.listing_version(), seen);
    /// let alternate = tmp.path().join("alt-objects");
    /// std::fs::create_dir(&alternate)?;
    /// std::fs::write(tmp.path().join("objects/info/alternates"), alternate.to_str().unwrap())?;
    /// assert!(store.refresh()?);
    /// assert!(store.listing_version() > seen); // now check the packs you hold
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn listing_version(&self) -> u64 {
        self.counters.listing_changes.load(Ordering::Relaxed)
    }

    /// The options the store was opened with (a reader answering for it follows its
    /// [`IncompleteMode`], as `Store::report_unreadable_loose` says).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The object format.
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// The repository's objects directory.
    pub fn objects_dir(&self) -> &Path {
        &self.objects_dir
    }

    /// The objects directories searched, in order: the repository's own, then its alternates (from
    /// `GIT_ALTERNATE_OBJECT_DIRECTORIES`, then `info/alternates`). [`Location::Loose`] carries a stable number
    /// instead of a position in this list: see [`Store::objects_dir_of`].
    pub fn objects_dirs(&self) -> Vec<PathBuf> {
        self.current.get().meta().dirs.to_vec()
    }

    /// Problems found while listing the repository (an unreadable multi-pack-index, a missing or unreadable
    /// alternate, an unreadable pack directory, a FIFO, socket or device named like an `.idx`) or loading its
    /// index files so far (a multi-pack-index or `.idx` that failed to load, a pack that does not match its
    /// index): the store works around them (or, for what could hold objects it cannot search, reports
    /// [`Error::Incomplete`] on a miss) and lists them here. An index file that vanished between the listing
    /// and its load (git replaced or removed it) is not a problem: git drops it without a word, and lookups
    /// list the pack directories again.
    pub fn problems(&self) -> Vec<Problem> {
        let map = self.current.get();
        let listing = map.meta();
        let mut problems = listing.problems.to_vec();
        for (slot, v) in map.ready() {
            match v {
                // Gone since the listing (git replaced or removed it): not a problem, as git says nothing.
                Loaded::Failed { error, .. } if error.is_vanished() => {}
                Loaded::Failed { error, midx } => {
                    let (path, error) = (slot_path(listing, slot), Arc::clone(error));
                    problems.push(if *midx {
                        // Worked around: the packs it covers load their own indices.
                        Problem::MultiPackIndexNotLoaded { path, error }
                    } else {
                        Problem::IndexNotLoaded { path, error }
                    });
                }
                Loaded::Midx(m) => {
                    for error in lock_plain(&m.wrong).iter() {
                        problems.push(Problem::MultiPackIndexEntryWrong {
                            path: m.midx.path().to_path_buf(),
                            error: Arc::clone(error),
                        });
                    }
                }
                Loaded::Pack(p) => {
                    let path = p.idx.path();
                    for problem in p.idx.bucket_problems() {
                        problems.push(Problem::IndexIdsOutOfOrder {
                            path: path.to_path_buf(),
                            error: Arc::new(Error::CorruptIndex {
                                path: path.to_path_buf(),
                                problem,
                            }),
                        });
                    }
                }
                _ => {}
            }
        }
        problems.extend(lock_plain(&self.unreadable_loose).iter().cloned());
        problems
    }

    /// Record that the file at `path`, named like a loose object, is not one (empty, not a zlib stream of
    /// `<type> <size>\0`, a directory, a dangling symbolic link): `reason` says what is wrong. The store only
    /// checks that such a file exists ([`Location::Loose`]); the reader that opens it is the one that learns it
    /// is not an object, and a reader answering as git does (under [`IncompleteMode::Miss`]: the object is
    /// missing, git warns) records it here, so [`Store::problems`] lists it as
    /// [`Problem::LooseObjectUnreadable`] (each path once, the first 64 paths).
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # std::fs::create_dir_all(tmp.path().join("objects/pack"))?;
    /// # std::fs::create_dir_all(tmp.path().join("refs"))?;
    /// # std::fs::write(tmp.path().join("HEAD"), "ref: refs/heads/main\n")?;
    /// use odb_index::{Options, Problem, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let path = tmp.path().join("objects/ab/cdef");
    /// store.report_unreadable_loose(path.clone(), "the file is empty".into());
    /// store.report_unreadable_loose(path.clone(), "the file is empty".into()); // once per path
    /// let problems = store.problems();
    /// assert_eq!(problems.len(), 1);
    /// assert!(matches!(&problems[0], Problem::LooseObjectUnreadable { .. }));
    /// assert_eq!(problems[0].path(), path);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Only with the `reader-hooks` feature: it is for a crate that reads the objects the store locates
    /// (odb-index-gix enables it), not for a caller of lookups.
    #[cfg(feature = "reader-hooks")]
    pub fn report_unreadable_loose(&self, path: PathBuf, reason: String) {
        let mut seen = lock_plain(&self.unreadable_loose);
        if seen.len() < MAX_UNREADABLE_LOOSE && !seen.iter().any(|p| p.path() == path) {
            seen.push(Problem::LooseObjectUnreadable { path, reason });
        }
    }

    /// The miss filter of the current pack listing, once a lookup has built (or carried over) one: how many ids
    /// it holds, its size and build time. `None` before that, or under [`MissFilterMode::Off`].
    pub fn miss_filter(&self) -> Option<MissFilterStats> {
        self.current.get().meta().filter.get().map(|f| f.stats())
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
        Ok(self.refresh_from(&map, true, false)?.changed)
    }

    /// Replace `seen` (if it is still current) with a fresh listing, and say which map that left current and
    /// whether the listing changed ([`Refreshed`]). `force`: an explicit refresh (timestamps not trusted, fresh
    /// loose caches under `Cached`). `vanished`: a file of `seen` vanished before it was loaded: the map is
    /// replaced even if the listing is the same (git put the file back), so that its slot is loaded again.
    fn refresh_from(
        &self,
        seen: &sync::Arc<Map>,
        force: bool,
        vanished: bool,
    ) -> Result<Refreshed, Error> {
        let mut state = lock(&self.refresh);
        let current = self.current.get();
        if !sync::Arc::ptr_eq(&current, seen) {
            // Another thread refreshed since `seen` was current.
            return Ok(Refreshed {
                map: current,
                changed: true,
            });
        }
        let old = current.meta();
        let alternates_changed =
            Stamp::of(&self.objects_dir.join("info/alternates")) != old.alternates_stamp;
        // A re-list because the last listing was too recent to trust happens once: its timestamps are trusted.
        let trust = old.fresh.relist_trusts_timestamps(force);
        // An explicit refresh of cached loose objects starts fresh caches in the new map. The old caches go
        // with the old map, once no handle uses it (a cache cannot free a listing a reader may be searching).
        let fresh_loose = force && self.options.loose == LooseMode::Cached;
        // An alternate or loose directory that failed to open with an error that may pass is opened again by a
        // re-listing that does not confirm the old one (`relist.rs`): not carried over with the loose sources.
        let reopen = vanished && old.unreadable.iter().any(|(_, e)| e.may_be_transient());
        let req = ListRequest {
            objects_dir: &self.objects_dir,
            opened: None,
            kind: self.kind,
            options: &self.options,
            reuse_loose: (!alternates_changed && !fresh_loose && !reopen).then_some(old),
            trust_timestamps: trust,
            // New directories keep a deferred detector deferred (its count starts again).
            defer_events: old.fresh.keeps_deferring(),
        };
        let mut listing = list(req, &mut state)?;
        // A re-listing after a miss keeps the loaded packs it did not find, as git does; an explicit
        // refresh (and `locate_again`'s) sees the repository as it is.
        successor::keep_loaded(&current, &mut listing, &mut state, !force);
        Counters::add(&self.counters.listings, 1);
        let same = same_listing(old, &listing);
        // Unchanged (the old listing is still true, and its token now the newer drain's): keep the map. An
        // explicit refresh of cached loose objects always replaces it (fresh caches).
        if !fresh_loose && old.fresh.confirm(&listing.fresh, same, vanished) {
            return Ok(Refreshed {
                map: current,
                changed: false,
            });
        }
        // Replace the map even when only the stamps changed, so the next miss compares against them.
        let map = self
            .current
            .replace(|old_map| build_successor(old_map, listing));
        Counters::add(&self.counters.refreshes, 1);
        if !same {
            // Relaxed: a hint to re-check packs; `Store::pack`/`is_pack_live` read the listing under its lock.
            Counters::add(&self.counters.listing_changes, 1);
        }
        Ok(Refreshed {
            map,
            changed: !same,
        })
    }
}

/// What [`Store::refresh_from`] left current.
struct Refreshed {
    /// The current map: the one it put in place, the one another thread's refresh had put there since `seen`, or
    /// `seen` itself when the listing was confirmed.
    map: sync::Arc<Map>,
    /// Whether the listing changed (by this refresh or another since `seen`).
    changed: bool,
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// A `.idx` that fails to load is a typed problem naming it, once a lookup has tried to load it.
    #[test]
    fn failed_index_load_is_a_problem() {
        let tmp = tempfile::tempdir().unwrap();
        let pack_dir = tmp.path().join("pack");
        std::fs::create_dir(&pack_dir).unwrap();
        let idx = pack_dir.join("pack-1234.idx");
        std::fs::write(&idx, b"not an index").unwrap();
        std::fs::write(pack_dir.join("pack-1234.pack"), b"PACK").unwrap();
        let store = Store::open(
            tmp.path(),
            Options::default()
                .loose(LooseMode::None)
                .refresh(RefreshMode::Never),
        )
        .unwrap();
        assert!(store.problems().is_empty(), "{:?}", store.problems());
        let absent = "0123456789012345678901234567890123456789".parse().unwrap();
        assert!(matches!(
            store.handle().locate(&absent),
            Err(Error::Incomplete { .. })
        ));
        let problems = store.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        let idx = idx.canonicalize().unwrap();
        match &problems[0] {
            Problem::IndexNotLoaded { path, error } => {
                assert_eq!(path, &idx);
                assert!(matches!(**error, Error::CorruptIndex { .. }), "{error:?}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(problems[0].path(), idx);
        assert!(
            problems[0].to_string().contains("pack-1234.idx"),
            "{}",
            problems[0]
        );
    }
}
