//! What a loom model can read back about an execution: the protocol's event trace ([`trace`], compiled out of
//! every other build) and, under `cfg(all(test, loom))`, the shared-memory operations each loom thread performed
//! ([`OpCounts`], counted by the facade's atomics, `Arc`, [`lock`](super::lock) and [`wait`](super::wait)).

/// Protocol event tracing is loom's: compiled out of std builds; shuttle prints a replayable schedule of its own
/// on failure.
#[cfg(not(all(test, loom)))]
#[inline(always)]
pub(crate) fn trace(_event: impl FnOnce() -> String) {}

#[cfg(all(test, loom))]
pub(crate) use counts::{OpCounts, count, reset_model_state, take_op_counts, take_trace, trace};

#[cfg(all(test, loom))]
mod counts {
    use std::cell::RefCell;

    /// How many shared-memory operations of each kind one loom thread performed (loom builds only).
    ///
    /// Every atomic the crate uses under loom is a counting wrapper (`atomic.rs`), and [`lock`](super::super::lock)
    /// and [`wait`](super::super::wait) count too, so a model can assert what a code path does to shared state,
    /// including operations that leave no trace line (a failed compare-exchange, a `fetch_or`, an untraced load).
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
}
