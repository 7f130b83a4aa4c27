//! Change detection: whether a pack directory or a loose fan-out directory may have changed since it was
//! listed. One small interface ([`Watch`]) with two implementations:
//!
//! - **stat** (portable, and the fallback): nothing is watched; a miss compares each pack directory's `stat`
//!   with the one taken when it was listed, and loose objects are probed one `fstatat` per lookup;
//! - **inotify** (Linux, local file systems): the store's one non-blocking inotify descriptor watches each pack
//!   directory and, once a handle has listed them, each objects directory and its fan-out directories. A miss
//!   asks the kernel one question (`ioctl(FIONREAD)`: are events queued?) instead of one `stat` per directory;
//!   events found are drained under a lock and applied to the store's state (the pack-change counter, the
//!   version of each fan-out directory), never matched to one lookup, because one drain may consume the events
//!   of writes that later lookups depend on. The ordering argument is in `docs/PROTOCOL.md` ("Change
//!   detection").
//!
//! A store under `RefreshMode::OnMiss` starts with a deferred `stat` detector ([`Watch::deferred`]) and sets
//! inotify up once its handles have answered `Options::change_events_after` misses: closing an inotify
//! descriptor with watches makes the process wait for the kernel's teardown, which a store that misses a few
//! times never earns back.
//!
//! Anything that makes events incomplete falls back to `stat` for good (the counter's [`FALLBACK`] bit): a
//! queue overflow is a rescan, but a watch limit (`ENOSPC`), a pack or objects directory deleted, moved or
//! unmounted (`IN_DELETE_SELF`, `IN_MOVE_SELF`, `IN_IGNORED`, `IN_UNMOUNT`), or a read error are permanent. A
//! network file system (NFS, SMB, FUSE, ...) gives no events for writers on other machines, so a store on one
//! never uses inotify (`statfs` at open).

use std::path::{Path, PathBuf};

use crate::sync::{AtomicU64, Ordering};

#[cfg(any(target_os = "linux", target_os = "android"))]
mod inotify;
/// The change detector's loom model (loom builds with `model-checking` only; run from `loom-tests/detectors.rs`).
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
pub use inotify::model;
#[cfg(any(target_os = "linux", target_os = "android"))]
use inotify::{Inotify, add_watch};

/// Set in the pack-change counter once events cannot be trusted: every later check is a `stat` check.
pub(super) const FALLBACK: u64 = 1 << 63;

/// What a miss learns from [`Watch::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Check {
    /// Events are trusted and none arrived since the listing whose token was given, and no drain is under way:
    /// no pack directory changed, and every fan-out version read after this is current.
    Quiet,
    /// Events are pending, a drain is under way, or the pack directories changed since that listing: the slow
    /// path drains and compares.
    Changed,
    /// No events (the stat implementation, or inotify after a fallback, or events not set up yet:
    /// [`Watch::deferred`]): compare `stat`s and probe.
    NoEvents,
}

/// The change detector of one listing's objects directories (shared by the listings that keep the same
/// directories).
pub(super) struct Watch {
    imp: Backend,
    /// Set on a `stat` detector that stands in until events are set up ([`Watch::deferred`]). Beside `imp`
    /// rather than a variant of it, so the events' check matches as it did without it (one compare: callgrind
    /// counted 7 more instructions per miss with a third variant).
    deferred: Option<Deferred>,
}

#[allow(
    clippy::large_enum_variant,
    reason = "one per store, behind an Arc; boxing would add a pointer load to every miss's check"
)]
enum Backend {
    Stat,
    #[cfg(any(target_os = "linux", target_os = "android"))]
    Inotify(Inotify),
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.imp {
            Backend::Stat if self.deferred.is_some() => "Watch::Deferred",
            Backend::Stat => "Watch::Stat",
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(_) => "Watch::Inotify",
        })
    }
}

impl Watch {
    /// The `stat` implementation.
    pub(super) fn stat() -> Watch {
        Watch {
            imp: Backend::Stat,
            deferred: None,
        }
    }

    /// The `stat` implementation until the store's handles have reported `after` misses answered with it
    /// ([`note_misses`](Self::note_misses)); then [`upgrade_due`](Self::upgrade_due) says so, and the next
    /// listing replaces this detector by [`Watch::open`]'s. Why: an inotify descriptor with watches costs its
    /// process 0.3-10 ms of wall time when it is closed (the kernel waits for the marks' teardown, also
    /// at exit), which a store that misses a few times never earns back (docs/FRESHNESS.md, section 1).
    pub(super) fn deferred(after: u32) -> Watch {
        Watch {
            imp: Backend::Stat,
            deferred: Some(Deferred {
                misses: AtomicU64::new(0),
                after: u64::from(after),
            }),
        }
    }

    /// Count `n` misses answered by [`Check::NoEvents`] on a [`deferred`](Self::deferred) detector; true once the
    /// detector has counted enough of them to be replaced by events ([`upgrade_due`](Self::upgrade_due)).
    pub(super) fn note_misses(&self, n: u64) -> bool {
        match &self.deferred {
            // Relaxed: a count that orders nothing (the listing that replaces this detector is made under the
            // refresh lock and published by the map's own Release store). One RMW per batch of a handle's
            // misses, only until events are set up.
            Some(d) => d.misses.fetch_add(n, Ordering::Relaxed).saturating_add(n) >= d.after,
            None => false,
        }
    }

    /// Whether this is a [`deferred`](Self::deferred) detector that has counted enough misses: the next listing
    /// sets events up.
    pub(super) fn upgrade_due(&self) -> bool {
        // Relaxed: see `note_misses`.
        self.deferred
            .as_ref()
            .is_some_and(|d| d.misses.load(Ordering::Relaxed) >= d.after)
    }

    /// Whether this is a [`deferred`](Self::deferred) detector (events not set up yet).
    pub(super) fn is_deferred(&self) -> bool {
        self.deferred.is_some()
    }

    /// Inotify on `dirs` (each objects directory; its `pack/` is watched now, the rest as handles list it) where
    /// that works, else [`Watch::stat`].
    pub(super) fn open(dirs: &[PathBuf]) -> Watch {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(i) = Inotify::open(dirs, &mut add_watch) {
            return Watch {
                imp: Backend::Inotify(i),
                deferred: None,
            };
        }
        let _ = dirs;
        Watch::stat()
    }

    /// Whether this detector gets events (it may still fall back later).
    pub(super) fn has_events(&self) -> bool {
        !matches!(self.imp, Backend::Stat)
    }

    /// The steady-state question, with `token` the [`drain`](Self::drain) value the listing was made after: one
    /// `ioctl` and one Acquire load of shared memory, no lock, no write; without events, nothing.
    #[inline]
    pub(super) fn check(&self, token: u64) -> Check {
        match &self.imp {
            Backend::Stat => Check::NoEvents,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(i) => i.check(token),
        }
    }

    /// Apply every queued event to the shared state (under the drain lock) and return the pack-change counter
    /// (with [`FALLBACK`] set once events cannot be trusted). A listing made after this call sees every file
    /// whose event the counter includes.
    pub(super) fn drain(&self) -> u64 {
        match &self.imp {
            Backend::Stat => FALLBACK,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(i) => i.drain(),
        }
    }

    /// Whether events are in use and trusted (no fallback yet).
    pub(super) fn trusted(&self) -> bool {
        match &self.imp {
            Backend::Stat => false,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(i) => i.trusted(),
        }
    }

    /// The version of fan-out directory `fanout` of objects directory `dir` (its position in the listing's
    /// directories), or `None` when it is not watched yet (see [`watch_fanout`](Self::watch_fanout)). Read it
    /// after [`check`](Self::check) answered [`Check::Quiet`] (the Acquire load there orders it), or after
    /// `watch_fanout`, before listing the directory.
    #[inline]
    pub(super) fn fanout_version(&self, dir: usize, fanout: u8) -> Option<u64> {
        match &self.imp {
            Backend::Stat => None,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(i) => i.fanout_version(dir, fanout),
        }
    }

    /// Make sure fan-out directory `fanout` of objects directory `dir` (at `path`) is watched (and its objects
    /// directory, so that a fan-out directory created later is seen). Returns its version, to be read before
    /// the directory is listed; `None` if it cannot be watched (the caller probes instead).
    pub(super) fn watch_fanout(&self, dir: usize, path: &Path, fanout: u8) -> Option<u64> {
        match &self.imp {
            Backend::Stat => None,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Backend::Inotify(i) => i.watch_fanout(dir, path, fanout, &mut add_watch),
        }
    }
}

/// The loom models' detectors (`src/store/freshness/model.rs`): events from the models' own queue.
#[cfg(all(
    loom,
    feature = "model-checking",
    any(target_os = "linux", target_os = "android")
))]
impl Watch {
    /// A detector with events on objects directory `objects` (whose `pack/` must exist), fed by the model.
    pub(crate) fn model(objects: &Path) -> Watch {
        Watch {
            imp: Backend::Inotify(Inotify::for_model(objects)),
            deferred: None,
        }
    }

    /// The watch descriptor of `pack/` (read it before other threads use the detector: see
    /// `Inotify::model_pack_wd`).
    pub(crate) fn model_pack_wd(&self) -> i32 {
        let Backend::Inotify(i) = &self.imp else {
            panic!("a detector with events");
        };
        i.model_pack_wd()
    }

    /// The model's `rename` of `name` into `pack/` (watched as `wd`): `write` changes the model's directory and
    /// the event is queued under the queue's lock, as the kernel queues it inside the system call.
    pub(crate) fn model_pack_event(&self, wd: i32, name: &[u8], write: impl FnOnce()) {
        let Backend::Inotify(i) = &self.imp else {
            return write();
        };
        i.model_pack_event(wd, name, write);
    }
}

/// A detector whose events are not set up yet: the misses its handles answered with `stat` so far.
struct Deferred {
    misses: AtomicU64,
    after: u64,
}
