//! The one place that chooses between `std` and `loom`.
//!
//! Every other module imports its atomics, `Arc`, `Mutex`, `Condvar` and cells from here (in the style of
//! sharded-slab's `src/sync.rs`), so that building with `RUSTFLAGS="--cfg loom"` and `--features loom` swaps the
//! whole protocol onto loom's model-checked primitives without touching its code.

#[cfg(all(loom, feature = "loom"))]
mod imp {
    pub(crate) use loom::sync::atomic::{AtomicU8, AtomicU64, Ordering};
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};

    pub(crate) mod cell {
        pub(crate) use loom::cell::UnsafeCell;
    }

    /// A bounded busy-wait hint. Under loom there is nothing to gain from spinning and every spin is a branch
    /// to explore, so the spin budget is zero.
    pub(crate) const SPIN_LIMIT: u32 = 0;

    pub(crate) fn spin_loop() {
        loom::hint::spin_loop();
    }

    /// Events recorded by [`trace`] in the current loom execution. A plain `std::sync::Mutex` is invisible to
    /// loom, so recording adds no synchronization to the model.
    static TRACE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    /// Record a protocol event (loom builds only), prefixed with the loom thread's id.
    pub(crate) fn trace(event: impl FnOnce() -> String) {
        let line = format!("{:?}: {}", loom::thread::current().id(), event());
        TRACE.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }

    /// Take (and clear) the events recorded so far. Models call it at the start of each execution and print it
    /// when an execution fails.
    pub fn take_trace() -> Vec<String> {
        std::mem::take(&mut *TRACE.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(not(all(loom, feature = "loom")))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};

    pub(crate) mod cell {
        /// `std::cell::UnsafeCell` with loom's closure-based access API, so the protocol can be written once.
        #[derive(Debug)]
        pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

        impl<T> UnsafeCell<T> {
            pub(crate) const fn new(value: T) -> Self {
                Self(std::cell::UnsafeCell::new(value))
            }

            #[inline(always)]
            pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
                f(self.0.get())
            }

            #[inline(always)]
            pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
                f(self.0.get())
            }
        }
    }

    /// How many `spin_loop` hints a waiter issues before it parks on the condition variable. Loads take
    /// microseconds to milliseconds (open + mmap + validate), so the spin is short: it only catches a load that
    /// is about to finish.
    pub(crate) const SPIN_LIMIT: u32 = 64;

    #[inline(always)]
    pub(crate) fn spin_loop() {
        std::hint::spin_loop();
    }

    /// Protocol event tracing is compiled out of non-loom builds.
    #[inline(always)]
    pub(crate) fn trace(_event: impl FnOnce() -> String) {}
}

pub(crate) use imp::*;

/// Types that are the same in loom builds: for values that live outside the model-checked protocol (the public
/// `Arc<Store>`, shared errors, loaded indices). Only the protocol's own state uses the switchable types above.
pub(crate) mod plain {
    pub(crate) use std::sync::Arc;
}

/// Lock a mutex, ignoring poisoning: every critical section in this crate leaves its data consistent at every
/// point where it could panic, so a poisoned lock carries no broken invariant.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Wait on a condition variable, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match cv.wait(g) {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[cfg(all(loom, feature = "loom"))]
pub use imp::take_trace;
