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

/// [`prefetch_unchecked`] every line that holds a byte of `bytes[from..=to]` (positions a search step computed,
/// not checked): one hint a line, `(to - from) / 64 + 2` at most, at most 16 lines whatever the positions.
#[inline(always)]
pub(crate) fn prefetch_span_unchecked(bytes: &[u8], from: usize, to: usize) {
    // The count depends only on the span's length (fixed for a caller: its loop is predicted), capped so that
    // positions that are not a span (`to < from` wraps) cost 16 hints, not a long loop.
    let lines = (to.wrapping_sub(from) / 64).min(15);
    let mut at = from;
    for _ in 0..=lines {
        prefetch_unchecked(bytes, at);
        at = at.wrapping_add(64);
    }
    // The last line, which the steps above reach only when `from` lies early enough in its line.
    prefetch_unchecked(bytes, to);
}
