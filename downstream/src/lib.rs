//! A crate that depends on odb-index the way a user's crate does, so that CI can build it as one: its test runs
//! under `RUSTFLAGS="--cfg loom" cargo test -p odb-index-downstream`, the flag a crate that runs its own loom models
//! builds every dependency with. odb-index swaps its primitives for loom's only with its feature `model-checking`
//! (which only its own tests turn on), so here it must behave as in any other build (it once panicked in loom's
//! scheduler instead).
//! Not published.
