//! A software prefetch: the hint that lets a batch of lookups keep several cache misses in flight
//! (`Handle::locate_many` warms the lines its searches will read, for a group of ids, before it searches them).

/// Ask the CPU to bring the cache line holding `*r` into every cache level, without waiting for it. A hint only:
/// it changes no value the program can observe, and a wrong address (not possible here: `r` is a reference)
/// would not fault. A no-op on targets other than x86-64 (stable Rust has no portable prefetch).
#[inline(always)]
pub(crate) fn prefetch<T: ?Sized>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is in the target's baseline, so the
        // compiler may assume it); the instruction reads nothing the program observes and cannot fault, and the
        // pointer comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(r).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// [`prefetch`] the line of `bytes[at]`, the address computed without a bounds check: for a position a search
/// step computed inside the file, where a bounds check would cost more than the hint saves. A position
/// outside `bytes` (not possible for those callers) prefetches some other address: the instruction never faults
/// and changes nothing the program can observe, and nothing is read through the pointer.
#[inline(always)]
pub(crate) fn prefetch_unchecked(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE (in the x86-64 baseline); it reads nothing the program observes and
        // does not fault whatever the address; `wrapping_add` makes the address without dereferencing anything.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().wrapping_add(at).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}

/// [`prefetch_unchecked`] the `N` lines from `bytes[from]` on (`from`, `from + 64`, ...): every line holding a
/// byte of `bytes[from..=from + len]` for `N >= len / 64 + 2`, whatever `from`'s place in its line. `N` is a
/// constant, so this is `N` prefetch instructions at fixed displacements, no loop.
#[inline(always)]
pub(crate) fn prefetch_lines_unchecked<const N: usize>(bytes: &[u8], from: usize) {
    for k in 0..N {
        prefetch_unchecked(bytes, from.wrapping_add(k * 64));
    }
}

/// The `N` of [`prefetch_lines_unchecked`] that covers a span of `len + 1` bytes (`from..=from + len`).
pub(crate) const fn lines_for(len: usize) -> usize {
    len / 64 + 2
}
