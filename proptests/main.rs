#![cfg(not(loom))]
mod filter;
mod idx;
mod midx;
mod state_machine;
