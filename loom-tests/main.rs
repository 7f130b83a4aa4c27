//! Exhaustive (bounded) model checks of the lazy-loading protocol in `src/protocol.rs`, on the crate's real code.
//!
//! A test target of its own (`loom`), empty unless built with `--cfg loom`; the models reach the crate-private
//! protocol through `odb_index::testing::model` (the feature `model-checking`, which the crate's dev-dependency on
//! itself turns on under `--cfg loom`). Run with `RUSTFLAGS="--cfg loom" cargo test --release` (`--test loom` for
//! the models alone, `--test loom -- FILE::NAME` for one). One file per property family, each with a top comment
//! saying what
//! could go wrong: `p1.rs` to `p5.rs` (the invariants P1-P5 of `docs/PROTOCOL.md`, on fake indices),
//! `whole_store.rs` (the real store and the scenarios shared with shuttle), `detectors.rs` (the watch, freshness
//! and batches, whose model bodies live beside their code in `src/store/`), `fanout.rs` (the bucket-order record) and `gix_odb_087.rs` (gix-odb's protocol); this file is
//! the harness they share (the checker, the fake index, `settle`, `fail`). Each model checks one property and
//! says what would go wrong without it. Set `LOOM_MAX_PREEMPTIONS=N` to
//! change the preemption bound (default 3, 2 for the three-thread models), or `ODB_LOOM_EXHAUSTIVE=1` to run
//! without a bound.
//!
//! The models are safe to run in parallel (cargo's default): loom runs all threads of a model on the OS thread
//! of its test, so everything a model records (trace, operation counts, witness, execution count) lives in std
//! `thread_local!`s, and nothing installs a panic hook (loaders that must panic use `resume_unwind`, which runs
//! no hook).
#![cfg(loom)]

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

// The facade's `Arc` (loom's, with each clone and drop counted as a read-modify-write: P4 counts them).
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use odb_index::testing::model::{
    Arc, OpCounts, checked, reset_model_state, set_spin_limit, take_op_counts, take_trace,
};
use odb_index::testing::model::{Current, Settled, SlotMap, SlotRef, View};

/// Changes noticed: the watch, freshness (F1, F2) and batches (B1).
mod detectors;
/// The bucket-order record of a file (`src/fanout.rs`'s `BucketState`).
mod fanout;
/// gix-odb 0.87.0 as published and as patched by `docs/upstream/` (see `docs/UPSTREAM.md`).
#[allow(
    clippy::disallowed_types,
    reason = "a model of gix-odb's code, which uses std atomics"
)]
mod gix_odb_087;
/// P1: no false miss.
mod p1;
/// P2: each index loaded at most once.
mod p2;
/// P3: waiters wake.
mod p3;
/// P4: the steady-state miss is one Acquire load.
mod p4;
/// P5: refreshes.
mod p5;
/// The whole-store scenarios shared with the shuttle models (`loom-tests/shuttle.rs`), here at loom's sizes.
#[allow(
    clippy::disallowed_types,
    reason = "bookkeeping counters outside the model (see its `use`)"
)]
mod scenarios;
/// The real store (`src/store`) under loom, over small repositories on disk.
mod store;
/// The scenarios at loom's size and the real store's models.
mod whole_store;

/// A fake index: the object ids it holds. Slot values live in the map's `loom::cell::UnsafeCell`, so loom checks
/// that a reader which finds a slot ready also sees its contents (a causality violation fails the model).
type Fake = Vec<u32>;
/// What each slot will load when claimed.
type Plan = Vec<Fake>;

thread_local! {
    /// Executions of the model running on this OS thread (this test).
    static EXECUTIONS: Cell<usize> = const { Cell::new(0) };
    /// The interleaving of the first failing execution of this test, for the negative witness.
    static WITNESS: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A model checker with the suite's bounds, which reports how many executions it explored and how long it took.
struct Checker {
    builder: loom::model::Builder,
}

impl Checker {
    fn check<F: Fn() + Sync + Send + 'static>(&self, model: F) {
        EXECUTIONS.set(0);
        let started = std::time::Instant::now();
        // `checked`: the crate's primitives built in the model are loom's (outside it, the same build's are std's).
        checked(|| {
            self.builder.check(move || {
                EXECUTIONS.set(EXECUTIONS.get() + 1);
                reset_model_state();
                model()
            })
        });
        println!(
            "loom: {} executions in {:.2?} (preemption bound {:?})",
            EXECUTIONS.get(),
            started.elapsed(),
            self.builder.preemption_bound
        );
    }
}

fn builder() -> Checker {
    builder_bounded(3)
}

/// Like [`builder`], with another default preemption bound (for models with three threads, whose state space
/// grows too fast for CI otherwise; `ODB_LOOM_EXHAUSTIVE` and `LOOM_MAX_PREEMPTIONS` still apply).
fn builder_bounded(default_bound: usize) -> Checker {
    let mut b = loom::model::Builder::new();
    if std::env::var_os("ODB_LOOM_EXHAUSTIVE").is_some() {
        b.preemption_bound = None;
    } else if b.preemption_bound.is_none() {
        b.preemption_bound = Some(default_bound);
    }
    Checker { builder: b }
}

/// Look `want` up through a view, the way the store does on a miss: visit newly visible slots, claim and load
/// unclaimed ones (counting loads per slot in `loads`), wait for in-flight ones.
fn settle(view: &mut View<Fake, Plan>, want: u32, loads: &[AtomicUsize]) -> Settled<usize> {
    view.settle(
        &mut |_, i, r| match r {
            SlotRef::Ready(f) if f.contains(&want) => Some(i),
            _ => None,
        },
        &mut |map: &SlotMap<Fake, Plan>, i| {
            loads[i].fetch_add(1, Ordering::Relaxed);
            map.meta()[i].clone()
        },
    )
}

fn counters(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

/// Fail the execution with the protocol trace printed (loom prints no interleaving by itself).
///
/// The model's main thread calls it only after joining the threads it spawned: a panic that unwinds the main
/// thread while loom threads are still alive drops loom objects outside the execution, which aborts the whole
/// test binary instead of failing one test. (A panic in a spawned thread fails the model cleanly; a deadlock
/// found while other threads are blocked may still abort: run a single model with `--exact` to see it.)
fn fail(msg: &str) -> ! {
    let trace = take_trace();
    let mut text = format!("{msg}\ninterleaving (protocol events in order):\n");
    for e in &trace {
        text.push_str("  ");
        text.push_str(e);
        text.push('\n');
    }
    WITNESS.with_borrow_mut(|w| {
        w.get_or_insert_with(|| text.clone());
    });
    panic!("{text}");
}

/// Claim up to `n` slots of `map` in a row and hold the tickets (a loader that has not published yet), the way
/// several loading threads would, with fewer threads for loom to explore.
fn claim_up_to(
    map: &SlotMap<Fake, Plan>,
    n: usize,
) -> Vec<odb_index::testing::model::Ticket<'_, Fake, Plan>> {
    let mut tickets = Vec::new();
    while tickets.len() < n {
        let w = map.word();
        if w.cursor() >= map.len() || w.is_closed() {
            break;
        }
        // A failed claim means the word changed (another claim or completion): read it again.
        if let Some(t) = map.try_claim(w) {
            tickets.push(t);
        }
    }
    tickets
}

/// A loader with two loads in flight at once: claim up to `n` slots, holding the earlier tickets, then publish
/// each (its planned value) in claim order.
fn claim_then_publish(map: &SlotMap<Fake, Plan>, n: usize) {
    for t in claim_up_to(map, n) {
        let i = t.index();
        t.publish(map.meta()[i].clone());
    }
}

/// [`claim_then_publish`], publishing in reverse claim order (the last slot claimed completes first).
fn claim_then_publish_reversed(map: &SlotMap<Fake, Plan>, n: usize) {
    for t in claim_up_to(map, n).into_iter().rev() {
        let i = t.index();
        t.publish(map.meta()[i].clone());
    }
}

/// One handle of the store in miniature: a view that it keeps across lookups, and the ids of every slot it has
/// visited (the store's snapshot). A lookup searches what was visited, then (unless the view is settled: the
/// store's one-load miss path) settles the view for what is new.
struct Reused {
    view: View<Fake, Plan>,
    visited: Vec<u32>,
}

impl Reused {
    fn new(map: Arc<SlotMap<Fake, Plan>>) -> Self {
        Reused {
            view: View::new(map),
            visited: Vec::new(),
        }
    }

    fn lookup(&mut self, want: u32, loads: &[AtomicUsize]) -> bool {
        if self.visited.contains(&want) {
            return true;
        }
        if self.view.is_settled() {
            return false;
        }
        let visited = &mut self.visited;
        let r = self.view.settle(
            &mut |_, _, r| match r {
                SlotRef::Ready(f) => {
                    visited.extend_from_slice(f);
                    f.contains(&want).then_some(())
                }
                _ => None,
            },
            &mut |map: &SlotMap<Fake, Plan>, i| {
                loads[i].fetch_add(1, Ordering::Relaxed);
                map.meta()[i].clone()
            },
        );
        matches!(r, Settled::Found(()))
    }
}
