//! The atomics and `Ordering`: std's; in a model-checked build (`sync/mod.rs`), an enum per atomic holding the
//! checker's inside a model and std's outside, which under loom counts every operation into this loom thread's
//! [`OpCounts`](super::OpCounts), so a model can assert what a code path does to shared state, including operations
//! that leave no trace line (a failed compare-exchange, a `fetch_or`, an untraced load).

// Aliases, not `use`: clippy's `disallowed_types` (.clippy.toml) resolves a re-export to std's type and would flag
// every use of the facade; an alias is a name of its own, so only std's types named elsewhere are flagged.
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type AtomicBool = std::sync::atomic::AtomicBool;
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type AtomicU8 = std::sync::atomic::AtomicU8;
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type AtomicU32 = std::sync::atomic::AtomicU32;
#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
pub(crate) type AtomicU64 = std::sync::atomic::AtomicU64;

pub(crate) use std::sync::atomic::Ordering;

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
pub(crate) use switched::{AtomicBool, AtomicU8, AtomicU32, AtomicU64};

#[cfg(all(any(loom, shuttle), feature = "model-checking"))]
mod switched {
    use super::super::checker;
    use super::super::model::{in_model, std_side as assert_std_side};
    use super::super::trace::count;
    use std::sync::atomic::Ordering;

    /// The std atomic `a`, after checking that no model uses it (`model::std_side`).
    #[inline]
    #[track_caller]
    fn std_side<A>(a: &A) -> &A {
        assert_std_side();
        a
    }

    fn count_load(o: Ordering) {
        count(|c| match o {
            Ordering::Acquire => c.acquire_loads += 1,
            _ => c.other_loads += 1,
        });
    }

    /// The operations every atomic has (`$t` its value type), counted.
    macro_rules! common_ops {
        ($name:ident, $t:ty) => {
            pub(crate) fn new(v: $t) -> Self {
                if in_model() {
                    Self::Model(checker::sync::atomic::$name::new(v))
                } else {
                    Self::Std(std::sync::atomic::$name::new(v))
                }
            }
            pub(crate) fn load(&self, o: Ordering) -> $t {
                let v = match self {
                    Self::Std(a) => std_side(a).load(o),
                    Self::Model(a) => a.load(o),
                };
                count_load(o);
                v
            }
            pub(crate) fn store(&self, v: $t, o: Ordering) {
                match self {
                    Self::Std(a) => std_side(a).store(v, o),
                    Self::Model(a) => a.store(v, o),
                }
                count(|c| c.stores += 1);
            }
            pub(crate) fn swap(&self, v: $t, o: Ordering) -> $t {
                let r = match self {
                    Self::Std(a) => std_side(a).swap(v, o),
                    Self::Model(a) => a.swap(v, o),
                };
                count(|c| c.rmws += 1);
                r
            }
            pub(crate) fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                let r = match self {
                    Self::Std(a) => std_side(a).compare_exchange(current, new, success, failure),
                    Self::Model(a) => a.compare_exchange(current, new, success, failure),
                };
                count(|c| match r {
                    Ok(_) => c.cas_successes += 1,
                    Err(_) => c.cas_failures += 1,
                });
                r
            }
        };
    }

    /// One read-modify-write of an integer atomic, counted.
    macro_rules! rmw {
        ($t:ty; $($op:ident),*) => {$(
            pub(crate) fn $op(&self, v: $t, o: Ordering) -> $t {
                let r = match self {
                    Self::Std(a) => std_side(a).$op(v, o),
                    Self::Model(a) => a.$op(v, o),
                };
                count(|c| c.rmws += 1);
                r
            }
        )*};
    }

    /// A switched atomic: the checker's inside a model, std's outside; counting under loom. `integer` adds the
    /// read-modify-writes of the integer atomics.
    macro_rules! switched_atomic {
        ($name:ident, $t:ty) => {
            #[derive(Debug)]
            pub(crate) enum $name {
                Std(std::sync::atomic::$name),
                Model(checker::sync::atomic::$name),
            }

            #[allow(dead_code, reason = "the std surface the crate uses; each build uses part of it")]
            impl $name {
                common_ops!($name, $t);
            }
        };
        ($name:ident, $t:ty, integer) => {
            switched_atomic!($name, $t);

            #[allow(dead_code, reason = "the std surface the crate uses; each build uses part of it")]
            impl $name {
                rmw!($t; fetch_add, fetch_sub, fetch_or, fetch_and);
            }
        };
    }

    switched_atomic!(AtomicBool, bool);
    switched_atomic!(AtomicU8, u8, integer);
    switched_atomic!(AtomicU32, u32, integer);
    switched_atomic!(AtomicU64, u64, integer);
}
