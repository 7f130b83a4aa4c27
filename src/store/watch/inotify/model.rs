//! The change detector's protocol core under loom (docs/FRESHNESS.md, section 1, "Invariant (for a model)"): the
//! real `Inotify::check`, `drain`, `fanout_version` and `watch_fanout` (`src/store/watch/inotify.rs`) on loom's atomics
//! and mutex, with the kernel's event queue stood in for by a loom mutex around a queue (`model_queue`, compiled
//! only in loom builds with `model-checking`, and set only for a detector built in a model; the real descriptor is still read, and stays empty here). The writer's
//! "system call" changes the model's directory and queues its event under that mutex, as the kernel queues
//! the event inside `rename` under `notification_lock`; `FIONREAD` and `read` take the same lock.
//!
//! Not modelled: the kernel itself (that the event is queued before the writer's system call returns, and that
//! `FIONREAD` and `read` take `notification_lock`, is the argument's step 1-2, from the kernel's source); the
//! handle's use of the answer (`src/store/listing/loose_sources.rs`, whose version check the `store_loose_objects_in_every_mode`
//! model covers on the real file system); the refresh that follows a pack change (`Handle::packs_changed`, then
//! `Store::refresh`: drain, take the new token, list), which the integration test
//! `watch::object_written_by_another_process_before_the_signal_is_found` runs on the real file system with a
//! pack's `.idx` renamed into place (one handle there: its own drain finds the event, so only these models see
//! an event another handle drained).

use std::path::Path;

use loom::sync::Arc;
use loom::sync::Mutex;
use loom::thread;
use rustix::fs::inotify::ReadFlags;

use super::{Check, Inotify, add_watch};

/// One execution: a handle has listed fan-out directory `ab` (empty) after a drain; a writer creates object X
/// in it, and another handle's slow path drains concurrently. After the writer's call returned, a lookup's
/// steady check must not answer `Quiet` while the listing's version is still current (that listing lacks X).
pub fn lookup_after_a_write_sees_it(objects: &Path) {
    let w = Arc::new(Inotify::for_model(objects));
    // The handle's listing: token from a drain, then the fan-out watched (version read before listing).
    let token = w.drain();
    let v0 = w
        .watch_fanout(0, objects, 0xab, &mut add_watch)
        .expect("fan-out watched");
    assert_eq!(w.fanout_version(0, 0xab), Some(v0));
    let wd = w.model_wd(|t| matches!(t, super::Target::Fanout(0, 0xab)));
    // The model's directory `ab/`: whether X is in it.
    let dir = Arc::new(Mutex::new(false));
    let (w1, d1) = (Arc::clone(&w), Arc::clone(&dir));
    let writer = thread::spawn(move || {
        w1.model_event((wd, ReadFlags::MOVED_TO, Some(b"cdef".to_vec())), || {
            *d1.lock().unwrap() = true
        });
    });
    let w2 = Arc::clone(&w);
    let drainer = thread::spawn(move || {
        w2.drain();
    });
    writer.join().unwrap();
    // The lookup begins after the write returned.
    let c = w.check(token);
    if c == Check::Quiet {
        assert_ne!(
            w.fanout_version(0, 0xab),
            Some(v0),
            "Quiet with a current version whose listing lacks X"
        );
    } else {
        assert_eq!(c, Check::Changed);
        // The slow path: drain, then the version must have moved (the handle lists again and sees X).
        assert_eq!(w.drain(), token, "a loose write is not a pack change");
        assert_ne!(
            w.fanout_version(0, 0xab),
            Some(v0),
            "version not bumped by X's event"
        );
    }
    assert!(*dir.lock().unwrap());
    drainer.join().unwrap();
}

/// One execution: a handle's listing was made after a drain (its token); a writer renames a new pack's `.idx`
/// into `pack/` (the event that makes the store list the pack directory again), and another handle's slow path
/// drains concurrently, consuming that event. After the writer's call returned, a lookup's steady check must not
/// answer `Quiet` for the old token: once the event is drained, only the state word's pack count says the pack
/// directory changed (no fan-out version moves for a pack). What would go wrong: a check that compares the word's
/// drain and fallback bits but not the count answers `Quiet`, and the miss never refreshes: the new pack's
/// objects are reported missing for as long as nothing else changes.
pub fn lookup_after_a_pack_write_sees_it(objects: &Path) {
    let w = Arc::new(Inotify::for_model(objects));
    let token = w.drain();
    let wd = w.model_pack_wd();
    // The model's `pack/`: whether the new `.idx` is in it.
    let dir = Arc::new(Mutex::new(false));
    let (w1, d1) = (Arc::clone(&w), Arc::clone(&dir));
    let writer = thread::spawn(move || {
        w1.model_event(
            (wd, ReadFlags::MOVED_TO, Some(b"pack-1.idx".to_vec())),
            || *d1.lock().unwrap() = true,
        );
    });
    let w2 = Arc::clone(&w);
    let drainer = thread::spawn(move || {
        w2.drain();
    });
    writer.join().unwrap();
    // The lookup begins after the write returned: the listing of `token` lacks the pack.
    assert_ne!(
        w.check(token),
        Check::Quiet,
        "Quiet for a listing made before a pack was added"
    );
    // The slow path's refresh check (`Handle::packs_changed`): its drain's count differs from the token.
    assert_ne!(w.drain(), token, "pack count not moved by the .idx's event");
    assert!(*dir.lock().unwrap());
    drainer.join().unwrap();
}
