//! odb-index's integration tests, one binary with a module per area, all checked against the real `git`.
//!
//! - `idx_git`, `midx_git`: the file formats against files git writes and reads.
//! - `repo`: repository discovery, alternates, loose objects.
//! - `store`: the concurrent store on real repositories (cold-start races, refresh, repack underneath).
//! - `real_repos`: end to end on mixed repositories, SHA-256, alternates.
//! - `reliability`: hostile and odd repositories, corrupt and truncated files.
//! - `hostile`: files that are consistent but lie, FIFOs and devices, a sparse 2^31-object index, unreadable
//!   directories (issue 13), beside real git repositories.
//! - `stress`: lookups under repack/gc/prune/push, descriptors and mappings, thousands of packs.
//! - `prefix`, `iter`, `location`, `chain` (fixtures in `api_common`): abbreviated ids, iteration and counts,
//!   lookup within one pack, pack information and stale packs, loose paths, environment alternates, the
//!   `IncompleteMode` contract, incremental multi-pack-index chains; all against git.
//! - `covered`: packs a multi-pack-index covers, listed without a `stat`, their files changed between a listing
//!   and its use (docs/FRESHNESS.md, F6).
//! - `faults`: the in-process fault matrix: a failed system call at every position of a run, never a silent
//!   "missing" (docs/RELIABILITY.md, G11).
//! - `freshness`: files that vanish between a listing and their use (a loose object packed and pruned, a pack
//!   replaced), found where they are now.
//! - `listing`: listing agrees with lookup (`for_each_object`, `objects_sorted`, `unlocatable_objects`).
//! - `never_wrong`: abbreviated ids and iteration follow the lookup's order; unreadable loose fan-out directories.
//! - `watch`: change detection by inotify; every way its events can be incomplete ends in a rescan or `stat`.
//!
//! Under `--cfg loom` or `--cfg shuttle` the library is built on the checker's primitives, which only work
//! inside a model: this binary is then empty (the models are `loom-tests/`).
#![cfg(not(any(loom, shuttle)))]
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

// Counts allocations per thread: `repo` checks that lookups allocate nothing.
#[global_allocator]
static ALLOCATOR: odb_index_testkit::alloc::Counting = odb_index_testkit::alloc::Counting;

mod api_common;
mod chain;
mod covered;
mod faults;
mod freshness;
mod hostile;
mod idx_git;
mod iter;
mod listing;
mod location;
mod midx_git;
mod never_wrong;
mod prefix;
mod real_repos;
mod reliability;
mod repo;
mod store;
mod stress;
mod watch;
