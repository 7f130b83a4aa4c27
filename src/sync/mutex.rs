//! `Mutex`, `MutexGuard` and `Condvar` (std's, loom's or shuttle's), and the crate's only ways to take a lock and
//! to wait: [`lock`] and [`wait`], which ignore poisoning and, under loom, count into
//! [`OpCounts`](super::OpCounts) (`locks`, `waits`).

#[cfg(all(test, loom))]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(all(test, shuttle))]
pub(crate) use shuttle::sync::{Condvar, Mutex, MutexGuard};
// Aliases, not `use` (as in `atomic.rs`): clippy's `disallowed_types` flags std's types, not the facade's names.
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type Condvar = std::sync::Condvar;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type Mutex<T> = std::sync::Mutex<T>;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) use std::sync::MutexGuard;

/// Lock a mutex, ignoring poisoning: every critical section in this crate leaves its data consistent at every
/// point where it could panic, so a poisoned lock carries no broken invariant.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    let g = match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    #[cfg(all(test, loom))]
    super::trace::count(|c| c.locks += 1);
    g
}

/// Wait on a condition variable, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    #[cfg(all(test, loom))]
    super::trace::count(|c| c.waits += 1);
    match cv.wait(g) {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
