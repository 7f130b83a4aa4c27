//! Model-checked builds only (`--cfg loom` or `--cfg shuttle`): what a model needs from the checker this build
//! uses, so that one scenario (`loom-tests/scenarios.rs`) runs under both. Threads must be the checker's own (it
//! schedules them), and a model runs inside the checker's runner.

#[cfg(all(test, loom))]
pub(crate) use loom::thread::spawn;
#[cfg(all(test, shuttle))]
pub(crate) use shuttle::thread::spawn;

/// The checker's `Arc` (loom tracks its reference counts and the facade counts each clone and drop as a
/// read-modify-write; shuttle's is std's).
#[cfg(all(test, loom))]
pub(crate) use super::Arc;
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
