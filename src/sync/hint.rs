//! Spinning: how many `spin_loop` hints a waiter issues before it parks ([`spin_limit`]), and the hint itself
//! ([`spin_loop`]), per build. Never a yield (P3: a waiter parks on the condition variable).

/// How many `spin_loop` hints a waiter issues before it parks on the condition variable. Loads take
/// microseconds to milliseconds (open + mmap + validate), so the spin is short: it only catches a load that
/// is about to finish.
#[cfg(not(all(test, any(loom, shuttle))))]
#[inline(always)]
pub(crate) const fn spin_limit() -> u32 {
    64
}

#[cfg(not(all(test, any(loom, shuttle))))]
#[inline(always)]
pub(crate) fn spin_loop() {
    #[expect(
        clippy::disallowed_methods,
        reason = "the facade's bounded spin is the one spin hint"
    )]
    std::hint::spin_loop();
}

/// No spinning under shuttle: each `spin_loop` is a yield to its scheduler, which only lengthens schedules.
#[cfg(all(test, shuttle))]
#[inline(always)]
pub(crate) const fn spin_limit() -> u32 {
    0
}

#[cfg(all(test, shuttle))]
pub(crate) fn spin_loop() {
    shuttle::hint::spin_loop();
}

#[cfg(all(test, loom))]
thread_local! {
    /// This test's spin budget (see [`spin_limit`]); a std thread-local, so per test (loom runs a model's
    /// threads on its test's OS thread).
    static SPIN_LIMIT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A bounded busy-wait hint. Under loom every spin is a branch to explore, so the budget is zero unless a
/// model asks for more with [`set_spin_limit`] (the spin-then-park models run with 1, so the spin path is
/// checked too).
#[cfg(all(test, loom))]
pub(crate) fn spin_limit() -> u32 {
    SPIN_LIMIT.get()
}

/// Set this test's spin budget (loom builds only; 0 unless set). Lasts for the rest of the test.
#[cfg(all(test, loom))]
pub(crate) fn set_spin_limit(n: u32) {
    SPIN_LIMIT.set(n);
}

#[cfg(all(test, loom))]
pub(crate) fn spin_loop() {
    loom::hint::spin_loop();
}
