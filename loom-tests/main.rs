#![cfg(all(loom, feature = "loom"))]
