//! The inotify detector (Linux): the store's one non-blocking inotify descriptor, its watches, and the shared
//! state its drains write (`docs/FRESHNESS.md`, section 1). Compiled on Linux only (one `cfg`, on this module in
//! `watch.rs`); everything else of change detection is portable.

use std::path::{Path, PathBuf};

use super::{Check, FALLBACK};
use crate::sync::{AtomicU64, Mutex, Ordering, lock};

/// Counters shared by every handle of a store; written only by drains, under the drain lock.
struct Shared {
    /// One word, so the steady check is one load and one comparison: bit 0 ([`DRAINING`]) is set while a drain
    /// is reading and applying events (the reader of an empty queue checks it: the events it did not see may be
    /// in a drain's hands); bits 1-62 count pack-directory changes (steps of 2); bit 63 is [`FALLBACK`].
    state: AtomicU64,
    /// One version per (objects directory, fan-out directory): bumped by events in that directory (and by a
    /// queue overflow). The low bit is set while the directory is watched.
    fanouts: Box<[AtomicU64]>,
    /// Held by a drain and by a watch being added.
    drain: Mutex<()>,
}

/// The state word's "a drain is under way" bit.
const DRAINING: u64 = 1;

/// A fan-out version's "watched" bit; versions move in steps of 2.
const WATCHED: u64 = 1;

impl Shared {
    fn new(dirs: usize) -> Shared {
        Shared {
            state: AtomicU64::new(0),
            fanouts: (0..dirs * 256).map(|_| AtomicU64::new(0)).collect(),
            drain: Mutex::new(()),
        }
    }

    fn fanout(&self, dir: usize, fanout: u8) -> Option<&AtomicU64> {
        self.fanouts.get(dir * 256 + usize::from(fanout))
    }

    /// Bump a fan-out directory's version (its events or a rescan), keeping its watched bit. Under the drain
    /// lock. Relaxed: published by the drain's closing Release decrement of `state`.
    fn bump(&self, dir: usize, fanout: u8) {
        if let Some(v) = self.fanout(dir, fanout) {
            v.fetch_add(2, Ordering::Relaxed);
        }
    }

    /// A fan-out directory is no longer known to be watched (or to be missing): bump its version and clear
    /// its watched bit, so the next listing watches it first. Under the drain lock; published like `bump`.
    fn unwatch(&self, dir: usize, fanout: u8) {
        if let Some(v) = self.fanout(dir, fanout) {
            v.fetch_and(!WATCHED, Ordering::Relaxed);
            v.fetch_add(2, Ordering::Relaxed);
        }
    }

    /// The pack directories changed (or a rescan). Relaxed: published like [`bump`](Self::bump).
    fn pack_changed(&self) {
        self.state.fetch_add(2, Ordering::Relaxed);
    }

    /// Events cannot be trusted from now on: every check is a stat check, every fan-out unwatched.
    fn fall_back(&self) {
        self.state.fetch_or(FALLBACK, Ordering::Relaxed);
        for v in self.fanouts.iter() {
            v.fetch_and(!WATCHED, Ordering::Relaxed);
        }
    }
}

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use rustix::fs::inotify::{self as sys, ReadFlags, WatchFlags};
use rustix::io::Errno;

/// Adds a watch (a parameter so tests can make the kernel refuse one: `ENOSPC`).
pub(super) type AddWatch = dyn FnMut(&OwnedFd, &Path, WatchFlags) -> Result<i32, Errno>;

pub(super) fn add_watch(fd: &OwnedFd, path: &Path, flags: WatchFlags) -> Result<i32, Errno> {
    sys::add_watch(fd, path, flags)
}

/// What a watch descriptor watches.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// Objects directory `dir`'s `pack/`.
    PackDir,
    /// Objects directory `dir` itself (for fan-out directories created after they were first listed).
    Objects(usize),
    /// One fan-out directory.
    Fanout(usize, u8),
}

/// Watches and what they watch; held under the drain lock (in `targets`).
pub(super) struct Inotify {
    fd: OwnedFd,
    shared: Shared,
    /// Watch descriptors; only touched under `shared.drain`.
    #[expect(
        clippy::disallowed_types,
        reason = "sync::plain: only locked under `shared.drain` (the facade's), which orders it"
    )]
    targets: crate::sync::plain::Mutex<HashMap<i32, Target>>,
    /// The loom models' stand-in for the kernel's event queue (`inotify/model.rs`): events pushed by a model's
    /// writer, under a loom mutex standing for `notification_lock`. Checked and drained after the real descriptor
    /// (which loom cannot see into); a plain loom mutex, so the facade's counts do not include it. `None` for a
    /// detector built outside a model (the same build's integration tests).
    #[cfg(all(loom, feature = "model-checking"))]
    model_queue: Option<loom::sync::Mutex<std::collections::VecDeque<ModelEvent>>>,
}

/// An event of the loom models' queue: watch descriptor, flags, name.
#[cfg(all(loom, feature = "model-checking"))]
pub(crate) type ModelEvent = (i32, ReadFlags, Option<Vec<u8>>);

/// Events that change a pack directory's listing.
const PACK_EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::ONLYDIR);
/// Events that change a fan-out directory's listing (or make the objects directory gain one).
const DIR_EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::ONLYDIR);

/// File systems whose writers on other machines make no events here (`statfs` magic numbers).
const REMOTE_FS: &[i64] = &[
    0x6969,      // NFS
    0x517B,      // SMB
    0xFF53_4D42, // CIFS
    0xFE53_4D42, // SMB2
    0x6573_5546, // FUSE (sshfs and friends)
    0x00C3_6400, // Ceph
    0x5346_414F, // AFS
    0x0102_1997, // 9P (v9fs)
    0x7375_7245, // Coda
    0x0116_1970, // GFS2
    0x7461_636F, // OCFS2
    0x0BD0_0BD0, // Lustre
    0x4750_4653, // GPFS
    0x0131_11A8, // IBRIX
];

/// Whether `path` is on a file system whose changes by other machines make no inotify events.
pub(super) fn is_remote(path: &Path) -> bool {
    // A `statfs` that fails says "remote": the stat checks, which need no events, answer instead.
    match crate::fault::check_rustix(crate::fault::Call::Stat)
        .and_then(|()| rustix::fs::statfs(path))
    {
        // `f_type`'s width differs between targets.
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(s) => REMOTE_FS.contains(&(s.f_type as i64)),
        Err(_) => true,
    }
}

impl Inotify {
    /// Watch each of `dirs`' `pack/`; `None` (use stat) if inotify is not available there.
    pub(super) fn open(dirs: &[PathBuf], add: &mut AddWatch) -> Option<Inotify> {
        if dirs.iter().any(|d| is_remote(d)) {
            return None;
        }
        let fd = sys::init(sys::CreateFlags::NONBLOCK | sys::CreateFlags::CLOEXEC).ok()?;
        let mut targets = HashMap::new();
        for d in dirs.iter() {
            // A missing `pack/` (or a watch limit) cannot be watched: stat it.
            let wd = add(&fd, &d.join("pack"), PACK_EVENTS).ok()?;
            targets.insert(wd, Target::PackDir);
        }
        Some(Inotify {
            fd,
            shared: Shared::new(dirs.len()),
            #[expect(clippy::disallowed_types, reason = "sync::plain: see the field")]
            targets: crate::sync::plain::Mutex::new(targets),
            #[cfg(all(loom, feature = "model-checking"))]
            model_queue: crate::sync::model::in_model().then(Default::default),
        })
    }

    #[inline]
    pub(super) fn check(&self, token: u64) -> Check {
        // One system call: how many bytes of events are queued. It takes the queue's lock
        // (`notification_lock`), which orders it after every earlier dequeue (see PROTOCOL.md).
        if !self.queue_empty() {
            return Check::Changed;
        }
        // Acquire: pairs with the Release decrement that ends a drain, so its version updates are visible to
        // the caller's loads after this. Equal to the token: no drain under way (a draining state is odd, a
        // token even), no pack change since the listing, no fallback (a token never has the bit).
        let w = self.shared.state.load(Ordering::Acquire);
        if w == token {
            Check::Quiet
        } else if w & FALLBACK != 0 {
            Check::NoEvents
        } else {
            Check::Changed
        }
    }

    pub(super) fn trusted(&self) -> bool {
        self.shared.state.load(Ordering::Relaxed) & FALLBACK == 0
    }

    #[inline]
    pub(super) fn fanout_version(&self, dir: usize, fanout: u8) -> Option<u64> {
        // Relaxed: ordered by `check`'s Acquire load of `state`, or by the drain lock (`watch_fanout`).
        let v = self.shared.fanout(dir, fanout)?.load(Ordering::Relaxed);
        (v & WATCHED != 0).then_some(v)
    }

    pub(super) fn drain(&self) -> u64 {
        let _g = lock(&self.shared.drain);
        self.drain_locked();
        self.shared.state.load(Ordering::Relaxed)
    }

    /// Read and apply every queued event. Caller holds the drain lock.
    fn drain_locked(&self) {
        let s = &self.shared;
        if s.state.load(Ordering::Relaxed) & FALLBACK != 0 {
            return;
        }
        // Relaxed: this increment only has to be visible to a reader that finds the queue empty after this
        // drain's read emptied it, and the kernel's queue lock orders it so (taken by this `read` after the
        // increment, and by that reader's `ioctl` before its load); the `read` is a system call the
        // compiler cannot move the increment across.
        s.state.fetch_add(DRAINING, Ordering::Relaxed);
        let mut targets = self.targets();
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = sys::Reader::new(&self.fd, &mut buf);
        loop {
            let e = match reader.next() {
                Ok(e) => e,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(_) => {
                    s.fall_back();
                    break;
                }
            };
            self.apply(
                &mut targets,
                e.wd(),
                e.events(),
                e.file_name().map(|n| n.to_bytes()),
            );
        }
        // The models' queue: one event dequeued under its lock (as `read` copies events out under
        // `notification_lock`), applied after the lock is released.
        #[cfg(all(loom, feature = "model-checking"))]
        while let Some(q) = &self.model_queue {
            let Some((wd, flags, name)) = q.lock().unwrap().pop_front() else {
                break;
            };
            self.apply(&mut targets, wd, flags, name.as_deref());
        }
        drop(targets);
        // Release: pairs with `check`'s Acquire load; publishes the counter and versions written above.
        s.state.fetch_sub(DRAINING, Ordering::Release);
    }

    /// Apply one event to the shared state. Caller holds the drain lock and `targets`.
    fn apply(
        &self,
        targets: &mut HashMap<i32, Target>,
        wd: i32,
        flags: ReadFlags,
        name: Option<&[u8]>,
    ) {
        let s = &self.shared;
        {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                // Events were lost: everything may have changed. Rescan (list packs again, list every
                // fan-out directory again).
                s.pack_changed();
                for v in s.fanouts.iter() {
                    v.fetch_add(2, Ordering::Relaxed);
                }
                return;
            }
            let Some(&target) = targets.get(&wd) else {
                return;
            };
            let gone = flags.intersects(
                ReadFlags::DELETE_SELF
                    | ReadFlags::MOVE_SELF
                    | ReadFlags::IGNORED
                    | ReadFlags::UNMOUNT,
            );
            match target {
                Target::PackDir => {
                    if gone {
                        // The directory was replaced (or unmounted): a new one would need a new watch, and
                        // writes in between would be lost. Stat from now on.
                        s.pack_changed();
                        s.fall_back();
                    } else if !name.is_some_and(|n| n.starts_with(b"tmp_")) {
                        // git's temporary files (`tmp_pack_*`, `tmp_idx_*`) change no listing.
                        s.pack_changed();
                    }
                }
                Target::Objects(dir) => {
                    if gone {
                        s.pack_changed();
                        s.fall_back();
                    } else if let Some(b) = name.and_then(fanout_byte) {
                        // A fan-out directory created, removed or renamed: list it again, and watch it
                        // (again) when it is listed: a directory that was missing had no watch of its own.
                        s.unwatch(dir, b);
                    }
                }
                Target::Fanout(dir, b) => {
                    if gone {
                        // Removed (`git prune` removes empty fan-out directories) or moved: unwatched; the
                        // objects directory's watch sees a new one, the next listing watches it.
                        targets.remove(&wd);
                        s.unwatch(dir, b);
                    } else if !name.is_some_and(|n| n.starts_with(b"tmp_")) {
                        s.bump(dir, b);
                    }
                }
            }
        }
    }

    /// No event is queued: the steady check's one system call (and, in the loom models, their queue).
    #[inline(always)]
    fn queue_empty(&self) -> bool {
        #[cfg(all(loom, feature = "model-checking"))]
        if let Some(q) = &self.model_queue
            && !q.lock().unwrap().is_empty()
        {
            return false;
        }
        queue_empty(&self.fd)
    }

    /// The loom models' writer: queue `event` (the kernel queues it inside the writer's system call, under
    /// `notification_lock`; the model's writer changes its file system state inside the same lock).
    #[cfg(all(loom, feature = "model-checking"))]
    pub(crate) fn model_event(&self, event: ModelEvent, write: impl FnOnce()) {
        let mut q = self
            .model_queue
            .as_ref()
            .expect("a detector built in a model")
            .lock()
            .unwrap();
        write();
        q.push_back(event);
    }

    /// The watch descriptor of `pack/`. Read it before other threads use the detector: a drain holds the
    /// (std) targets lock across loom operations, and a loom thread blocking on a std lock hangs the model.
    #[cfg(all(loom, feature = "model-checking"))]
    pub(crate) fn model_pack_wd(&self) -> i32 {
        self.model_wd(|t| matches!(t, Target::PackDir))
    }

    /// The watch descriptor of the first target `which` picks (a model's read before its threads start).
    #[cfg(all(loom, feature = "model-checking"))]
    fn model_wd(&self, which: impl Fn(&Target) -> bool) -> i32 {
        *self
            .targets()
            .iter()
            .find(|(_, t)| which(t))
            .expect("a watched target")
            .0
    }

    /// The watch descriptors: locked only under `shared.drain`, or by a model before its threads start (see the
    /// field).
    fn targets(&self) -> crate::sync::plain::MutexGuard<'_, HashMap<i32, Target>> {
        crate::sync::plain::lock(&self.targets)
    }

    /// The models' `rename` of `name` into `pack/` (watched as `wd`), through [`model_event`](Self::model_event).
    #[cfg(all(loom, feature = "model-checking"))]
    pub(crate) fn model_pack_event(&self, wd: i32, name: &[u8], write: impl FnOnce()) {
        self.model_event((wd, ReadFlags::MOVED_TO, Some(name.to_vec())), write);
    }

    /// The loom models' detector: objects directory `objects` (one), whose `pack/` must exist; every fan-out
    /// directory starts unwatched.
    #[cfg(all(loom, feature = "model-checking"))]
    pub(crate) fn for_model(objects: &Path) -> Inotify {
        Inotify::open(&[objects.to_path_buf()], &mut add_watch).expect("inotify in the model")
    }

    pub(super) fn watch_fanout(
        &self,
        dir: usize,
        path: &Path,
        fanout: u8,
        add: &mut AddWatch,
    ) -> Option<u64> {
        let s = &self.shared;
        let _g = lock(&s.drain);
        let v = s.fanout(dir, fanout)?;
        if s.state.load(Ordering::Relaxed) & FALLBACK != 0 {
            return None;
        }
        let cur = v.load(Ordering::Relaxed);
        if cur & WATCHED != 0 {
            return Some(cur);
        }
        let mut targets = self.targets();
        if !targets
            .values()
            .any(|t| matches!(t, Target::Objects(d) if *d == dir))
        {
            match add(&self.fd, path, DIR_EVENTS) {
                Ok(wd) => {
                    targets.insert(wd, Target::Objects(dir));
                }
                Err(_) => {
                    drop(targets);
                    s.pack_changed();
                    s.fall_back();
                    return None;
                }
            }
        }
        let hex = crate::loose::fanout_name(fanout);
        let sub = path.join(std::str::from_utf8(&hex).unwrap_or("??"));
        match add(&self.fd, &sub, DIR_EVENTS) {
            Ok(wd) => {
                targets.insert(wd, Target::Fanout(dir, fanout));
            }
            // Not there (yet): the objects directory's watch sees it created (and unwatches it, so the
            // listing after that watches it).
            Err(Errno::NOENT) | Err(Errno::NOTDIR) => {}
            // A watch limit (ENOSPC) or anything else: events would be incomplete. Stat from now on.
            Err(_) => {
                drop(targets);
                s.pack_changed();
                s.fall_back();
                return None;
            }
        }
        // Under the drain lock: no drain runs, so the version read by the caller before listing is this one.
        let nv = v.fetch_or(WATCHED, Ordering::Relaxed) | WATCHED;
        Some(nv)
    }
}

/// `ioctl(fd, FIONREAD)` answered 0: no event is queued. The steady check's one system call, through rustix (its
/// wrapper is an out-of-line call and an error conversion, about 20 instructions a miss; glibc's `ioctl` is no
/// shorter: variadic arguments and a stack protector). An error is "not empty": the slow path drains and sees
/// it. rustix's call is opaque to the compiler, so no load or store moves across it (the ordering argument in
/// PROTOCOL.md needs that).
///
/// Not a zero-byte `read`, although rustix inlines that to the `syscall` instruction (it answers `EAGAIN` on an
/// empty queue and `EINVAL`, consuming nothing, on a non-empty one, under the same lock): the kernel's read path
/// (`rw_verify_area`, the wait-queue add and remove in `inotify_read`) cost 55 to 200 ns more per call than
/// `FIONREAD` on this project's machine (`bench/scripts/change-check-syscall-cost.sh`; docs/BENCHMARKS.md,
/// "Instructions per miss"), far more than the 20 instructions it saves.
#[inline(always)]
fn queue_empty(owned: &OwnedFd) -> bool {
    rustix::io::ioctl_fionread(owned).is_ok_and(|n| n == 0)
}

/// The byte a fan-out directory's name stands for (`"3f"` -> `0x3f`; lower-case, as git names them).
fn fanout_byte(name: &[u8]) -> Option<u8> {
    match name {
        [h, l] => Some((crate::oid::hex_val(*h)? << 4) | crate::oid::hex_val(*l)?),
        _ => None,
    }
}

/// The change detector's loom model (loom builds with `model-checking` only), beside the code it checks; run from
/// `loom-tests/detectors.rs` through `odb_index::testing::model`.
#[cfg(all(loom, feature = "model-checking"))]
pub mod model;

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use rustix::io::Errno;

    fn objects() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path().join("objects");
        std::fs::create_dir_all(objects.join("pack")).unwrap();
        std::fs::create_dir_all(objects.join("ab")).unwrap();
        (tmp, objects)
    }

    /// The watch limit (`ENOSPC` from `inotify_add_watch`) at open: no events, stat.
    #[test]
    fn watch_limit_at_open_is_stat() {
        let (_tmp, objects) = objects();
        let mut refuse = |_: &std::os::fd::OwnedFd, _: &Path, _| Err(Errno::NOSPC);
        assert!(Inotify::open(std::slice::from_ref(&objects), &mut refuse).is_none());
        // The same directories with the kernel's own call: events.
        assert!(Inotify::open(std::slice::from_ref(&objects), &mut add_watch).is_some());
    }

    /// The watch limit reached when a fan-out directory is first watched: the store falls back to stat for
    /// good (every check answers `NoEvents`, no fan-out is watched), never trusting a listing it cannot keep.
    #[test]
    fn watch_limit_later_falls_back() {
        let (_tmp, objects) = objects();
        let i = Inotify::open(std::slice::from_ref(&objects), &mut add_watch).unwrap();
        let token = i.drain();
        assert_eq!(i.check(token), Check::Quiet);
        let v = i.watch_fanout(0, &objects, 0xab, &mut add_watch).unwrap();
        assert_eq!(i.fanout_version(0, 0xab), Some(v));
        // A write in the watched fan-out directory: pending, then drained into its version.
        std::fs::write(objects.join("ab/cdef"), b"").unwrap();
        assert_eq!(i.check(token), Check::Changed);
        assert_eq!(i.drain(), token, "a loose write is not a pack change");
        assert_eq!(i.check(token), Check::Quiet);
        assert!(i.fanout_version(0, 0xab).unwrap() > v);
        let mut refuse = |_: &std::os::fd::OwnedFd, _: &Path, _| Err(Errno::NOSPC);
        assert_eq!(i.watch_fanout(0, &objects, 0xcd, &mut refuse), None);
        assert_eq!(i.check(token), Check::NoEvents);
        assert_eq!(i.fanout_version(0, 0xab), None);
        assert_ne!(i.drain() & FALLBACK, 0);
    }

    /// The steady check's system call asks without consuming: with an event queued it says "not empty" twice,
    /// and the drain after it applies the event.
    #[test]
    fn queue_check_consumes_nothing() {
        let (_tmp, objects) = objects();
        let i = Inotify::open(std::slice::from_ref(&objects), &mut add_watch).unwrap();
        let t0 = i.drain();
        assert!(queue_empty(&i.fd));
        std::fs::write(objects.join("pack/pack-x.idx"), b"").unwrap();
        assert!(!queue_empty(&i.fd));
        assert!(!queue_empty(&i.fd), "the first check consumed the event");
        assert_eq!(i.check(t0), Check::Changed);
        let t1 = i.drain();
        assert!(
            t1 > t0,
            "the drain did not see the event the checks left queued"
        );
        assert!(queue_empty(&i.fd));
        assert_eq!(i.check(t1), Check::Quiet);
    }

    /// A pack directory write is a pack change; git's temporary files are not.
    #[test]
    fn pack_directory_events_count_but_temporary_files_do_not() {
        let (_tmp, objects) = objects();
        let i = Inotify::open(std::slice::from_ref(&objects), &mut add_watch).unwrap();
        let t0 = i.drain();
        std::fs::write(objects.join("pack/tmp_pack_x"), b"").unwrap();
        assert_eq!(i.drain(), t0);
        std::fs::rename(
            objects.join("pack/tmp_pack_x"),
            objects.join("pack/pack-x.idx"),
        )
        .unwrap();
        let t1 = i.drain();
        assert!(t1 > t0 && t1 & FALLBACK == 0);
        assert_eq!(i.check(t1), Check::Quiet);
        assert_eq!(i.check(t0), Check::Changed);
    }

    /// A local directory is not taken for a network file system.
    #[test]
    fn local_directory_is_not_remote() {
        let (_tmp, objects) = objects();
        assert!(!is_remote(&objects));
        assert!(is_remote(&objects.join("no such directory")));
    }
}
