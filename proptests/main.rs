#![cfg(not(loom))]
mod idx;
mod midx;
mod state_machine;
