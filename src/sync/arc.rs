//! `Arc`: std's; in a loom build with `model-checking` (`sync/mod.rs`), an enum holding loom's inside a model and
//! std's outside, which counts each clone and drop of loom's: each is a reference-count read-modify-write on a
//! shared line, so each counts as one [`OpCounts::rmws`](super::OpCounts::rmws), and P4's budget (one Acquire
//! load per steady-state miss) also rules out a reference count touched on the miss path. (Shuttle's `Arc` is
//! std's, so a shuttle build uses std's.)

#[cfg(not(all(loom, feature = "model-checking")))]
pub use std::sync::Arc;

#[cfg(all(loom, feature = "model-checking"))]
pub use switched::Arc;

#[cfg(all(loom, feature = "model-checking"))]
mod switched {
    use super::super::model::{in_model, std_side};
    use super::super::trace::count;

    /// loom's `Arc` inside a model (counting each clone and drop as a read-modify-write), std's outside.
    #[derive(Debug)]
    pub enum Arc<T: ?Sized> {
        /// Built outside a model.
        Std(std::sync::Arc<T>),
        /// Built inside a model.
        Model(loom::sync::Arc<T>),
    }

    impl<T> Arc<T> {
        /// A new `Arc` (no count: nothing is shared yet).
        pub fn new(value: T) -> Self {
            if in_model() {
                Arc::Model(loom::sync::Arc::new(value))
            } else {
                Arc::Std(std::sync::Arc::new(value))
            }
        }
    }

    impl<T: ?Sized> Arc<T> {
        /// Same allocation (reads no count).
        pub fn ptr_eq(a: &Self, b: &Self) -> bool {
            match (a, b) {
                (Arc::Std(a), Arc::Std(b)) => std::sync::Arc::ptr_eq(a, b),
                (Arc::Model(a), Arc::Model(b)) => loom::sync::Arc::ptr_eq(a, b),
                _ => false,
            }
        }
    }

    impl<T: ?Sized> Clone for Arc<T> {
        fn clone(&self) -> Self {
            count(|c| c.rmws += 1);
            match self {
                Arc::Std(a) => {
                    std_side();
                    Arc::Std(std::sync::Arc::clone(a))
                }
                Arc::Model(a) => Arc::Model(loom::sync::Arc::clone(a)),
            }
        }
    }

    impl<T: ?Sized> Drop for Arc<T> {
        fn drop(&mut self) {
            count(|c| c.rmws += 1);
        }
    }

    impl<T: ?Sized> std::ops::Deref for Arc<T> {
        type Target = T;
        fn deref(&self) -> &T {
            match self {
                Arc::Std(a) => a,
                Arc::Model(a) => a,
            }
        }
    }
}
