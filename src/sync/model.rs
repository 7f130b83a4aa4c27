//! Model-checked builds only (`--cfg loom` or `--cfg shuttle`, feature `model-checking`): whether this thread is
//! in a model ([`in_model`], which every primitive of the facade asks when it is built), the runner's wrapper that
//! says so ([`checked`]), and what a model needs from the checker this build uses, so that one scenario
//! (`loom-tests/scenarios.rs`) runs under both. Threads must be the checker's own (it schedules them), and a model
//! runs inside the checker's runner.

use std::cell::Cell;

#[cfg(loom)]
pub use loom::thread::spawn;
#[cfg(all(shuttle, not(loom)))]
pub use shuttle::thread::spawn;

/// The checker's `Arc` (loom tracks its reference counts and the facade counts each clone and drop as a
/// read-modify-write; shuttle's is std's).
pub use super::Arc;

thread_local! {
    /// Whether this OS thread is running a model: set by [`checked`] around the checker's runner. Both checkers
    /// run every thread of a model on the OS thread that called the runner, so one std thread-local covers them.
    static IN_MODEL: Cell<bool> = const { Cell::new(false) };
}

/// Whether a primitive built now must be the checker's (this thread runs a model) or std's.
#[inline]
pub(crate) fn in_model() -> bool {
    IN_MODEL.get()
}

/// A std primitive of a model-checked build is being used: never inside a model, where it would go unchecked (it
/// was built outside the model and carried in). Every operation on the std side of the facade's primitives asks,
/// so a model checks every primitive it touches or fails.
#[inline]
#[track_caller]
pub(crate) fn std_side() {
    assert!(
        !in_model(),
        "a primitive built outside the model is used inside it, where the checker cannot see it"
    );
}

/// Run `f` (the checker's runner: `loom::model::Builder::check`, shuttle's `Runner::run`) with the facade's
/// primitives the checker's: every atomic, `Arc`, lock, cell and `OnceLock` the crate builds while `f` runs is the
/// checker's, so the model checks them. Outside `f`, the same build's primitives are std's (doctests, integration
/// tests). Nests; restores the previous state on return or unwind.
pub fn checked<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_MODEL.set(self.0);
        }
    }
    let _restore = Restore(IN_MODEL.replace(true));
    f()
}

/// Shuttle's runner: run `f` under its PCT scheduler (random priorities with `depth - 1` priority change
/// points per schedule, which finds any bug of depth `depth` with a probability it bounds from below) for
/// `iterations` schedules, inside [`checked`]. Returns the number of schedules run. Shuttle's warning that it
/// treats every atomic as SeqCst is silenced: that is known and stated (orderings are loom's job).
#[cfg(all(shuttle, not(loom)))]
pub fn check_pct(f: impl Fn() + Send + Sync + 'static, iterations: usize, depth: usize) -> usize {
    let mut config = shuttle::Config::new();
    config.silence_warnings = true;
    checked(|| {
        shuttle::Runner::new(
            shuttle::scheduler::PctScheduler::new(depth, iterations),
            config,
        )
        .run(f)
    })
}
