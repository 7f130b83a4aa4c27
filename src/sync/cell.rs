//! [`UnsafeCell`] with loom's closure-based access API (`with`, `with_mut`) in every build, so the protocol is
//! written once: in a loom build with `model-checking` (`sync/mod.rs`), loom's own inside a model (loom checks
//! causality through it) and std's outside; otherwise a thin wrapper over `std::cell::UnsafeCell` (shuttle has no
//! cell of its own and checks no causality through cells).

/// `std::cell::UnsafeCell` with loom's closure-based access API (std and shuttle builds).
#[cfg(not(all(loom, feature = "model-checking")))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(all(loom, feature = "model-checking")))]
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

/// loom's cell inside a model, std's outside (loom builds with `model-checking`).
#[cfg(all(loom, feature = "model-checking"))]
#[derive(Debug)]
pub(crate) enum UnsafeCell<T> {
    Std(std::cell::UnsafeCell<T>),
    Model(loom::cell::UnsafeCell<T>),
}

#[cfg(all(loom, feature = "model-checking"))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        if super::model::in_model() {
            Self::Model(loom::cell::UnsafeCell::new(value))
        } else {
            Self::Std(std::cell::UnsafeCell::new(value))
        }
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        match self {
            Self::Std(c) => {
                super::model::std_side();
                f(c.get())
            }
            Self::Model(c) => c.with(f),
        }
    }

    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        match self {
            Self::Std(c) => {
                super::model::std_side();
                f(c.get())
            }
            Self::Model(c) => c.with_mut(f),
        }
    }
}
