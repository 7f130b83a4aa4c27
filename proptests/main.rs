#![cfg(not(any(loom, shuttle)))]
mod fanout;
mod filter;
mod idx;
mod midx;
mod state_machine;
