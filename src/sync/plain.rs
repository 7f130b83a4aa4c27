//! `std` in every build (the other files of `sync/` swap under a checker): types that are the same in loom
//! builds, for values that live outside the model-checked protocol (the public `Arc<Store>`, shared errors,
//! loaded indices, the loose cache). Only the protocol's own state uses the
//! switchable types of `sync`.
//!
//! Why a value may live outside the models, the one reason every use relies on: nothing another thread races on
//! through it, or nothing an answer depends on. An `Arc` here only counts references to values immutable once
//! shared (slots and cells of the facade publish them), so its uses need no word. The `Mutex` and the atomics
//! are re-exports of std's, so clippy's `disallowed_types` (`.clippy.toml`) flags each use: the use carries
//! `#[expect(clippy::disallowed_types, reason = "sync::plain: ...")]` naming its case in a few words (a metric, a
//! report list no answer reads, a lock ordered by a facade lock). The facade's own types are aliases, which
//! clippy does not flag.

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
