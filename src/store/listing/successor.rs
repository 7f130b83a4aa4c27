//! Building the slot map that replaces the current one after a refresh: what was loaded and is unchanged is
//! carried over, ready; the rest starts empty.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::filter::FilterCell;
use super::load::{Loaded, Map};
use super::plan::SlotSpec;
use crate::dir::Stamp;
use crate::protocol::SlotMap;
use crate::store::listing::{Listing, RefreshState};
use crate::sync::plain::Arc;

/// Whether two listings name the same objects directories, packs (by id) and multi-pack-indices (by file
/// identity).
pub(in crate::store) fn same_listing(a: &Listing, b: &Listing) -> bool {
    fn midx(listing: &Listing) -> Vec<(&Path, Stamp)> {
        listing
            .slots
            .iter()
            .filter_map(|s| match s {
                SlotSpec::Midx { path, stamp, .. } => Some((path.as_path(), *stamp)),
                SlotSpec::Pack { .. } => None,
            })
            .collect()
    }
    a.dirs == b.dirs
        && a.packs.len() == b.packs.len()
        && a.packs
            .iter()
            .zip(b.packs.iter())
            .all(|(x, y)| x.id == y.id)
        && {
            let (ma, mb) = (midx(a), midx(b));
            ma.len() == mb.len() && ma.iter().all(|x| mb.contains(x))
        }
}

/// Build the map that replaces `old`: every slot whose file is unchanged keeps its loaded value (or its
/// recorded failure) and comes first, ready; the rest are empty, in load order.
pub(in crate::store) fn build_successor(old: &Map, mut listing: Listing) -> Map {
    // What the old map loaded, keyed by file identity.
    let mut carried_packs: HashMap<(PathBuf, Stamp), Loaded> = HashMap::new();
    let mut carried_midx: HashMap<(PathBuf, Stamp), Loaded> = HashMap::new();
    let og = old.meta();
    for (i, v) in old.ready() {
        match (&og.slots[i], v) {
            (_, Loaded::Covered) => {}
            // A file that vanished since its listing is tried again if the new listing has it (git put it back,
            // or replaced it under the same name): its failure is not carried.
            (_, Loaded::Failed { error, .. }) if error.is_vanished() => {}
            // A failed system call that may pass (EIO, EMFILE, ...: the fault policy) is tried again too.
            (_, Loaded::Failed { error, .. }) if error.may_be_transient() => {}
            (SlotSpec::Pack { pack, .. }, v) => {
                let p = &og.packs[*pack];
                carried_packs.insert((p.idx_path.clone(), p.idx_stamp), v.clone());
            }
            (SlotSpec::Midx { path, stamp, .. }, v) => {
                carried_midx.insert((path.clone(), *stamp), v.clone());
            }
        }
    }
    // Partition the new slots: carried (ready) first, then the rest in their planned order.
    let old_slots = std::mem::take(&mut listing.slots).into_vec();
    let mut ready_specs = Vec::new();
    let mut ready_vals = Vec::new();
    let mut rest = Vec::new();
    for (i, mut spec) in old_slots.into_iter().enumerate() {
        let carried = match &spec {
            SlotSpec::Pack { pack, .. } => {
                let p = &listing.packs[*pack];
                carried_packs
                    .get(&(p.idx_path.clone(), p.idx_stamp))
                    .cloned()
            }
            SlotSpec::Midx {
                path, stamp, packs, ..
            } => {
                carried_midx.get(&(path.clone(), *stamp)).map(|v| match v {
                    // Pack ids and lengths may differ in the new listing: rebuild the int-id map.
                    Loaded::Midx(m) => Loaded::Midx(Arc::new(m.for_listing(packs, &listing))),
                    other => other.clone(),
                })
            }
        };
        match carried {
            Some(v) => {
                drop_opened(&mut spec);
                ready_specs.push((i, spec));
                ready_vals.push(v);
            }
            None => rest.push((i, spec)),
        }
    }
    // Slot indices moved: remap `covered_by` references.
    let mut new_index = vec![0usize; ready_specs.len() + rest.len()];
    for (new, (old_i, _)) in ready_specs.iter().chain(rest.iter()).enumerate() {
        new_index[*old_i] = new;
    }
    let slots: Box<[SlotSpec]> = ready_specs
        .into_iter()
        .chain(rest)
        .map(|(_, s)| match s {
            SlotSpec::Pack { pack, covered_by } => SlotSpec::Pack {
                pack,
                covered_by: covered_by.map(|c| new_index[c]),
            },
            m => m,
        })
        .collect();
    let n_ready = ready_vals.len();
    listing.slots = slots;
    // The old map's miss filter, restricted to the packs carried over (stale ids only add false positives).
    listing.filter = FilterCell::inherit(
        &og.filter,
        ready_vals.iter().filter_map(|v| match v {
            Loaded::Pack(p) => Some((p.id, p.idx.len())),
            _ => None,
        }),
    );
    SlotMap::new(ready_vals, listing.slots.len() - n_ready, listing)
}

/// A carried slot is loaded already: the file its new listing opened is not needed (nor kept mapped).
fn drop_opened(spec: &mut SlotSpec) {
    if let SlotSpec::Midx { opened, .. } = spec {
        *opened.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// How many listings in a row may miss a pack whose index is loaded before [`keep_loaded`] lets it go. A miss on
/// a changed pack directory lists it again, so a pack renamed away and back (a flapping file) is missed by
/// several listings in a row whenever misses outpace its renames (each rename a change, and a listing that
/// catches it half renamed misses it too): with 8, such a run let it go, then its index was loaded and its
/// `.pack` opened again when a listing saw it back, each open a chance to find it away (seen under `strace` in
/// `bench/scripts/flapping-pack.sh`, and in cli/tests/cli/flapping.rs), where git never prunes its list. 64
/// listings in a row without the file is a pack removed for good; a long-lived store lets its index go then.
pub(in crate::store) const MAX_KEPT_LISTINGS: u32 = 64;

/// Keep in `listing` (a re-listing after a miss) each pack of `old` whose index `old` has loaded and
/// which `listing` did not find (renamed away for a moment, or removed by a repack), as git keeps a pack it has
/// opened: `reprepare_packed_git` never prunes its list, and an opened pack stays readable through its descriptor
/// and mapping. The pack keeps its id, paths and stamp, and the successor map carries its loaded index; were it
/// dropped, its objects would be `missing` until a listing saw it again. Not stale (P5): the id still names the
/// same file, which a reader that has it open reads as before; a reader that cannot open it any more asks
/// [`Handle::locate_again`](crate::store::Handle::locate_again), whose re-listing keeps nothing (as an explicit
/// [`Store::refresh`](crate::store::Store::refresh)), so the location is then recognised as gone. A pack that
/// [`MAX_KEPT_LISTINGS`] listings in a row missed is let go (a repack removed it for good: a long-lived store
/// does not keep deleted packs mapped), and so is one whose objects directory is no longer searched.
pub(in crate::store) fn keep_loaded(
    old: &Map,
    listing: &mut Listing,
    state: &mut RefreshState,
    keep: bool,
) {
    if !keep {
        state.kept.clear();
        return;
    }
    let og = old.meta();
    let listed: std::collections::HashSet<&Path> =
        listing.packs.iter().map(|p| p.idx_path.as_path()).collect();
    let mut kept = Vec::new();
    let mut kept_counts = HashMap::new();
    for (i, v) in old.ready() {
        let (SlotSpec::Pack { pack, .. }, Loaded::Pack(_)) = (&og.slots[i], v) else {
            continue;
        };
        let p = &og.packs[*pack];
        let missed = state.kept.get(&p.idx_path).copied().unwrap_or(0) + 1;
        if listed.contains(p.idx_path.as_path())
            || missed > MAX_KEPT_LISTINGS
            || !listing.dir_ids.contains(&p.dir)
            || listing.slots.len() + kept.len() >= crate::protocol::MAX_SLOTS
        {
            continue;
        }
        kept_counts.insert(p.idx_path.clone(), missed);
        kept.push(p.clone());
    }
    // The counts of the packs kept by this listing only: one seen again (or let go) starts from 0.
    state.kept = kept_counts;
    if kept.is_empty() {
        return;
    }
    let mut packs = std::mem::take(&mut listing.packs).into_vec();
    let mut slots = std::mem::take(&mut listing.slots).into_vec();
    for p in kept {
        // Its id survives this listing (a pack put back unchanged is the same pack).
        state.ids.insert(
            p.idx_path.clone(),
            (p.id, p.idx_stamp, state.listing_number),
        );
        listing.pack_by_id.insert(p.id, packs.len());
        slots.push(SlotSpec::Pack {
            pack: packs.len(),
            covered_by: None,
        });
        packs.push(p);
    }
    listing.packs = packs.into();
    listing.slots = slots.into();
}
