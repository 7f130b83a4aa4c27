//! Model-based tests of the store (to be written).
