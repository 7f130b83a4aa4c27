//! The one place that chooses between `std` and a model checker's primitives (loom's or shuttle's).
//!
//! Every other module imports its atomics, `Arc`, `Mutex`, `Condvar` and cells from here (in the style of
//! sharded-slab's `src/sync.rs`), so that the models of `loom-tests/` run the whole protocol on loom's
//! model-checked primitives without touching its code (`RUSTFLAGS="--cfg loom"`), or on shuttle's randomly
//! scheduled ones (`RUSTFLAGS="--cfg shuttle"`: larger models, every atomic treated as SeqCst: the logic at scale,
//! while memory orderings stay loom's job).
//!
//! **When the checker's primitives are used.** Only in a model-checked build: `--cfg loom` or `--cfg shuttle`
//! *and* the crate's feature `model-checking` (which the crate's own dev-dependency on itself turns on under those
//! cfgs), so a crate that depends on this one and runs its own loom models with the same flag compiles this one as
//! in any other build: `std` primitives, no loom. In a model-checked build each primitive is an enum that chooses
//! at construction: the checker's inside a model (a thread running under [`model::checked`], which the models'
//! runners wrap around the checker), `std`'s everywhere else; a std one used inside a model panics (it would go
//! unchecked), so a model checks every primitive it touches. The same library build also serves the doctests,
//! integration tests and property tests of `cargo test` (one build per feature set), which run outside any model
//! and so get `std`'s; the choice costs a branch per operation in that build only.
//!
//! Code that must not be model-checked (the loose cache, shared errors) takes its primitives from [`plain`],
//! which is `std` in every build. In either model-checked build, [`model`] gives the models the checker's thread
//! spawning and its runner, so one scenario runs under both.
//!
//! One file per primitive, each choosing for the three builds (std, loom, shuttle):
//! - `atomic.rs`: the atomics and `Ordering` (under loom, counting every operation);
//! - `arc.rs`: `Arc` (under loom, counting each clone and drop);
//! - `mutex.rs`: `Mutex`, `MutexGuard`, `Condvar`, and [`lock`] / [`wait`], which ignore poisoning;
//! - `once.rs`: `OnceLock` (in the model-checked builds, one written over the facade's primitives);
//! - `cell.rs`: [`cell::UnsafeCell`] with loom's closure-based access in every build;
//! - `hint.rs`: the spin budget and the spin hint;
//! - `trace.rs`: the protocol's event trace and, under loom, the per-thread operation counts (`OpCounts`);
//! - `plain.rs` ([`plain`]): `std` in every build; `model.rs` ([`model`]): in or out of a model, the checker's
//!   spawn and runner.

#[cfg(all(loom, shuttle, feature = "model-checking"))]
compile_error!(
    "`--cfg loom` and `--cfg shuttle` are two different model checkers: build with one of them"
);

/// The checker of a model-checked build (loom's or shuttle's crate), named once for the primitives' files.
#[cfg(all(loom, feature = "model-checking"))]
use loom as checker;
#[cfg(all(shuttle, not(loom), feature = "model-checking"))]
use shuttle as checker;

mod arc;
mod atomic;
pub(crate) mod cell;
mod hint;
#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub(crate) mod model;
mod mutex;
mod once;
pub(crate) mod plain;
mod trace;

pub use arc::Arc;
pub(crate) use atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
#[cfg(all(loom, feature = "model-checking"))]
pub use hint::set_spin_limit;
pub(crate) use hint::{spin_limit, spin_loop};
pub(crate) use mutex::{Condvar, Mutex, lock, wait};
pub(crate) use once::OnceLock;
#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub use trace::OpCounts;
pub(crate) use trace::trace;
#[cfg(all(loom, feature = "model-checking"))]
pub use trace::{reset_model_state, take_op_counts, take_trace};
