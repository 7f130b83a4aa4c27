//! The hidden `--only-miss-loop` and `--only-hit-loop` modes (for strace, callgrind and cachegrind).

use super::*;

/// The hidden `--only-miss-loop N --arm A [--fresh]` mode: N misses of one arm and nothing else measured, for
/// strace and callgrind (`--toggle-collect='*only_miss_loop_body*'`). The warm-up misses 4 096 absent ids once
/// (every index loaded; the miss filter built if that many misses build it); the N misses cycle through those
/// ids. With `fresh`, the warm-up goes on until the miss filter is built (as the bench's rows do) and the N
/// misses are N other absent ids, each used once (as the bench's `-fresh` rows use them: their generator seed).
pub fn only_miss_loop(kind: Kind, objects: &Path, n: usize, fresh: bool) -> Result<(), String> {
    let ids = absent(4096, 1);
    let mut arm = Arm::open(kind, objects)?;
    // Settle: load every index and (cached mode) list every fan-out directory, so that the N misses measured
    // (and the difference of an N and a 2N run) hold no one-time work.
    arm.run(&ids, ids.len());
    if fresh {
        settle_filter(kind, &mut arm, &ids);
    }
    let fresh_ids = fresh.then(|| absent(n.max(1), 11));
    let ids = fresh_ids.as_ref().unwrap_or(&ids);
    let before = thread_allocs();
    let t = Instant::now();
    let found = only_miss_loop_body(&mut arm, ids, n);
    let dt = t.elapsed();
    let allocs = thread_allocs() - before;
    if found != 0 {
        return Err(format!("{found} of the absent ids were found"));
    }
    eprintln!(
        "{} misses{} with {}: {:.1} ns per miss, {:.2} allocations per miss",
        n,
        if fresh { " (fresh ids)" } else { "" },
        kind.name(),
        dt.as_nanos() as f64 / n.max(1) as f64,
        allocs as f64 / n.max(1) as f64
    );
    Ok(())
}

#[inline(never)]
pub(super) fn only_miss_loop_body(arm: &mut Arm, ids: &Ids, n: usize) -> usize {
    arm.run(ids, n)
}

/// Hidden `--only-hit-loop N`: N lookups of ids present in the packs with one arm (for callgrind's instruction
/// counts of the hit path: `--toggle-collect='*only_hit_loop_body*'`).
pub fn only_hit_loop(kind: Kind, objects: &Path, n: usize) -> Result<(), String> {
    let ids = present(objects, 1)?;
    let mut arm = Arm::open(kind, objects)?;
    // Settle: load every index first.
    arm.run(&ids, ids.len());
    let t = Instant::now();
    let found = only_hit_loop_body(&mut arm, &ids, n);
    let dt = t.elapsed();
    if found != n {
        return Err(format!("{} of {n} present ids were not found", n - found));
    }
    eprintln!(
        "{n} hits with {}: {:.1} ns per hit",
        kind.name(),
        dt.as_nanos() as f64 / n.max(1) as f64
    );
    Ok(())
}

#[inline(never)]
pub(super) fn only_hit_loop_body(arm: &mut Arm, ids: &Ids, n: usize) -> usize {
    // Not the same machine code as `only_miss_loop_body` (the `black_box`), or the linker folds the two into one
    // symbol and callgrind's `--toggle-collect` finds only one of them.
    arm.run(ids, n) ^ std::hint::black_box(0)
}
