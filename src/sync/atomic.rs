//! The atomics and `Ordering`: std's; shuttle's under `cfg(all(test, shuttle))`; under `cfg(all(test, loom))`,
//! loom's behind wrappers that count every operation into this loom thread's [`OpCounts`](super::OpCounts), so a
//! model can assert what a code path does to shared state, including operations that leave no trace line (a
//! failed compare-exchange, a `fetch_or`, an untraced load).

// Aliases, not `use`: clippy's `disallowed_types` (.clippy.toml) resolves a re-export to std's type and would flag
// every use of the facade; an alias is a name of its own, so only std's types named elsewhere are flagged.
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type AtomicBool = std::sync::atomic::AtomicBool;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type AtomicU8 = std::sync::atomic::AtomicU8;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type AtomicU32 = std::sync::atomic::AtomicU32;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) type AtomicU64 = std::sync::atomic::AtomicU64;
#[cfg(not(all(test, any(loom, shuttle))))]
pub(crate) use std::sync::atomic::Ordering;

#[cfg(all(test, shuttle))]
pub(crate) use shuttle::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};

#[cfg(all(test, loom))]
pub(crate) use counted::{AtomicBool, AtomicU8, AtomicU32, AtomicU64};
#[cfg(all(test, loom))]
pub(crate) use std::sync::atomic::Ordering;

#[cfg(all(test, loom))]
mod counted {
    use super::super::trace::count;
    use std::sync::atomic::Ordering;

    fn count_load(o: Ordering) {
        count(|c| match o {
            Ordering::Acquire => c.acquire_loads += 1,
            _ => c.other_loads += 1,
        });
    }

    /// A loom atomic that counts every operation on it ([`OpCounts`](super::super::OpCounts)); otherwise
    /// exactly loom's.
    macro_rules! counted_atomic {
        ($name:ident, $int:ty) => {
            #[derive(Debug)]
            pub(crate) struct $name(loom::sync::atomic::$name);

            #[allow(dead_code, reason = "the full std surface; each build uses part of it")]
            impl $name {
                pub(crate) fn new(v: $int) -> Self {
                    Self(loom::sync::atomic::$name::new(v))
                }
                pub(crate) fn load(&self, o: Ordering) -> $int {
                    let v = self.0.load(o);
                    count_load(o);
                    v
                }
                pub(crate) fn store(&self, v: $int, o: Ordering) {
                    self.0.store(v, o);
                    count(|c| c.stores += 1);
                }
                pub(crate) fn swap(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.swap(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_add(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_add(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_sub(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_sub(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_or(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_or(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn fetch_and(&self, v: $int, o: Ordering) -> $int {
                    let r = self.0.fetch_and(v, o);
                    count(|c| c.rmws += 1);
                    r
                }
                pub(crate) fn compare_exchange(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    let r = self.0.compare_exchange(current, new, success, failure);
                    count(|c| match r {
                        Ok(_) => c.cas_successes += 1,
                        Err(_) => c.cas_failures += 1,
                    });
                    r
                }
            }
        };
    }
    counted_atomic!(AtomicU8, u8);
    counted_atomic!(AtomicU32, u32);
    counted_atomic!(AtomicU64, u64);

    /// loom's `AtomicBool`, counting like [`counted_atomic`]'s.
    #[derive(Debug)]
    pub(crate) struct AtomicBool(loom::sync::atomic::AtomicBool);

    #[allow(
        dead_code,
        reason = "the std surface the crate uses; each build uses part of it"
    )]
    impl AtomicBool {
        pub(crate) fn new(v: bool) -> Self {
            Self(loom::sync::atomic::AtomicBool::new(v))
        }
        pub(crate) fn load(&self, o: Ordering) -> bool {
            let v = self.0.load(o);
            count_load(o);
            v
        }
        pub(crate) fn store(&self, v: bool, o: Ordering) {
            self.0.store(v, o);
            count(|c| c.stores += 1);
        }
        pub(crate) fn swap(&self, v: bool, o: Ordering) -> bool {
            let r = self.0.swap(v, o);
            count(|c| c.rmws += 1);
            r
        }
    }
}
