//! The whole store under loom: the scenarios shared with shuttle (`scenarios.rs`) at loom's size, and the real
//! `Store` (`store.rs`: its loader, snapshot, fast miss path, refresh, successor and loose objects). What could go
//! wrong: what the fake-index models cannot see, a handle marking its view settled too early, a covered pack's
//! loader opening its own `.idx`, a reference count on the default miss path, a successor that does not remap
//! `covered_by`, or a loose object missed in one of the loose modes.

use super::*;

/// A small scenario of `scenarios.rs` (the store in miniature, shared with shuttle's 8-thread, 64-slot runs).
const SMALL: scenarios::Scenario = scenarios::Scenario {
    lookups: 2,
    ids_per_lookup: 2,
    packs: 2,
    covered: 1,
    refreshes: 0,
    added_per_refresh: 0,
    panic_every: 0,
    panic_at: 0,
    midx_panics: false,
    failing_build: usize::MAX,
    pre_087_claim_order: false,
};

/// Scenario, loom's size: two handles (each looks up an absent id and the covered pack's id) on a map whose
/// slot 0 is a multi-pack-index covering slot 1, whose first load panics. Checks what the shuttle runs check at
/// 8 threads and 64 slots (no false miss unless every slot that could hold the id was abandoned, nothing
/// invented, nothing loaded twice, every thread ends), here for every interleaving within the bound.
#[test]
fn scenario_handles_with_a_panicking_multi_pack_index() {
    builder().check(|| {
        scenarios::run(scenarios::Scenario {
            midx_panics: true,
            ..SMALL
        })
    });
}

/// Scenario, loom's size: one handle races a refresher whose first build panics and whose second adds a pack.
#[test]
fn scenario_handle_across_a_failed_and_a_good_refresh() {
    builder().check(|| {
        scenarios::run(scenarios::Scenario {
            lookups: 1,
            ids_per_lookup: 3,
            covered: 0,
            refreshes: 2,
            added_per_refresh: 1,
            failing_build: 0,
            ..SMALL
        })
    });
}

/// The real store, a reused handle: as `p1_reused_handle_after_a_hit_in_a_hole`, through `Store` and
/// `Handle::locate` (the store's loader, snapshot, fast miss path and filter publication) over three one-object
/// packs. Each pack's index is opened exactly once.
#[test]
fn store_reused_handle_against_a_loading_thread() {
    let (_tmp, dir) = store::objects(&[&[1], &[2], &[3]], 0);
    // Bound 2: every store operation is several protocol steps (see docs/PROTOCOL.md section 5).
    builder_bounded(2)
        .check(move || store::reused_handle_against_a_loader(&dir, &[1, 3], &[1, 2, 3], 3));
}

/// The real store with a multi-pack-index covering two of three packs: the loaders of the covered packs' slots
/// wait for the multi-pack-index's and open nothing, whichever thread claims them, so exactly two index files
/// are opened (the multi-pack-index and the uncovered pack's `.idx`); the reused handle finds a covered and an
/// uncovered object.
#[test]
fn store_covered_packs_open_only_the_multi_pack_index() {
    let (_tmp, dir) = store::objects(&[&[1], &[2], &[3]], 2);
    builder_bounded(2)
        .check(move || store::reused_handle_against_a_loader(&dir, &[2, 3], &[1, 2, 3], 2));
}

/// P4 on the real store in its default configuration (`RefreshMode::OnMiss`, loose probing, `Auto` filter): a
/// steady-state miss and a snapshot hit each cost one Acquire load, `Arc` clones and drops counted.
#[test]
fn store_p4_default_miss_path_is_one_acquire_load() {
    let (_tmp, dir) = store::objects(&[&[1], &[2]], 0);
    builder().check(move || store::default_miss_path(&dir));
}

/// The real store across a refresh: `Store::refresh` (listing, `build_successor` carrying loaded indices over,
/// the filter's inheritance, `Current::replace`) races a handle looking up objects present throughout. Each
/// execution writes its repository afresh (the refresh adds a pack to it).
#[test]
fn store_refresh_racing_a_handle() {
    builder_bounded(2).check(store::refresh_racing_a_handle);
}

/// Loose objects through the real store in each loose mode (`src/loose/mod.rs`, `src/store/listing/loose_sources.rs`; one thread:
/// the file system is what is checked, the mutants of section 10 that touch it are caught here).
#[test]
fn store_loose_objects_in_every_mode() {
    builder().check(store::loose_objects_in_every_mode);
}

/// A refresh whose successor moves the multi-pack-index's slot (a carried pack goes first): the covered packs'
/// `covered_by` must be remapped, or they open their own `.idx` files (`src/store/listing/successor.rs`).
#[test]
fn store_successor_remaps_covered_slots() {
    builder().check(store::successor_remaps_covered_slots);
}
