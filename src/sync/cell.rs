//! [`UnsafeCell`] with loom's closure-based access API (`with`, `with_mut`) in every build, so the protocol is
//! written once: loom's own under `cfg(all(test, loom))` (loom checks causality through it), otherwise a thin
//! wrapper over `std::cell::UnsafeCell` (shuttle has no cell of its own and checks no causality through cells).

#[cfg(all(test, loom))]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's closure-based access API (std and shuttle builds).
#[cfg(not(all(test, loom)))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(all(test, loom)))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
