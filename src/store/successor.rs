//! Building the slot map that replaces the current one after a refresh: what was loaded and is unchanged is
//! carried over, ready; the rest starts empty.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::filter::FilterCell;
use super::listing::Listing;
use super::load::{Loaded, Map};
use super::plan::SlotSpec;
use crate::dir::Stamp;
use crate::protocol::SlotMap;
// plain: an `Arc` of values immutable once shared (a count, no protocol: slots and cells publish them).
use crate::sync::plain::Arc;

/// Whether two listings name the same objects directories, packs (by id) and multi-pack-indices (by file
/// identity).
pub(super) fn same_listing(a: &Listing, b: &Listing) -> bool {
    fn midx(g: &Listing) -> Vec<(&Path, Stamp)> {
        g.slots
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
pub(super) fn build_successor(old: &Map, mut listing: Listing) -> Map {
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
