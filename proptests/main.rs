//! The property and state-machine tests: a test target of the root package (`Cargo.toml`'s `[[test]]
//! proptests`), reaching the internals they check (the index searches, the multi-pack-index's precomputed
//! bounds, the fan-out bucket check) through `odb_index::testing` (feature `test-support`, which the root's
//! dev-dependency on itself enables). Not built under `--cfg loom` or `--cfg shuttle`: the library those builds
//! link has the model checkers' primitives (see `src/sync/mod.rs`).
#![cfg(not(any(loom, shuttle)))]
mod batch;
mod fanout;
mod filter;
mod idx;
mod midx;
mod state_machine;
