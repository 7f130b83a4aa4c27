//! `OnceLock`: std's, except in the model-checked builds (neither loom nor shuttle has one), where it is one
//! written over the checker's primitives so that its publication is modelled: the value is written once under
//! `init`, then `ready` is set with Release; a reader that sees `ready` (Acquire) sees the value. Only the part
//! of std's surface the crate uses.

#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) use std::sync::OnceLock;

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub(crate) use model::OnceLock;

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
mod model {
    use super::super::cell::UnsafeCell;
    use super::super::{AtomicU8, Mutex, Ordering};

    pub(crate) struct OnceLock<T> {
        ready: AtomicU8,
        init: Mutex<()>,
        value: UnsafeCell<Option<T>>,
    }

    // SAFETY: as std's `OnceLock`: the value is written at most once, by the thread holding `init` while `ready`
    // is 0 (no reader reads it then), and afterwards only shared as `&T`; so sharing needs `T: Sync` (readers)
    // and `T: Send` (the writer may be any thread, and the drop happens on the owner's).
    unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}
    // SAFETY: owning the cell is owning a `T`.
    unsafe impl<T: Send> Send for OnceLock<T> {}

    impl<T> OnceLock<T> {
        pub(crate) fn new() -> Self {
            OnceLock {
                ready: AtomicU8::new(0),
                init: Mutex::new(()),
                value: UnsafeCell::new(None),
            }
        }

        pub(crate) fn get(&self) -> Option<&T> {
            // Acquire: pairs with the Release store of `get_or_init`, so the value written before it is seen.
            if self.ready.load(Ordering::Acquire) == 0 {
                return None;
            }
            // SAFETY: `ready` is 1, so the value was written (before the Release store seen above) and is never
            // written again while `self` is borrowed.
            self.value.with(|p| unsafe { (*p).as_ref() })
        }

        pub(crate) fn set(&self, value: T) -> Result<(), T> {
            let mut value = Some(value);
            self.get_or_init(|| value.take().expect("taken once"));
            value.map_or(Ok(()), Err)
        }

        pub(crate) fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
            if let Some(v) = self.get() {
                return v;
            }
            let g = super::super::lock(&self.init);
            // Relaxed: `ready` is only stored while `init` is held, and the lock orders that store before us.
            if self.ready.load(Ordering::Relaxed) == 0 {
                let v = f();
                // SAFETY: `ready` is 0 and `init` is held: no reader reads the value and no other writer writes it.
                self.value.with_mut(|p| unsafe { *p = Some(v) });
                // Release: pairs with the Acquire load of `get`, publishing the value written just above.
                self.ready.store(1, Ordering::Release);
            }
            drop(g);
            self.get().expect("initialized under the lock above")
        }
    }

    impl<T> Default for OnceLock<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    impl<T: std::fmt::Debug> std::fmt::Debug for OnceLock<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_tuple("OnceLock").field(&self.get()).finish()
        }
    }
}
