//! The crate's test hooks: named points of the store's code where the crate's own tests run a closure on the
//! calling thread, to put git's work (a repack, a rename) at one exact step of a lookup (`relist_tests.rs`,
//! `edge_tests.rs`). Outside those tests [`at`] is an empty inline function: the production build runs nothing
//! and reads nothing here.

/// Where a hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum Point {
    /// `Handle::locate_slow`, after the drain that precedes its loose step, before the loose step.
    BeforeLoose,
    /// `Handle::probe_loose` on the steady path, right before a loose probe that reads the file system.
    BeforeSteadyProbe,
    /// `Handle::locate_batch`, after each search of a batch (its miss held, or its answer made).
    AfterBatchSearch,
    /// `Handle::refresh_after_miss`, before it lists the pack directories again.
    BeforeRelist,
    /// `Handle::refresh_after_miss` at its end: after each re-listing of `Handle::locate` and
    /// `Handle::load_all_relisted`, before the new listing is loaded.
    AfterRelist,
    /// The iterations and prefix lookups, after their packed step, before they list the loose objects.
    AfterPacks,
    /// `Handle::locate_again`, before each of its re-listings.
    BeforeAgainListing,
    /// `Handle::locate_again`, after each of its re-listings.
    AfterAgainListing,
}

/// Run the hook set at `point` on this thread, if any (only in the crate's own tests).
#[inline(always)]
pub(in crate::store) fn at(point: Point) {
    #[cfg(all(test, not(any(loom, shuttle))))]
    set::run(point);
    #[cfg(not(all(test, not(any(loom, shuttle)))))]
    let _ = point;
}

#[cfg(all(test, not(any(loom, shuttle))))]
pub(in crate::store) use set::{clear, every, once, ran};

#[cfg(all(test, not(any(loom, shuttle))))]
mod set {
    use std::cell::RefCell;

    use super::Point;

    struct Hook {
        point: Point,
        run: Box<dyn FnMut()>,
        once: bool,
    }

    thread_local! {
        /// The hooks set on this thread, at most one per point.
        static HOOKS: RefCell<Vec<Hook>> = const { RefCell::new(Vec::new()) };
    }

    /// Run `f` at the next [`at`](super::at)`(point)` on this thread, once (replacing a hook set there).
    pub(in crate::store) fn once(point: Point, f: impl FnOnce() + 'static) {
        let mut f = Some(f);
        set(point, Box::new(move || f.take().map_or((), |f| f())), true);
    }

    /// Run `f` at every [`at`](super::at)`(point)` on this thread, until [`clear`]`(point)`.
    pub(in crate::store) fn every(point: Point, f: impl FnMut() + 'static) {
        set(point, Box::new(f), false);
    }

    /// Whether no hook is set at `point` any more: a [`once`] hook has run (or none was set).
    pub(in crate::store) fn ran(point: Point) -> bool {
        HOOKS.with(|h| !h.borrow().iter().any(|k| k.point == point))
    }

    /// Remove the hook set at `point`.
    pub(in crate::store) fn clear(point: Point) {
        HOOKS.with(|h| h.borrow_mut().retain(|k| k.point != point));
    }

    fn set(point: Point, run: Box<dyn FnMut()>, once: bool) {
        clear(point);
        HOOKS.with(|h| h.borrow_mut().push(Hook { point, run, once }));
    }

    /// Take the hook out while it runs (it may set hooks, or look up through the store again), then put an
    /// [`every`] hook back unless it set another at its point.
    pub(super) fn run(point: Point) {
        let taken = HOOKS.with(|h| {
            let mut h = h.borrow_mut();
            let i = h.iter().position(|k| k.point == point)?;
            Some(h.remove(i))
        });
        let Some(mut hook) = taken else { return };
        (hook.run)();
        if !hook.once && ran(point) {
            HOOKS.with(|h| h.borrow_mut().push(hook));
        }
    }
}
