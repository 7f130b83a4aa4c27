#![cfg(not(any(loom, shuttle)))]
mod batch;
mod fanout;
mod filter;
mod idx;
mod midx;
mod state_machine;
