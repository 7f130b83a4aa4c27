//! The one place that chooses between `std` and a model checker's primitives (loom's or shuttle's).
//!
//! Every other module imports its atomics, `Arc`, `Mutex`, `Condvar` and cells from here (in the style of
//! sharded-slab's `src/sync.rs`), so that the crate's own unit tests built with `RUSTFLAGS="--cfg loom"` run the
//! whole protocol on loom's model-checked primitives without touching its code, and with `RUSTFLAGS="--cfg
//! shuttle"` on shuttle's randomly scheduled ones (larger models, every atomic treated as SeqCst: the logic at
//! scale, while memory orderings stay loom's job). The swap happens only under `cfg(all(test, loom))` and
//! `cfg(all(test, shuttle))` (tokio's rule, `tokio/src/loom/mod.rs`): a crate that depends on this one and runs
//! its own loom models with the same flag gets `std` primitives from it, as in any other build. Code that must not
//! be model-checked (the loose cache, shared errors) takes its primitives from [`plain`], which is `std` in every
//! build. In either model-checked build, [`model`] gives the models in `loom-tests/` (compiled into the unit tests,
//! `src/lib.rs`) the checker's thread spawning and its runner, so one scenario runs under both.
//!
//! One file per primitive, each choosing for the three builds (std, loom, shuttle):
//! - `atomic.rs`: the atomics and `Ordering` (under loom, wrappers that count every operation);
//! - `arc.rs`: `Arc` (under loom, a wrapper that counts each clone and drop);
//! - `mutex.rs`: `Mutex`, `MutexGuard`, `Condvar`, and [`lock`] / [`wait`], which ignore poisoning;
//! - `once.rs`: `OnceLock` (in the model-checked builds, one written over the checker's primitives);
//! - `cell.rs`: [`cell::UnsafeCell`] with loom's closure-based access in every build;
//! - `hint.rs`: the spin budget and the spin hint;
//! - `trace.rs`: the protocol's event trace and, under loom, the per-thread operation counts (`OpCounts`);
//! - `plain.rs` ([`plain`]): `std` in every build; `model.rs` ([`model`]): the checker's spawn and runner.

#[cfg(all(test, loom, shuttle))]
compile_error!(
    "`--cfg loom` and `--cfg shuttle` are two different model checkers: build with one of them"
);

mod arc;
mod atomic;
pub(crate) mod cell;
mod hint;
#[cfg(all(test, any(loom, shuttle)))]
pub(crate) mod model;
mod mutex;
mod once;
pub(crate) mod plain;
mod trace;

pub(crate) use arc::Arc;
pub(crate) use atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
#[cfg(all(test, loom))]
pub(crate) use hint::set_spin_limit;
pub(crate) use hint::{spin_limit, spin_loop};
pub(crate) use mutex::{Condvar, Mutex, lock, wait};
pub(crate) use once::OnceLock;
pub(crate) use trace::trace;
#[cfg(all(test, loom))]
pub(crate) use trace::{OpCounts, reset_model_state, take_op_counts, take_trace};
