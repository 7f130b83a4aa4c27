//! What a loom model can read back about an execution: the protocol's event trace ([`trace`], compiled out of
//! every other build) and, in a loom build with `model-checking`, the shared-memory operations each loom thread
//! of a model performed ([`OpCounts`], counted by the facade's atomics, `Arc`, [`lock`](super::lock) and
//! [`wait`](super::wait)). Outside a model (`sync/model.rs`) both record nothing.

/// Protocol event tracing is loom's: compiled out of std builds; shuttle prints a replayable schedule of its own
/// on failure.
#[cfg(not(all(loom, feature = "model-checking")))]
#[inline(always)]
pub(crate) fn trace(_event: impl FnOnce() -> String) {}

/// Operation counts are loom's: a shuttle build counts nothing.
#[cfg(all(shuttle, not(loom), feature = "model-checking"))]
#[inline(always)]
pub(crate) fn count(_f: impl FnOnce(&mut OpCounts)) {}

/// How many shared-memory operations of each kind one loom thread performed (loom models only; a shuttle build
/// counts none).
///
/// Every atomic the crate uses under loom is a counting wrapper (`atomic.rs`), and `sync::lock`
/// and `sync::wait` count too, so a model can assert what a code path does to shared state,
/// including operations that leave no trace line (a failed compare-exchange, a `fetch_or`, an untraced load).
#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
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

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
impl OpCounts {
    /// Exactly one Acquire load and nothing else: the P4 budget of a steady-state miss.
    pub const ONE_ACQUIRE_LOAD: OpCounts = OpCounts {
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

#[cfg(all(loom, feature = "model-checking"))]
pub(crate) use counts::{count, trace};
#[cfg(all(loom, feature = "model-checking"))]
pub use counts::{reset_model_state, take_op_counts, take_trace};

#[cfg(all(loom, feature = "model-checking"))]
mod counts {
    use super::super::model::in_model;
    use super::OpCounts;
    use std::cell::RefCell;

    // Per-test state. loom runs all threads of a model on the OS thread that called `check` (one per test under
    // cargo's harness), so a std `thread_local!` is private to one test, and tests may run in parallel. Plain
    // std cells are invisible to loom: recording adds no synchronization to the model.
    thread_local! {
        static TRACE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        static OPS: RefCell<Vec<(loom::thread::ThreadId, OpCounts)>> = const { RefCell::new(Vec::new()) };
    }

    /// Count one operation for the current loom thread (nothing outside a model).
    pub(crate) fn count(f: impl FnOnce(&mut OpCounts)) {
        if !in_model() {
            return;
        }
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
    pub fn take_op_counts() -> OpCounts {
        let id = loom::thread::current().id();
        OPS.with_borrow_mut(|all| match all.iter().position(|(t, _)| *t == id) {
            Some(i) => all.swap_remove(i).1,
            None => OpCounts::default(),
        })
    }

    /// Record a protocol event (loom models only), prefixed with the loom thread's id.
    pub(crate) fn trace(event: impl FnOnce() -> String) {
        if !in_model() {
            return;
        }
        let line = format!("{:?}: {}", loom::thread::current().id(), event());
        TRACE.with_borrow_mut(|t| t.push(line));
    }

    /// Take (and clear) the events recorded so far in this test. Models print it when an execution fails.
    pub fn take_trace() -> Vec<String> {
        TRACE.with_borrow_mut(std::mem::take)
    }

    /// Clear this test's trace and operation counts (at the start of each loom execution).
    pub fn reset_model_state() {
        TRACE.with_borrow_mut(Vec::clear);
        OPS.with_borrow_mut(Vec::clear);
    }
}
