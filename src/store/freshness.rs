//! Freshness: whether what a listing says is still true. The store's second protocol (the first, loading slots,
//! is `src/protocol.rs`), in one place: which change detector a listing gets and the token it is made after
//! ([`Freshness::listing`]: detector first, then the scan), the steady question of a miss
//! ([`Freshness::steady`]), the refresh check ([`Freshness::changed`]), the deferred count of misses before
//! events are set up ([`Tally`]) and "is the new listing the same as the old" ([`Freshness::confirm`]).
//! `docs/FRESHNESS.md`, section 2, states its invariants (F1-F4) and names the model of each
//! (`freshness/model.rs`, on this code with the file system behind [`Fs`]).
//!
//! The detectors themselves (`stat` and inotify) are `watch.rs`'s; this module decides when to ask them and what
//! their answers mean for a listing.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::options::{LooseMode, Options, RefreshMode};
use super::watch::{Check, FALLBACK, Watch};
use crate::sync::plain::Arc;
use crate::sync::{AtomicU64, Ordering};

pub(super) use crate::dir::Stamp;

impl Stamp {
    /// Whether a directory stamped at `listed` (a listing that started then) may change again without its
    /// stamp showing it: its mtime is within a second of the listing (a timestamp's granularity).
    fn too_recent(&self, listed: SystemTime) -> bool {
        self.mtime
            .is_some_and(|m| m + Duration::from_secs(1) >= listed)
    }
}

/// What freshness needs of the file system: `stat` a pack directory, and set a change detector up. The store
/// uses [`RealFs`]; the models (`freshness/model.rs`) a file system of their own, whose writes queue
/// events for the detectors it made, so that loom interleaves renames and unlinks with lookups and refreshes.
pub(super) trait Fs {
    /// The stamp of `dir` now (`None`: missing or unreadable).
    fn stamp(&self, dir: &Path) -> Option<Stamp>;
    /// A detector with events for objects directories `dirs` where that works, else a `stat` one.
    fn events(&self, dirs: &[PathBuf]) -> Arc<Watch>;
}

/// The real file system.
pub(super) struct RealFs;

impl Fs for RealFs {
    #[inline]
    fn stamp(&self, dir: &Path) -> Option<Stamp> {
        Stamp::of(dir)
    }

    fn events(&self, dirs: &[PathBuf]) -> Arc<Watch> {
        Arc::new(Watch::open(dirs))
    }
}

/// Which detector a listing that does not carry one over gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Detector {
    /// `stat` for good (events off, or nothing would ask them).
    Stat,
    /// `stat` until the store's handles have answered this many misses, then events.
    Deferred(u32),
    /// Events now (inotify where it works, else `stat`).
    Events,
}

impl Detector {
    /// The detector `options` ask for; `defer`: a first listing of these directories under
    /// [`RefreshMode::OnMiss`] starts deferred ([`Options::change_events_after`] > 0), a switch does not.
    pub(super) fn for_options(options: &Options, defer: bool) -> Detector {
        if !options.change_events
            || (options.refresh != RefreshMode::OnMiss && options.loose != LooseMode::Watched)
        {
            Detector::Stat
        } else if defer && options.refresh == RefreshMode::OnMiss {
            Detector::Deferred(options.change_events_after)
        } else {
            Detector::Events
        }
    }
}

/// What a listing's scan of the pack directories found, besides what the listing keeps itself.
pub(super) struct Scanned<T> {
    pub(super) value: T,
    /// Each objects directory's `pack/`.
    pub(super) pack_dirs: Vec<PathBuf>,
    /// The stamp of each, taken before its entries were read (`None`: missing).
    pub(super) stamps: Vec<Option<Stamp>>,
}

/// One listing's freshness: the change detector (shared by the listings of the same objects directories), the
/// token it was made after, and the pack directories' stamps.
pub(super) struct Freshness {
    watch: Arc<Watch>,
    /// The detector's pack-change count ([`Watch::drain`]) this listing was made after, never with
    /// [`FALLBACK`]; raised by a refresh that finds the listing unchanged ([`Freshness::confirm`]). Relaxed
    /// everywhere: it orders nothing (the listing it vouches for is published by the map's Release store, and
    /// [`Watch::check`]'s Acquire load of the detector's state orders what a Quiet answer relies on).
    token: AtomicU64,
    pack_dirs: Box<[PathBuf]>,
    stamps: Box<[Option<Stamp>]>,
    /// A pack directory's mtime was too close to the listing's start to trust: the next check says "changed",
    /// and the refresh it makes trusts timestamps (once, not on every miss).
    untrusted: bool,
}

impl Freshness {
    /// Make a listing: take its detector (`prev`'s, unless that one is a deferred detector whose count is
    /// reached, or `prev` is `None`: then a new one as `detector` says) and its token, **then** `scan` the
    /// pack directories. The order is the invariant F1 rests on: every file created after the token was taken
    /// has an event the token does not count (or, for a new detector, an event queued after its watches were
    /// added), and every file created before is in the scan. `trust_timestamps`: a pack directory changed
    /// within a second of `started` does not make this listing untrusted (the re-listing an untrusted one asked
    /// for).
    pub(super) fn listing<T>(
        prev: Option<&Freshness>,
        detector: Detector,
        dirs: &[PathBuf],
        fs: &dyn Fs,
        trust_timestamps: bool,
        scan: impl FnOnce() -> Scanned<T>,
    ) -> (T, Freshness) {
        let started = SystemTime::now();
        let watch = match prev {
            Some(p) if !p.watch.upgrade_due() => Arc::clone(&p.watch),
            _ => match detector {
                Detector::Stat => Arc::new(Watch::stat()),
                Detector::Deferred(after) => Arc::new(Watch::deferred(after)),
                Detector::Events => fs.events(dirs),
            },
        };
        // A carried detector is drained now, before the scan: the listing sees every file whose event the token
        // counts. A detector made just now has drained nothing (state 0): events queued since its watches were
        // added stay queued, so the first check answers Changed for them.
        let token = match prev {
            Some(p) if Arc::ptr_eq(&p.watch, &watch) => watch.drain() & !FALLBACK,
            _ => 0,
        };
        let s = scan();
        let untrusted =
            !trust_timestamps && s.stamps.iter().flatten().any(|st| st.too_recent(started));
        (
            s.value,
            Freshness {
                watch,
                token: AtomicU64::new(token),
                pack_dirs: s.pack_dirs.into(),
                stamps: s.stamps.into(),
                untrusted,
            },
        )
    }

    /// The change detector (for the watched fan-out listings, which are kept per detector).
    pub(super) fn watch(&self) -> &Arc<Watch> {
        &self.watch
    }

    /// The steady question of a miss: one `ioctl` and one Acquire load with events, nothing without.
    /// [`Check::Quiet`]: no pack directory changed since this listing, and the fan-out versions read after this
    /// are current.
    #[inline(always)]
    pub(super) fn steady(&self) -> Check {
        self.watch.check(self.token.load(Ordering::Relaxed))
    }

    /// Drain the events (a slow-path miss, before its loose step: the fan-out versions read next count every
    /// object written before the lookup began). The drained value, or `None` without events.
    pub(super) fn drain(&self) -> Option<u64> {
        self.watch.has_events().then(|| self.watch.drain())
    }

    /// The refresh check: whether a pack directory changed since this listing (or the listing is too recent to
    /// trust, or a deferred detector's count is reached: the refresh sets events up). With events: drain and
    /// compare with the token; without: [`stat_changed`](Self::stat_changed). A lookup makes it after its loose
    /// step, never earlier (F5).
    pub(super) fn changed(&self, tally: &Tally, dirs: usize, fs: &dyn Fs) -> bool {
        if self.watch.upgrade_due() {
            return true;
        }
        if self.watch.has_events() {
            let t = self.watch.drain();
            if t & FALLBACK == 0 {
                return t != self.token.load(Ordering::Relaxed);
            }
        }
        self.stat_changed(tally, dirs, fs)
    }

    /// The refresh check without events: whether a pack directory's `stat` differs from the listing's (or the
    /// listing was too recent to trust). While events are deferred, counts the miss (`dirs`: one per objects
    /// directory, each of which it stats and probes) and says "changed" once the count is reached.
    #[inline]
    pub(super) fn stat_changed(&self, tally: &Tally, dirs: usize, fs: &dyn Fs) -> bool {
        // Counted first: a listing too recent to trust still counts its miss.
        if (self.watch.is_deferred() && tally.tick(&self.watch, dirs)) || self.untrusted {
            return true;
        }
        self.pack_dirs
            .iter()
            .zip(self.stamps.iter())
            .any(|(d, s)| fs.stamp(d) != *s)
    }

    /// A refresh made listing `new` after this one: whether this one is still true (the same packs, the same
    /// detector, and the detector's token or the stamps say nothing changed in between); if so, this listing's
    /// token is raised to the new one's, so later misses compare against the newer drain. Under the refresh
    /// lock (the token then only grows). `same_packs`: the two listings list the same files. `vanished`: a file
    /// of this listing vanished before it was loaded: never confirmed (F2), so the slot of a file that came
    /// back is loaded again in the new listing's map instead of keeping its failure.
    pub(super) fn confirm(&self, new: &Freshness, same_packs: bool, vanished: bool) -> bool {
        let unchanged = !vanished
            && same_packs
            && Arc::ptr_eq(&new.watch, &self.watch)
            && (new.watch.trusted()
                || (new.stamps == self.stamps && !self.untrusted && !new.untrusted));
        if unchanged {
            // Relaxed: see `token`.
            self.token
                .store(new.token.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        unchanged
    }

    /// Whether the refresh of this listing trusts timestamps: this listing was untrusted (the refresh is the one
    /// re-listing that asks for) and the refresh is not an explicit one.
    pub(super) fn relist_trusts_timestamps(&self, explicit: bool) -> bool {
        self.untrusted && !explicit
    }

    /// Whether a listing of new objects directories after this one starts deferred again (its count starts
    /// over): this detector is deferred and has not counted enough.
    pub(super) fn keeps_deferring(&self) -> bool {
        self.watch.is_deferred() && !self.watch.upgrade_due()
    }

    /// Whether lookups learn of changes from events (set up and trusted).
    pub(super) fn events_in_use(&self) -> bool {
        self.watch.has_events() && self.watch.drain() & FALLBACK == 0
    }

    /// Report `tally`'s uncounted misses to the detector (a handle leaving this listing, or dropped).
    pub(super) fn report(&self, tally: &Tally) -> bool {
        tally.report(&self.watch)
    }
}

/// One handle's side of the deferred count: misses answered with `stat` while events are deferred, not yet
/// reported to the detector. Counted in a `Cell` (no shared write per miss), reported [`DEFERRED_BATCH`] at a
/// time with one read-modify-write, and when the handle leaves the listing or is dropped.
#[derive(Default)]
pub(super) struct Tally {
    misses: Cell<u64>,
}

/// How many times one lookup, iteration or prefix lookup lists the pack directories again while files of its
/// listings vanish before they are loaded (git replacing packs meanwhile), and how many re-listings
/// `Handle::locate_again` makes while the answer's file is still missing (F2).
pub(super) const MAX_RELISTS: usize = 8;

/// How many misses a handle counts before it reports them to a deferred detector.
pub(super) const DEFERRED_BATCH: u64 = 64;

impl Tally {
    /// Count one miss, once per objects directory; every [`DEFERRED_BATCH`] are reported. True once the
    /// detector has counted enough.
    #[inline]
    fn tick(&self, watch: &Watch, dirs: usize) -> bool {
        let n = self.misses.get() + dirs as u64;
        self.misses.set(n);
        n >= DEFERRED_BATCH && self.report(watch)
    }

    #[cold]
    #[inline(never)]
    fn report(&self, watch: &Watch) -> bool {
        let n = self.misses.replace(0);
        n > 0 && watch.note_misses(n)
    }

    /// Misses counted and not reported yet (tests).
    #[cfg(all(test, not(any(loom, shuttle))))]
    pub(super) fn pending(&self) -> u64 {
        self.misses.get()
    }
}

#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
impl Freshness {
    /// The token (the models compare it with the detector's state).
    pub(crate) fn token(&self) -> u64 {
        self.token.load(Ordering::Relaxed)
    }
}

/// Freshness's loom models (loom builds with `model-checking` only), beside the code they check; run from
/// `loom-tests/detectors.rs` through `odb_index::testing::model`.
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
pub mod model;

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// A file system whose pack directory the test changes by hand (a stamp it sets), and whose detectors are
    /// real ones (so the tests below run the real inotify code on a real directory).
    struct Fake {
        #[expect(
            clippy::disallowed_types,
            reason = "sync::plain: set between the calls under test"
        )]
        stamp: crate::sync::plain::Mutex<Option<Stamp>>,
    }

    impl Fake {
        /// A file system whose pack directory's stamp is `st`.
        fn at(st: Option<Stamp>) -> Fake {
            Fake {
                #[expect(clippy::disallowed_types, reason = "sync::plain: see `Fake`")]
                stamp: crate::sync::plain::Mutex::new(st),
            }
        }
    }

    impl Fs for Fake {
        fn stamp(&self, _: &Path) -> Option<Stamp> {
            *self.stamp.lock().unwrap()
        }
        fn events(&self, dirs: &[PathBuf]) -> Arc<Watch> {
            Arc::new(Watch::open(dirs))
        }
    }

    fn stamp(n: u64) -> Option<Stamp> {
        Some(Stamp {
            mtime: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + n)),
            size: n,
            ino: 1,
            dev: 1,
        })
    }

    fn scanned(dir: &Path, st: Option<Stamp>) -> Scanned<()> {
        Scanned {
            value: (),
            pack_dirs: vec![dir.join("pack")],
            stamps: vec![st],
        }
    }

    /// F1's order, on the real inotify detector: a listing carried over drains before its scan, so a pack
    /// written during the scan (after the drain) leaves an event the token does not count: the next check is
    /// not Quiet and the refresh check says "changed". What would go wrong with the drain after the scan (the
    /// survivor of the last round): the drain consumes the event of a pack the scan did not see, the token
    /// equals the detector's state, and every later miss is Quiet without that pack.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_pack_written_during_the_scan_is_not_vouched_for() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::create_dir(dir.join("pack")).unwrap();
        let fs = Fake::at(stamp(0));
        let dirs = [dir.clone()];
        let ((), first) = Freshness::listing(None, Detector::Events, &dirs, &fs, true, || {
            scanned(&dir, stamp(0))
        });
        assert!(first.watch.trusted(), "inotify here");
        // The next listing carries the detector over; the pack is renamed into place while it scans.
        let ((), second) =
            Freshness::listing(Some(&first), Detector::Events, &dirs, &fs, true, || {
                std::fs::write(dir.join("pack/pack-1.idx"), b"").unwrap();
                scanned(&dir, stamp(0))
            });
        assert_ne!(
            second.steady(),
            Check::Quiet,
            "Quiet for a listing whose scan missed a pack"
        );
        assert!(second.changed(&Tally::default(), 1, &fs));
    }

    /// F1 without events: a stamp that differs from the listing's is "changed"; an equal one is not (and the
    /// check makes no listing of its own).
    #[test]
    fn stat_check_compares_the_stamps() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let fs = Fake::at(stamp(0));
        let ((), f) = Freshness::listing(
            None,
            Detector::Stat,
            std::slice::from_ref(&dir),
            &fs,
            true,
            || scanned(&dir, stamp(0)),
        );
        let t = Tally::default();
        assert!(!f.changed(&t, 1, &fs));
        *fs.stamp.lock().unwrap() = stamp(1);
        assert!(f.changed(&t, 1, &fs));
    }

    /// A listing made within a second of its directory's mtime is untrusted (the next check says "changed"),
    /// unless it is the re-listing that asked to trust timestamps.
    #[test]
    fn a_recent_directory_is_untrusted_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let now = Some(Stamp {
            mtime: Some(SystemTime::now()),
            size: 0,
            ino: 1,
            dev: 1,
        });
        let fs = Fake::at(now);
        let ((), f) = Freshness::listing(
            None,
            Detector::Stat,
            std::slice::from_ref(&dir),
            &fs,
            false,
            || scanned(&dir, now),
        );
        assert!(f.changed(&Tally::default(), 1, &fs));
        assert!(f.relist_trusts_timestamps(false));
        assert!(!f.relist_trusts_timestamps(true));
        let ((), g) = Freshness::listing(
            Some(&f),
            Detector::Stat,
            std::slice::from_ref(&dir),
            &fs,
            true,
            || scanned(&dir, now),
        );
        assert!(!g.changed(&Tally::default(), 1, &fs));
    }

    /// The deferred count: a handle reports its misses [`DEFERRED_BATCH`] at a time, counted once per objects
    /// directory, and the miss whose report reaches the count says "changed" (the refresh then sets events
    /// up). Catches a report that is never reset (events after fewer misses), one count per miss instead of
    /// per directory (k times late with alternates) and the count taken before the report's own misses (one
    /// batch late).
    #[test]
    fn deferred_count_reaches_its_target_exactly() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let fs = Fake::at(stamp(0));
        for (dirs, after) in [(1usize, 128u32), (3, 198), (1, 64)] {
            let ((), f) = Freshness::listing(
                None,
                Detector::Deferred(after),
                std::slice::from_ref(&dir),
                &fs,
                true,
                || scanned(&dir, stamp(0)),
            );
            let t = Tally::default();
            // Batches of 64 misses (22 with three directories: 66 counted) reach 128, 198 and 64 exactly.
            let misses_needed = u64::from(after).div_ceil(dirs as u64);
            for m in 1..misses_needed {
                assert!(
                    !f.changed(&t, dirs, &fs),
                    "changed after {m} misses of {dirs} directories (count {after})"
                );
                assert!(t.pending() < DEFERRED_BATCH, "a batch was not reported");
            }
            assert!(
                f.changed(&t, dirs, &fs),
                "not changed after {misses_needed} misses of {dirs} directories (count {after})"
            );
            assert!(f.watch.upgrade_due());
        }
    }

    /// Without events, a re-listing that finds the same packs but another stamp (a file that is no pack was
    /// written in `pack/`) is not the same listing: the store keeps the new stamps, so the next check is quiet.
    /// Kept as it was (the old stamps), every later miss would find the stamp changed and list again.
    #[test]
    fn a_relisting_with_other_stamps_replaces_the_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let fs = Fake::at(stamp(0));
        let dirs = std::slice::from_ref(&dir);
        let ((), old) = Freshness::listing(None, Detector::Stat, dirs, &fs, true, || {
            scanned(&dir, stamp(0))
        });
        *fs.stamp.lock().unwrap() = stamp(1);
        assert!(old.changed(&Tally::default(), 1, &fs));
        let ((), new) = Freshness::listing(Some(&old), Detector::Stat, dirs, &fs, true, || {
            scanned(&dir, stamp(1))
        });
        assert!(!old.confirm(&new, true, false), "the old stamps kept");
        assert!(!new.changed(&Tally::default(), 1, &fs));
        // The same stamps: the same listing.
        let ((), again) = Freshness::listing(Some(&new), Detector::Stat, dirs, &fs, true, || {
            scanned(&dir, stamp(1))
        });
        assert!(new.confirm(&again, true, false));
    }

    /// `confirm` raises the old listing's token when the new one is the same (so the next miss is Quiet
    /// instead of listing again), and leaves it when a pack changed.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn an_unchanged_relisting_raises_the_token() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        std::fs::create_dir(dir.join("pack")).unwrap();
        let fs = Fake::at(stamp(0));
        let dirs = [dir.clone()];
        let ((), first) = Freshness::listing(None, Detector::Events, &dirs, &fs, true, || {
            scanned(&dir, stamp(0))
        });
        // A file that is no pack: an event, the same listing.
        std::fs::write(dir.join("pack/other"), b"").unwrap();
        assert_eq!(first.steady(), Check::Changed);
        let ((), second) =
            Freshness::listing(Some(&first), Detector::Events, &dirs, &fs, true, || {
                scanned(&dir, stamp(1))
            });
        assert!(first.confirm(&second, true, false));
        assert_eq!(first.steady(), Check::Quiet, "the token was not raised");
        std::fs::write(dir.join("pack/other2"), b"").unwrap();
        let ((), third) =
            Freshness::listing(Some(&first), Detector::Events, &dirs, &fs, true, || {
                scanned(&dir, stamp(2))
            });
        assert!(!first.confirm(&third, false, false));
        assert_ne!(
            first.token.load(Ordering::Relaxed),
            third.token.load(Ordering::Relaxed)
        );
    }
}
