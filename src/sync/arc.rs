//! `Arc`: std's; shuttle's under `cfg(all(test, shuttle))`; under `cfg(all(test, loom))`, loom's behind a
//! counting wrapper: every clone and every drop is a reference-count read-modify-write on a shared line, so each
//! counts as one [`OpCounts::rmws`](super::OpCounts::rmws), and P4's budget (one Acquire load per steady-state
//! miss) also rules out a reference count touched on the miss path.

#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) use std::sync::Arc;

#[cfg(all(test, shuttle))]
pub(crate) use shuttle::sync::Arc;

#[cfg(all(test, loom))]
pub(crate) use counted::Arc;

#[cfg(all(test, loom))]
mod counted {
    use super::super::trace::count;

    /// loom's `Arc`, counting each clone and drop as a read-modify-write.
    #[derive(Debug)]
    pub(crate) struct Arc<T: ?Sized>(loom::sync::Arc<T>);

    impl<T> Arc<T> {
        /// A new `Arc` (no count: nothing is shared yet).
        pub(crate) fn new(value: T) -> Self {
            Arc(loom::sync::Arc::new(value))
        }
    }

    impl<T: ?Sized> Arc<T> {
        /// Same allocation (reads no count).
        pub(crate) fn ptr_eq(a: &Self, b: &Self) -> bool {
            loom::sync::Arc::ptr_eq(&a.0, &b.0)
        }
    }

    impl<T: ?Sized> Clone for Arc<T> {
        fn clone(&self) -> Self {
            count(|c| c.rmws += 1);
            Arc(loom::sync::Arc::clone(&self.0))
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
            &self.0
        }
    }
}
