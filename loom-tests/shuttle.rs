//! The protocol beyond loom's bounds: the scenarios of `loom-tests/scenarios.rs` at 8 threads and 64 slots, with
//! refreshes and panicking loaders and builds, under shuttle's randomized PCT scheduler.
//!
//! A test target of its own (`shuttle`), empty unless built with `--cfg shuttle` (the models reach the protocol
//! through `odb_index::testing::model`, as the loom models do). Run outside CI (figures in docs/PROTOCOL.md §7):
//!
//! ```text
//! RUSTFLAGS="--cfg shuttle" ODB_SHUTTLE_ITERATIONS=100000 \
//!     cargo test --release --test shuttle --target-dir target/shuttle -- --nocapture --test-threads=2
//! ```
//!
//! `ODB_SHUTTLE_ITERATIONS` (default 1000) is the number of schedules per model, `ODB_SHUTTLE_DEPTH` (default 3)
//! PCT's bug depth. Shuttle treats every atomic as SeqCst and checks no causality through cells: these models
//! test the protocol's logic at scale (claims, holes, waits, refreshes, failures); memory orderings are loom's.
//! A failing schedule is printed by shuttle and can be replayed with `shuttle::replay`.
#![cfg(shuttle)]

#[allow(
    clippy::disallowed_types,
    reason = "bookkeeping counters outside the model (see its `use`)"
)]
mod scenarios;

use std::panic::catch_unwind;

use odb_index::testing::model::check_pct;
use scenarios::Scenario;

fn iterations() -> usize {
    std::env::var("ODB_SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn depth() -> usize {
    std::env::var("ODB_SHUTTLE_DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// Run `sc` for the configured number of schedules and print what was run.
fn check(name: &str, sc: Scenario) {
    let (iterations, depth) = (iterations(), depth());
    let started = std::time::Instant::now();
    let ran = check_pct(move || scenarios::run(sc), iterations, depth);
    println!(
        "shuttle {name}: {ran} PCT schedules (depth {depth}) in {:.1?}: {} threads, {} slots, {} refreshes",
        started.elapsed(),
        sc.threads(),
        sc.packs,
        sc.refreshes,
    );
    assert_eq!(ran, iterations, "shuttle stopped early");
}

/// 8 lookup threads on one 64-slot map with a multi-pack-index covering 16 packs; no failures. Many pending
/// slots per view (holes), waiters parked on the multi-pack-index's slot while claims go on, every slot loaded
/// once (P1, P2, P3).
const MANY_LOOKUPS: Scenario = Scenario {
    lookups: 8,
    ids_per_lookup: 6,
    packs: 64,
    covered: 16,
    refreshes: 0,
    added_per_refresh: 0,
    panic_every: 0,
    panic_at: 0,
    midx_panics: false,
    failing_build: usize::MAX,
    pre_087_claim_order: false,
};

#[test]
fn many_lookups_one_map() {
    check("many_lookups_one_map", MANY_LOOKUPS);
}

/// As above, with every ninth pack's first load and the multi-pack-index's first load panicking: waiters wake,
/// abandoned slots are never waited on, covered packs load themselves (P2, P3).
#[test]
fn panicking_loaders() {
    check(
        "panicking_loaders",
        Scenario {
            panic_every: 9,
            panic_at: 5,
            midx_panics: true,
            ..MANY_LOOKUPS
        },
    );
}

/// 7 lookup threads and a refresher making 3 refreshes of 4 new packs each, the first of which panics in its
/// build: loaded values are carried over and never reloaded, lookups follow retired maps, a failed refresh
/// reopens the map (P5, P1, P3).
#[test]
fn refreshes() {
    check(
        "refreshes",
        Scenario {
            lookups: 7,
            refreshes: 3,
            added_per_refresh: 4,
            failing_build: 0,
            ..MANY_LOOKUPS
        },
    );
}

/// Everything at once: 7 lookups, 3 refreshes (one failing build), panicking loaders and multi-pack-index.
#[test]
fn refreshes_with_panicking_loaders() {
    check(
        "refreshes_with_panicking_loaders",
        Scenario {
            lookups: 7,
            refreshes: 3,
            added_per_refresh: 4,
            failing_build: 1,
            panic_every: 9,
            panic_at: 5,
            midx_panics: true,
            ..MANY_LOOKUPS
        },
    );
}

/// The negative witness at scale: the same lookups on maps that claim in gix-odb's pre-0.87 order. Shuttle must
/// find the false miss; this passes only because it does.
#[test]
fn witness_pre_087_claim_order_gives_false_miss() {
    let sc = Scenario {
        pre_087_claim_order: true,
        ..MANY_LOOKUPS
    };
    let (iterations, depth) = (iterations(), depth());
    let r = catch_unwind(move || check_pct(move || scenarios::run(sc), iterations, depth));
    assert!(
        r.is_err(),
        "shuttle did not find the false miss of the pre-0.87 claim order in {iterations} schedules"
    );
}
