//! The one place that chooses between `std` and `loom`.
//!
//! Every other module imports its atomics, `Arc`, `Mutex`, `Condvar` and cells from here (in the style of
//! sharded-slab's `src/sync.rs`), so that the crate's own unit tests built with `RUSTFLAGS="--cfg loom"` run the
//! whole protocol on loom's model-checked primitives without touching its code, and with `RUSTFLAGS="--cfg
//! shuttle"` on shuttle's randomly scheduled ones (larger models, every atomic treated as SeqCst: the logic at
//! scale, while memory orderings stay loom's job). The swap happens only under `cfg(all(test, loom))` and
//! `cfg(all(test, shuttle))` (tokio's rule, `tokio/src/loom/mod.rs`): a crate that depends on this one and runs
//! its own loom models with the same flag gets `std` primitives from it, as in any other build. Code that must not
//! be model-checked (the loose cache, shared errors) takes its primitives from [`plain`], which is `std` in every
//! build. In either model-checked build, [`model`] gives the models in `loom-tests/` (compiled into the unit tests,
//! `src/lib.rs`) the checker's thread spawning and its runner, so one scenario runs under both.

#[cfg(all(test, loom, shuttle))]
compile_error!(
    "`--cfg loom` and `--cfg shuttle` are two different model checkers: build with one of them"
);

#[cfg(all(test, loom))]
mod imp {
    use std::cell::{Cell, RefCell};

    pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
    pub(crate) use std::sync::atomic::Ordering;

    pub(crate) mod cell {
        pub(crate) use loom::cell::UnsafeCell;
    }

    thread_local! {
        /// This test's spin budget (see [`spin_limit`]); a std thread-local, so per test (loom runs a model's
        /// threads on its test's OS thread).
        static SPIN_LIMIT: Cell<u32> = const { Cell::new(0) };
    }

    /// A bounded busy-wait hint. Under loom every spin is a branch to explore, so the budget is zero unless a
    /// model asks for more with [`set_spin_limit`] (the spin-then-park models run with 1, so the spin path is
    /// checked too).
    pub(crate) fn spin_limit() -> u32 {
        SPIN_LIMIT.get()
    }

    /// Set this test's spin budget (loom builds only; 0 unless set). Lasts for the rest of the test.
    pub(crate) fn set_spin_limit(n: u32) {
        SPIN_LIMIT.set(n);
    }

    /// loom's `Arc` behind a counting wrapper: every clone and every drop is a reference-count read-modify-write
    /// on a shared line, so each counts as one [`OpCounts::rmws`], and P4's budget (one Acquire load per
    /// steady-state miss) also rules out a reference count touched on the miss path.
    #[derive(Debug)]
    pub(crate) struct Arc<T: ?Sized>(loom::sync::Arc<T>);

    impl<T> Arc<T> {
        /// A new `Arc` (no count: nothing is shared yet).
        pub(crate) fn new(value: T) -> Self {
            Arc(loom::sync::Arc::new(value))
        }
    }

    impl<T: ?Sized> Arc<T> {
        /// Same allocation (reads no count).
        pub(crate) fn ptr_eq(a: &Self, b: &Self) -> bool {
            loom::sync::Arc::ptr_eq(&a.0, &b.0)
        }
    }

    impl<T: ?Sized> Clone for Arc<T> {
        fn clone(&self) -> Self {
            count(|c| c.rmws += 1);
            Arc(loom::sync::Arc::clone(&self.0))
        }
    }

    impl<T: ?Sized> Drop for Arc<T> {
        fn drop(&mut self) {
            count(|c| c.rmws += 1);
        }
    }

    impl<T: ?Sized> std::ops::Deref for Arc<T> {
        type Target = T;
        fn deref(&self) -> &T {
            &self.0
        }
    }

    pub(crate) fn spin_loop() {
        loom::hint::spin_loop();
    }

    /// How many shared-memory operations of each kind one loom thread performed (loom builds only).
    ///
    /// Every atomic the crate uses under loom is a counting wrapper (below), and [`lock`](super::lock) and
    /// [`wait`](super::wait) count too, so a model can assert what a code path does to shared state, including
    /// operations that leave no trace line (a failed compare-exchange, a `fetch_or`, an untraced load).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct OpCounts {
        /// Loads with `Acquire` ordering.
        pub acquire_loads: usize,
        /// Loads with any other ordering (`Relaxed`, `SeqCst`).
        pub other_loads: usize,
        /// Plain stores.
        pub stores: usize,
        /// Read-modify-writes other than compare-exchange (`fetch_*`, `swap`).
        pub rmws: usize,
        /// Compare-exchanges that succeeded.
        pub cas_successes: usize,
        /// Compare-exchanges that failed.
        pub cas_failures: usize,
        /// Mutex acquisitions (through `sync::lock`).
        pub locks: usize,
        /// Condition-variable waits (through `sync::wait`).
        pub waits: usize,
    }

    impl OpCounts {
        /// Exactly one Acquire load and nothing else: the P4 budget of a steady-state miss.
        pub(crate) const ONE_ACQUIRE_LOAD: OpCounts = OpCounts {
            acquire_loads: 1,
            other_loads: 0,
            stores: 0,
            rmws: 0,
            cas_successes: 0,
            cas_failures: 0,
            locks: 0,
            waits: 0,
        };
    }

    // Per-test state. loom runs all threads of a model on the OS thread that called `check` (one per test under
    // cargo's harness), so a std `thread_local!` is private to one test, and tests may run in parallel. Plain
    // std cells are invisible to loom: recording adds no synchronization to the model.
    thread_local! {
        static TRACE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        static OPS: RefCell<Vec<(loom::thread::ThreadId, OpCounts)>> = const { RefCell::new(Vec::new()) };
    }

    /// Count one operation for the current loom thread.
    pub(crate) fn count(f: impl FnOnce(&mut OpCounts)) {
        let id = loom::thread::current().id();
        OPS.with_borrow_mut(|all| match all.iter_mut().find(|(t, _)| *t == id) {
            Some((_, c)) => f(c),
            None => {
                let mut c = OpCounts::default();
                f(&mut c);
                all.push((id, c));
            }
        });
    }

    /// Take (and reset) the operation counts of the current loom thread.
    pub(crate) fn take_op_counts() -> OpCounts {
        let id = loom::thread::current().id();
        OPS.with_borrow_mut(|all| match all.iter().position(|(t, _)| *t == id) {
            Some(i) => all.swap_remove(i).1,
            None => OpCounts::default(),
        })
    }

    /// Record a protocol event (loom builds only), prefixed with the loom thread's id.
    pub(crate) fn trace(event: impl FnOnce() -> String) {
        let line = format!("{:?}: {}", loom::thread::current().id(), event());
        TRACE.with_borrow_mut(|t| t.push(line));
    }

    /// Take (and clear) the events recorded so far in this test. Models print it when an execution fails.
    pub(crate) fn take_trace() -> Vec<String> {
        TRACE.with_borrow_mut(std::mem::take)
    }

    /// Clear this test's trace and operation counts (at the start of each loom execution).
    pub(crate) fn reset_model_state() {
        TRACE.with_borrow_mut(Vec::clear);
        OPS.with_borrow_mut(Vec::clear);
    }

    fn count_load(o: Ordering) {
        count(|c| match o {
            Ordering::Acquire => c.acquire_loads += 1,
            _ => c.other_loads += 1,
        });
    }

    /// A loom atomic that counts every operation on it ([`OpCounts`]); otherwise exactly loom's.
    macro_rules! counted_atomic {
        ($name:ident, $int:ty) => {
            #[derive(Debug)]
            pub(crate) struct $name(loom::sync::atomic::$name);

            #[allow(dead_code, reason = "the full std surface; each build uses part of it")]
            impl $name {
                pub(crate) fn new(v: $int) -> Self {
                    Self(loom::sync::atomic::$name::new(v))
                }
                pub(crate) fn load(&self, o: Ordering) -> $int {
                    let v = self.0.load(o);
                    count_load(o);
                    v
                }
                pub(crate) fn store(&self, v: $int, o: Ordering) {
                    self.0.store(v, o);
                    count(|c| c.stores += 1);
                }
                pub(crate) fn swap(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.swap(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_add(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_add(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_sub(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_sub(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_or(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_or(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_and(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_and(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn compare_exchange(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    let r = self.0.compare_exchange(current, new, success, failure);
                    count(|c| match r {
                        Ok(_) => c.cas_successes += 1,
                        Err(_) => c.cas_failures += 1,
                    });
                    r
                }
            }
        };
    }
    counted_atomic!(AtomicU8, u8);
    counted_atomic!(AtomicU32, u32);
    counted_atomic!(AtomicU64, u64);

    /// loom's `AtomicBool`, counting like [`counted_atomic`]'s.
    #[derive(Debug)]
    pub(crate) struct AtomicBool(loom::sync::atomic::AtomicBool);

    #[allow(
        dead_code,
        reason = "the std surface the crate uses; each build uses part of it"
    )]
    impl AtomicBool {
        pub(crate) fn new(v: bool) -> Self {
            Self(loom::sync::atomic::AtomicBool::new(v))
        }
        pub(crate) fn load(&self, o: Ordering) -> bool {
            let v = self.0.load(o);
            count_load(o);
            v
        }
        pub(crate) fn store(&self, v: bool, o: Ordering) {
            self.0.store(v, o);
            count(|c| c.stores += 1);
        }
        pub(crate) fn swap(&self, v: bool, o: Ordering) -> bool {
            let r = self.0.swap(v, o);
            count(|c| c.rmws += 1);
            r
        }
    }

    pub(crate) use super::once::OnceLock;
}

/// `std::cell::UnsafeCell` with loom's closure-based access API, so the protocol can be written once (std and
/// shuttle builds; shuttle has no cell of its own and checks no causality through cells).
#[cfg(not(all(test, loom)))]
mod std_cell {
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

#[cfg(all(test, shuttle))]
mod imp {
    pub(crate) use super::once::OnceLock;
    pub(crate) use shuttle::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
    pub(crate) use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard};

    pub(crate) mod cell {
        pub(crate) use super::super::std_cell::UnsafeCell;
    }

    /// No spinning under shuttle: each `spin_loop` is a yield to its scheduler, which only lengthens schedules.
    #[inline(always)]
    pub(crate) const fn spin_limit() -> u32 {
        0
    }

    pub(crate) fn spin_loop() {
        shuttle::hint::spin_loop();
    }

    /// Protocol event tracing is loom's; shuttle prints a replayable schedule of its own on failure.
    #[inline(always)]
    pub(crate) fn trace(_event: impl FnOnce() -> String) {}
}

#[cfg(not(all(test, any(loom, shuttle))))]
mod imp {
    // Aliases, not `use`: clippy's `disallowed_types` (.clippy.toml) resolves a re-export to std's type and would
    // flag every use of the facade; an alias is a name of its own, so only std's types named elsewhere are flagged.
    pub(crate) type AtomicBool = std::sync::atomic::AtomicBool;
    pub(crate) type AtomicU8 = std::sync::atomic::AtomicU8;
    pub(crate) type AtomicU32 = std::sync::atomic::AtomicU32;
    pub(crate) type AtomicU64 = std::sync::atomic::AtomicU64;
    pub(crate) type Condvar = std::sync::Condvar;
    pub(crate) type Mutex<T> = std::sync::Mutex<T>;
    pub(crate) use std::sync::atomic::Ordering;
    pub(crate) use std::sync::{Arc, MutexGuard, OnceLock};

    pub(crate) mod cell {
        pub(crate) use super::super::std_cell::UnsafeCell;
    }

    /// How many `spin_loop` hints a waiter issues before it parks on the condition variable. Loads take
    /// microseconds to milliseconds (open + mmap + validate), so the spin is short: it only catches a load that
    /// is about to finish.
    #[inline(always)]
    pub(crate) const fn spin_limit() -> u32 {
        64
    }

    #[inline(always)]
    pub(crate) fn spin_loop() {
        #[expect(
            clippy::disallowed_methods,
            reason = "the facade's bounded spin is the one spin hint"
        )]
        std::hint::spin_loop();
    }

    /// Protocol event tracing is compiled out of non-loom builds.
    #[inline(always)]
    pub(crate) fn trace(_event: impl FnOnce() -> String) {}
}

pub(crate) use imp::*;

/// `std::sync::OnceLock` for the model-checked builds (neither loom nor shuttle has one), written over the
/// checker's primitives so that its publication is modelled: the value is written once under `init`, then
/// `ready` is set with Release; a reader that sees `ready` (Acquire) sees the value. Only the part of std's
/// surface the crate uses.
#[cfg(all(test, any(loom, shuttle)))]
mod once {
    use super::imp::cell::UnsafeCell;
    use super::imp::{AtomicU8, Mutex, Ordering};

    pub(crate) struct OnceLock<T> {
        ready: AtomicU8,
        init: Mutex<()>,
        value: UnsafeCell<Option<T>>,
    }

    // SAFETY: as std's `OnceLock`: the value is written at most once, by the thread holding `init` while `ready`
    // is 0 (no reader reads it then), and afterwards only shared as `&T`; so sharing needs `T: Sync` (readers)
    // and `T: Send` (the writer may be any thread, and the drop happens on the owner's).
    unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}
    // SAFETY: owning the cell is owning a `T`.
    unsafe impl<T: Send> Send for OnceLock<T> {}

    impl<T> OnceLock<T> {
        pub(crate) fn new() -> Self {
            OnceLock {
                ready: AtomicU8::new(0),
                init: Mutex::new(()),
                value: UnsafeCell::new(None),
            }
        }

        pub(crate) fn get(&self) -> Option<&T> {
            // Acquire: pairs with the Release store of `get_or_init`, so the value written before it is seen.
            if self.ready.load(Ordering::Acquire) == 0 {
                return None;
            }
            // SAFETY: `ready` is 1, so the value was written (before the Release store seen above) and is never
            // written again while `self` is borrowed.
            self.value.with(|p| unsafe { (*p).as_ref() })
        }

        pub(crate) fn set(&self, value: T) -> Result<(), T> {
            let mut value = Some(value);
            self.get_or_init(|| value.take().expect("taken once"));
            value.map_or(Ok(()), Err)
        }

        pub(crate) fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
            if let Some(v) = self.get() {
                return v;
            }
            let g = super::lock(&self.init);
            // Relaxed: `ready` is only stored while `init` is held, and the lock orders that store before us.
            if self.ready.load(Ordering::Relaxed) == 0 {
                let v = f();
                // SAFETY: `ready` is 0 and `init` is held: no reader reads the value and no other writer writes it.
                self.value.with_mut(|p| unsafe { *p = Some(v) });
                // Release: pairs with the Acquire load of `get`, publishing the value written just above.
                self.ready.store(1, Ordering::Release);
            }
            drop(g);
            self.get().expect("initialized under the lock above")
        }
    }

    impl<T> Default for OnceLock<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    impl<T: std::fmt::Debug> std::fmt::Debug for OnceLock<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_tuple("OnceLock").field(&self.get()).finish()
        }
    }
}

/// Types that are the same in loom builds: for values that live outside the model-checked protocol (the public
/// `Arc<Store>`, shared errors, loaded indices, the loose cache). Only the protocol's own state uses the
/// switchable types above.
///
/// Why a value may live outside the models, the one reason every use relies on: nothing another thread races on
/// through it, or nothing an answer depends on. An `Arc` here only counts references to values immutable once
/// shared (slots and cells of the facade publish them), so its uses need no word. The `Mutex` and the atomics
/// are re-exports of std's, so clippy's `disallowed_types` (`.clippy.toml`) flags each use: the use carries
/// `#[expect(clippy::disallowed_types, reason = "sync::plain: ...")]` naming its case in a few words (a metric, a
/// report list no answer reads, a lock ordered by a facade lock). The facade's own types above are aliases, which
/// clippy does not flag.
pub(crate) mod plain {
    pub(crate) use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

    /// std atomics, for counters no answer depends on (the metrics).
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
    }

    /// Lock a std mutex, ignoring poisoning (see [`super::lock`]).
    pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        match m.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// Lock a mutex, ignoring poisoning: every critical section in this crate leaves its data consistent at every
/// point where it could panic, so a poisoned lock carries no broken invariant.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    let g = match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    #[cfg(all(test, loom))]
    count(|c| c.locks += 1);
    g
}

/// Wait on a condition variable, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    #[cfg(all(test, loom))]
    count(|c| c.waits += 1);
    match cv.wait(g) {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[cfg(all(test, loom))]
pub(crate) use imp::{OpCounts, reset_model_state, set_spin_limit, take_op_counts, take_trace};

/// Model-checked builds only (`--cfg loom` or `--cfg shuttle`): what a model needs from the checker this build
/// uses, so that one scenario (`loom-tests/scenarios.rs`) runs under both. Threads must be the checker's own (it
/// schedules them), and a model runs inside the checker's runner.
#[cfg(all(test, any(loom, shuttle)))]
pub(crate) mod model {
    #[cfg(all(test, loom))]
    pub(crate) use loom::thread::spawn;
    #[cfg(all(test, shuttle))]
    pub(crate) use shuttle::thread::spawn;

    /// The checker's `Arc` (loom tracks its reference counts and the facade counts each clone and drop as a
    /// read-modify-write; shuttle's is std's).
    #[cfg(all(test, loom))]
    pub(crate) use super::imp::Arc;
    #[cfg(all(test, shuttle))]
    pub(crate) use shuttle::sync::Arc;

    /// Shuttle's runner: run `f` under its PCT scheduler (random priorities with `depth - 1` priority change
    /// points per schedule, which finds any bug of depth `depth` with a probability it bounds from below) for
    /// `iterations` schedules. Returns the number of schedules run. Shuttle's warning that it treats every
    /// atomic as SeqCst is silenced: that is known and stated (orderings are loom's job).
    #[cfg(all(test, shuttle))]
    pub(crate) fn check_pct(
        f: impl Fn() + Send + Sync + 'static,
        iterations: usize,
        depth: usize,
    ) -> usize {
        let mut config = shuttle::Config::new();
        config.silence_warnings = true;
        shuttle::Runner::new(
            shuttle::scheduler::PctScheduler::new(depth, iterations),
            config,
        )
        .run(f)
    }
}
