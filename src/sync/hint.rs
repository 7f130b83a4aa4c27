//! Spinning: how many `spin_loop` hints a waiter issues before it parks ([`spin_limit`]), and the hint itself
//! ([`spin_loop`]), per build. Never a yield (P3: a waiter parks on the condition variable).

/// How many `spin_loop` hints a waiter issues before it parks on the condition variable. Loads take
/// microseconds to milliseconds (open + mmap + validate), so the spin is short: it only catches a load that
/// is about to finish.
const SPIN_LIMIT_STD: u32 = 64;

#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
#[inline(always)]
pub(crate) const fn spin_limit() -> u32 {
    SPIN_LIMIT_STD
}

/// The std hint (outside a model).
#[inline(always)]
fn std_spin_loop() {
    #[expect(
        clippy::disallowed_methods,
        reason = "the facade's bounded spin is the one spin hint"
    )]
    std::hint::spin_loop();
}

#[cfg(not(all(any(loom, shuttle), feature = "model-checking")))]
#[inline(always)]
pub(crate) fn spin_loop() {
    std_spin_loop();
}

/// No spinning in a shuttle model: each `spin_loop` is a yield to its scheduler, which only lengthens schedules.
#[cfg(all(shuttle, not(loom), feature = "model-checking"))]
pub(crate) fn spin_limit() -> u32 {
    if super::model::in_model() {
        0
    } else {
        SPIN_LIMIT_STD
    }
}

#[cfg(all(shuttle, not(loom), feature = "model-checking"))]
pub(crate) fn spin_loop() {
    if super::model::in_model() {
        shuttle::hint::spin_loop();
    } else {
        std_spin_loop();
    }
}

#[cfg(all(loom, feature = "model-checking"))]
thread_local! {
    /// This test's spin budget (see [`spin_limit`]); a std thread-local, so per test (loom runs a model's
    /// threads on its test's OS thread).
    static SPIN_LIMIT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A bounded busy-wait hint. In a loom model every spin is a branch to explore, so the budget is zero unless a
/// model asks for more with [`set_spin_limit`] (the spin-then-park models run with 1, so the spin path is
/// checked too).
#[cfg(all(loom, feature = "model-checking"))]
pub(crate) fn spin_limit() -> u32 {
    if super::model::in_model() {
        SPIN_LIMIT.get()
    } else {
        SPIN_LIMIT_STD
    }
}

/// Set this test's spin budget in loom models (0 unless set). Lasts for the rest of the test.
#[cfg(all(loom, feature = "model-checking"))]
pub fn set_spin_limit(n: u32) {
    SPIN_LIMIT.set(n);
}

#[cfg(all(loom, feature = "model-checking"))]
pub(crate) fn spin_loop() {
    if super::model::in_model() {
        loom::hint::spin_loop();
    } else {
        std_spin_loop();
    }
}
