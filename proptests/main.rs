#![cfg(not(any(loom, shuttle)))]
mod filter;
mod idx;
mod midx;
mod state_machine;
