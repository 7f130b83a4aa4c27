//! `std` in every build (the other files of `sync/` swap under a checker): types that are the same in loom
//! builds, for values that live outside the model-checked protocol (the public `Arc<Store>`, shared errors,
//! loaded indices, the loose cache). Only the protocol's own state uses the
//! switchable types of `sync`.
//!
//! Every use outside this file says why on its line or the line above it (`// plain: ...`): nothing another
//! thread races on, or nothing an answer depends on. `.ci/facade.sh` fails on a use without one, and on a std
//! atomic, mutex, spin hint or yield outside `src/sync/`.

pub(crate) use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// std atomics, for counters no answer depends on (the metrics).
pub(crate) mod atomic {
    pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
}

/// Lock a std mutex, ignoring poisoning (see [`super::lock`](super::lock)).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
