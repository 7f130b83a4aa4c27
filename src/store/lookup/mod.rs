//! Answering "is object X here, and where?": a thread's [`Handle`](handle::Handle) (`handle.rs`), its
//! steady-state miss (`steady.rs`), the search of one listing's loaded indices (`snapshot.rs`, and
//! `midx_lookup.rs` for a multi-pack-index, and the listing's miss filter, `listing/filter.rs`, that answers
//! most misses without a search), and many ids at once (`batch.rs`).

pub(in crate::store) mod batch;
pub(in crate::store) mod handle;
pub(in crate::store) mod midx_lookup;
pub(in crate::store) mod miss;
pub(in crate::store) mod snapshot;
pub(in crate::store) mod steady;
