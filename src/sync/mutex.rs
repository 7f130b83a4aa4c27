//! `Mutex`, `MutexGuard` and `Condvar` (std's; in a model-checked build, enums holding the checker's inside a model
//! and std's outside: `sync/mod.rs`), and the crate's only ways to take a lock and to wait: [`lock`] and [`wait`],
//! which ignore poisoning and, under loom, count into [`OpCounts`](super::OpCounts) (`locks`, `waits`).

// Aliases, not `use` (as in `atomic.rs`): clippy's `disallowed_types` flags std's types, not the facade's names.
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type Condvar = std::sync::Condvar;
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type Mutex<T> = std::sync::Mutex<T>;
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) use std::sync::MutexGuard;

/// Lock a mutex, ignoring poisoning: every critical section in this crate leaves its data consistent at every
/// point where it could panic, so a poisoned lock carries no broken invariant.
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Wait on a condition variable, ignoring poisoning (see [`lock`]).
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(g)
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub(crate) use switched::{Condvar, Mutex, lock, wait};

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
mod switched {
    use super::super::checker;
    use super::super::model::{in_model, std_side};
    use super::super::trace::count;
    use std::sync::PoisonError;

    /// The checker's mutex inside a model, std's outside.
    #[derive(Debug)]
    pub(crate) enum Mutex<T> {
        Std(std::sync::Mutex<T>),
        Model(checker::sync::Mutex<T>),
    }

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            if in_model() {
                Self::Model(checker::sync::Mutex::new(value))
            } else {
                Self::Std(std::sync::Mutex::new(value))
            }
        }
    }

    /// A guard of either kind of [`Mutex`].
    pub(crate) enum MutexGuard<'a, T> {
        Std(std::sync::MutexGuard<'a, T>),
        Model(checker::sync::MutexGuard<'a, T>),
    }

    impl<T> std::ops::Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            match self {
                Self::Std(g) => g,
                Self::Model(g) => g,
            }
        }
    }

    impl<T> std::ops::DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            match self {
                Self::Std(g) => g,
                Self::Model(g) => g,
            }
        }
    }

    /// The checker's condition variable inside a model, std's outside.
    #[derive(Debug)]
    pub(crate) enum Condvar {
        Std(std::sync::Condvar),
        Model(checker::sync::Condvar),
    }

    impl Condvar {
        pub(crate) fn new() -> Self {
            if in_model() {
                Self::Model(checker::sync::Condvar::new())
            } else {
                Self::Std(std::sync::Condvar::new())
            }
        }

        pub(crate) fn notify_all(&self) {
            match self {
                Self::Std(c) => {
                    std_side();
                    c.notify_all();
                }
                Self::Model(c) => c.notify_all(),
            }
        }
    }

    /// Lock a mutex, ignoring poisoning (see the std build's `lock`), counted under loom.
    pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        let g = match m {
            Mutex::Std(m) => {
                std_side();
                MutexGuard::Std(m.lock().unwrap_or_else(PoisonError::into_inner))
            }
            Mutex::Model(m) => MutexGuard::Model(m.lock().unwrap_or_else(PoisonError::into_inner)),
        };
        count(|c| c.locks += 1);
        g
    }

    /// Wait on a condition variable, ignoring poisoning, counted under loom. A guard and a condition variable built
    /// on different sides of a model's boundary never meet: the protocol keeps each pair in one value, built at
    /// once.
    pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        count(|c| c.waits += 1);
        match (cv, g) {
            (Condvar::Std(cv), MutexGuard::Std(g)) => {
                std_side();
                MutexGuard::Std(cv.wait(g).unwrap_or_else(PoisonError::into_inner))
            }
            (Condvar::Model(cv), MutexGuard::Model(g)) => {
                MutexGuard::Model(cv.wait(g).unwrap_or_else(PoisonError::into_inner))
            }
            _ => unreachable!(
                "a condition variable and a guard from two sides of a model's boundary"
            ),
        }
    }
}
