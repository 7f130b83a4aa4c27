//! Model-based test of the store: random sequences of pack additions and removals, loose writes,
//! multi-pack-index writes and removals, refreshes, handles made and dropped, and lookups, checked after every
//! lookup against a reference model (the ids of each pack, and the loose set).
//!
//! Files are written as git writes them: a pack's `.pack` then its `.idx` (made with `write_idx`), the
//! multi-pack-index (made with `write_midx`) under a temporary name then renamed; a removal deletes the `.pack`
//! then the `.idx`, and first removes a multi-pack-index that covers the pack (as `git repack` rewrites it).
//!
//! What the store must answer depends on what it has listed: under `RefreshMode::OnMiss` it re-lists when the
//! pack directory's stamp changed or was too recent to trust, but a change within one timestamp tick after a
//! trusted listing can go unseen until an explicit `store.refresh()`, which always re-lists. So the model
//! tracks `listed`, the packs on disk at the last explicit refresh:
//! - an object that is loose, or in a pack that is on disk and listed, must be found;
//! - any location reported must be in a pack that is on disk or was removed after the last explicit refresh
//!   (never one removed before it: P5), and that pack must hold the object at that offset;
//! - an object in no pack on disk and not loose is `None`, or found in a pack removed since the last refresh;
//! - `Error::Incomplete` only while a pack has been removed since the last refresh, naming only such packs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use odb_index::idx::write::{Entry, write_idx};
use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::{Error, Handle, HashKind, Location, ObjectId, Options, RefreshMode, Store};
use proptest::prelude::*;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};

/// Accept (as stale) a location in a pack removed before the last refresh. Was needed for a bug (a lookup answered
/// from a retired map; regression test `handle_made_before_refresh_does_not_report_a_pack_the_refresh_saw_deleted`
/// in tests/integration/reliability.rs), now fixed: `false` keeps the strict check.
const TOLERATE_STALE_FIRST_HIT: bool = false;

/// Follow every multi-pack-index write with an explicit refresh. Was needed for a bug (a multi-pack-index replaced
/// between listing and loading was misread; regression test
/// `multi_pack_index_replaced_between_listing_and_loading_is_not_misread` in tests/integration/reliability.rs), now
/// fixed: `false` lets the store meet files replaced after it listed them.
const REFRESH_AFTER_MIDX_WRITE: bool = false;

/// Objects are numbered `0..UNIVERSE`.
const UNIVERSE: u16 = 40;
const KIND: HashKind = HashKind::Sha1;

fn object_id(n: u16) -> ObjectId {
    KIND.digest(format!("state machine object {n}").as_bytes())
}

/// An id that is never written.
fn never_written(k: u16) -> ObjectId {
    KIND.digest(format!("never written {k}").as_bytes())
}

/// Where pack `serial` keeps object `n`: distinct per pack, so a wrong pack shows as a wrong offset too.
fn offset_of(serial: u32, n: u16) -> u64 {
    12 + 1000 * u64::from(n) + u64::from(serial)
}

#[derive(Clone, Debug)]
enum Transition {
    AddPack(BTreeSet<u16>),
    /// Remove the `n % packs`th pack on disk.
    RemovePack(usize),
    WriteLoose(u16),
    WriteMidx,
    RemoveMidx,
    Refresh,
    NewHandle,
    /// Drop the `n % handles`th handle.
    DropHandle(usize),
    /// Look up the `sel % present`th present object with handle `h % handles`.
    LookupPresent {
        sel: usize,
        h: usize,
    },
    /// Look up the `sel % absent`th absent object of the universe (or a never-written id) with handle `h`.
    LookupAbsent {
        sel: usize,
        h: usize,
    },
}

#[derive(Clone, Debug, Default)]
struct Model {
    next_serial: u32,
    /// Packs on disk: serial -> objects.
    disk: BTreeMap<u32, BTreeSet<u16>>,
    /// Every pack ever written (removed ones too): serial -> objects.
    ever: BTreeMap<u32, BTreeSet<u16>>,
    /// Packs on disk at the last explicit refresh (or at open).
    listed: BTreeSet<u32>,
    /// Packs removed since the last explicit refresh (the store may have listed them on its own, on a miss).
    removed: BTreeSet<u32>,
    /// The packs the multi-pack-index on disk covers.
    midx: Option<BTreeSet<u32>>,
    loose: BTreeSet<u16>,
    handles: usize,
}

impl Model {
    fn present(&self) -> Vec<u16> {
        let mut s: BTreeSet<u16> = self.loose.clone();
        for objs in self.disk.values() {
            s.extend(objs);
        }
        s.into_iter().collect()
    }

    fn absent(&self) -> Vec<u16> {
        let present: BTreeSet<u16> = self.present().into_iter().collect();
        (0..UNIVERSE).filter(|n| !present.contains(n)).collect()
    }

    /// Must `n` be found now?
    fn must_find(&self, n: u16) -> bool {
        self.loose.contains(&n)
            || self
                .disk
                .iter()
                .any(|(s, objs)| self.listed.contains(s) && objs.contains(&n))
    }
}

struct StoreModel;

impl ReferenceStateMachine for StoreModel {
    type State = Model;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<Model> {
        Just(Model::default()).boxed()
    }

    fn transitions(state: &Model) -> BoxedStrategy<Transition> {
        let pack = proptest::collection::btree_set(0..UNIVERSE, 1..8);
        let mut choices: Vec<(u32, BoxedStrategy<Transition>)> = vec![
            (3, pack.prop_map(Transition::AddPack).boxed()),
            (2, (0..UNIVERSE).prop_map(Transition::WriteLoose).boxed()),
            (1, Just(Transition::WriteMidx).boxed()),
            (1, Just(Transition::Refresh).boxed()),
            (1, Just(Transition::NewHandle).boxed()),
            (
                4,
                (any::<usize>(), any::<usize>())
                    .prop_map(|(sel, h)| Transition::LookupPresent { sel, h })
                    .boxed(),
            ),
            (
                3,
                (any::<usize>(), any::<usize>())
                    .prop_map(|(sel, h)| Transition::LookupAbsent { sel, h })
                    .boxed(),
            ),
        ];
        if !state.disk.is_empty() {
            choices.push((2, any::<usize>().prop_map(Transition::RemovePack).boxed()));
        }
        if state.midx.is_some() {
            choices.push((1, Just(Transition::RemoveMidx).boxed()));
        }
        if state.handles > 0 {
            choices.push((1, any::<usize>().prop_map(Transition::DropHandle).boxed()));
        }
        proptest::strategy::Union::new_weighted(choices).boxed()
    }

    fn preconditions(state: &Model, t: &Transition) -> bool {
        match t {
            Transition::RemovePack(_) => !state.disk.is_empty(),
            Transition::RemoveMidx => state.midx.is_some(),
            Transition::DropHandle(_) => state.handles > 0,
            Transition::NewHandle => state.handles < 4,
            _ => true,
        }
    }

    fn apply(mut state: Model, t: &Transition) -> Model {
        match t {
            Transition::AddPack(objs) => {
                let s = state.next_serial;
                state.next_serial += 1;
                state.disk.insert(s, objs.clone());
                state.ever.insert(s, objs.clone());
            }
            Transition::RemovePack(sel) => {
                let s = *state.disk.keys().nth(sel % state.disk.len()).unwrap();
                if state.midx.as_ref().is_some_and(|m| m.contains(&s)) {
                    state.midx = None;
                }
                state.disk.remove(&s);
                state.removed.insert(s);
            }
            Transition::WriteLoose(n) => {
                state.loose.insert(*n);
            }
            Transition::WriteMidx => {
                state.midx = Some(state.disk.keys().copied().collect());
                if REFRESH_AFTER_MIDX_WRITE {
                    state.listed = state.disk.keys().copied().collect();
                    state.removed.clear();
                }
            }
            Transition::RemoveMidx => state.midx = None,
            Transition::Refresh => {
                state.listed = state.disk.keys().copied().collect();
                state.removed.clear();
            }
            Transition::NewHandle => state.handles += 1,
            Transition::DropHandle(_) => state.handles -= 1,
            Transition::LookupPresent { .. } | Transition::LookupAbsent { .. } => {}
        }
        state
    }
}

/// The system under test: a temporary objects directory, a store on it, and some handles.
struct System {
    _dir: tempfile::TempDir,
    objects: PathBuf,
    store: Arc<Store>,
    handles: Vec<Handle>,
    /// Pack serial by `.pack` path (every pack ever written).
    serial_of: HashMap<PathBuf, u32>,
    /// `.idx` path by serial, for packs on disk.
    on_disk: BTreeMap<u32, PathBuf>,
    next_serial: u32,
}

impl System {
    fn pack_dir(&self) -> PathBuf {
        self.objects.join("pack")
    }

    fn write_pack(&mut self, objs: &BTreeSet<u16>) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let entries: Vec<Entry> = objs
            .iter()
            .map(|&n| Entry {
                id: object_id(n),
                offset: offset_of(serial, n),
                crc32: 0,
            })
            .collect();
        let pack_sum = KIND.digest(format!("state machine pack {serial}").as_bytes());
        let idx = self.pack_dir().join(format!("pack-{pack_sum}.idx"));
        let bytes = write_idx(2, KIND, &entries, &pack_sum).unwrap();
        // As git does: the pack first, then the index under a temporary name, renamed into place.
        let len = entries.iter().map(|e| e.offset).max().unwrap_or(12) + 1 + KIND.len() as u64;
        odb_index_testkit::write_stub_pack(
            &idx.with_extension("pack"),
            entries.len() as u32,
            len,
            pack_sum.as_bytes(),
        );
        write_then_rename(&idx, &bytes);
        self.serial_of.insert(idx.with_extension("pack"), serial);
        self.on_disk.insert(serial, idx);
    }

    fn remove_pack(&mut self, sel: usize, model: &Model) {
        let serial = *self.on_disk.keys().nth(sel % self.on_disk.len()).unwrap();
        let idx = self.on_disk.remove(&serial).unwrap();
        let midx = self.pack_dir().join("multi-pack-index");
        // The model already dropped the multi-pack-index if it covered this pack: follow it.
        if model.midx.is_none() && midx.exists() {
            std::fs::remove_file(&midx).unwrap();
        }
        std::fs::remove_file(idx.with_extension("pack")).unwrap();
        std::fs::remove_file(&idx).unwrap();
    }

    fn write_loose(&self, n: u16) {
        let hex = object_id(n).to_string();
        let dir = self.objects.join(&hex[..2]);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(&hex[2..]);
        if !path.exists() {
            write_then_rename(&path, b"loose object (contents are not read)");
        }
    }

    fn write_midx(&self, model: &Model) {
        let packs: Vec<PackEntries> = self
            .on_disk
            .iter()
            .map(|(&serial, idx)| PackEntries {
                name: idx.file_name().unwrap().to_str().unwrap().to_owned(),
                entries: model.disk[&serial]
                    .iter()
                    .map(|&n| (object_id(n), offset_of(serial, n)))
                    .collect(),
            })
            .collect();
        let bytes = write_midx(1, KIND, &packs).unwrap();
        write_then_rename(&self.pack_dir().join("multi-pack-index"), &bytes);
    }

    /// Look `n` (or a never-written id) up with handle `h` and check the answer against the model.
    fn check_lookup(&mut self, model: &Model, n: Option<u16>, h: usize, k: u16) {
        let id = n.map_or_else(|| never_written(k), object_id);
        let mut temp;
        let handle = if self.handles.is_empty() {
            temp = self.store.handle();
            &mut temp
        } else {
            let i = h % self.handles.len();
            &mut self.handles[i]
        };
        let r = handle.locate(&id);
        let what = format!("object {n:?} ({id}): {r:?}; model {model:?}");
        match r {
            Ok(Some(Location::Packed { pack, offset })) => {
                let n = n.unwrap_or_else(|| panic!("a never-written id was found: {what}"));
                let path = handle
                    .pack_path(pack)
                    .unwrap_or_else(|e| panic!("fresh location, no path ({e}): {what}"));
                let serial = *self
                    .serial_of
                    .get(&path)
                    .unwrap_or_else(|| panic!("unknown pack {}: {what}", path.display()));
                if !(model.disk.contains_key(&serial) || model.removed.contains(&serial)) {
                    // A bug, fixed (tests/integration/reliability.rs,
                    // handle_made_before_refresh_does_not_report_a_pack_the_refresh_saw_deleted): a handle made
                    // before a refresh answered from its retired map. With the constant true, this tolerates
                    // such a location if the store recognises it as stale (P5); false (the default) fails.
                    assert!(
                        TOLERATE_STALE_FIRST_HIT
                            && matches!(self.store.pack_path(pack), Err(Error::StalePack { .. })),
                        "reported in pack {serial}, removed before the last refresh: {what}"
                    );
                }
                assert!(
                    model.ever[&serial].contains(&n),
                    "pack {serial} does not hold it: {what}"
                );
                assert_eq!(offset, offset_of(serial, n), "wrong offset: {what}");
            }
            Ok(Some(Location::Loose { dir })) => {
                assert_eq!(dir, 0, "{what}");
                assert!(
                    n.is_some_and(|n| model.loose.contains(&n)),
                    "reported loose but not written loose: {what}"
                );
            }
            Ok(None) => {
                assert!(!n.is_some_and(|n| model.must_find(n)), "false miss: {what}");
            }
            Err(Error::Incomplete { failed }) => {
                let removed = &model.removed;
                assert!(
                    !removed.is_empty() && !n.is_some_and(|n| model.loose.contains(&n)),
                    "Incomplete without a removed pack: {what}"
                );
                for (p, _) in &failed {
                    let serial = self.serial_of.get(&p.with_extension("pack"));
                    assert!(
                        serial.is_some_and(|s| removed.contains(s)),
                        "Incomplete names {}: {what}",
                        p.display()
                    );
                }
                // Still: an object that must be found is never reported as an error.
                assert!(
                    !n.is_some_and(|n| model.must_find(n)),
                    "error instead of a hit: {what}"
                );
            }
            Err(e) => panic!("unexpected error {e}: {what}"),
        }
    }
}

/// Write `bytes` to a temporary name beside `path`, then rename it into place.
fn write_then_rename(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(format!(
        "tmp_{}",
        path.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

struct StoreTest;

impl StateMachineTest for StoreTest {
    type SystemUnderTest = System;
    type Reference = StoreModel;

    fn init_test(_: &Model) -> System {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join("objects");
        std::fs::create_dir_all(objects.join("pack")).unwrap();
        std::fs::create_dir_all(objects.join("info")).unwrap();
        let store = Store::open(
            &objects,
            // Events set up after two misses (the default defers them for 2 048): every sequence crosses the
            // switch from `stat` to events early.
            Options::default()
                .hash_kind(KIND)
                .refresh(RefreshMode::OnMiss)
                .change_events_after(2),
        )
        .unwrap();
        System {
            _dir: dir,
            objects,
            store,
            handles: Vec::new(),
            serial_of: HashMap::new(),
            on_disk: BTreeMap::new(),
            next_serial: 0,
        }
    }

    fn apply(mut sys: System, model: &Model, t: Transition) -> System {
        match t {
            Transition::AddPack(objs) => sys.write_pack(&objs),
            Transition::RemovePack(sel) => sys.remove_pack(sel, model),
            Transition::WriteLoose(n) => sys.write_loose(n),
            Transition::WriteMidx => {
                sys.write_midx(model);
                if REFRESH_AFTER_MIDX_WRITE {
                    sys.store.refresh().unwrap();
                }
            }
            Transition::RemoveMidx => {
                std::fs::remove_file(sys.pack_dir().join("multi-pack-index")).unwrap()
            }
            Transition::Refresh => {
                sys.store.refresh().unwrap();
            }
            Transition::NewHandle => sys.handles.push(sys.store.handle()),
            Transition::DropHandle(sel) => {
                let i = sel % sys.handles.len();
                sys.handles.remove(i);
            }
            Transition::LookupPresent { sel, h } => {
                let present = model.present();
                if !present.is_empty() {
                    sys.check_lookup(model, Some(present[sel % present.len()]), h, 0);
                }
            }
            Transition::LookupAbsent { sel, h } => {
                let absent = model.absent();
                let n =
                    (sel % (absent.len() + 1) < absent.len()).then(|| absent[sel % absent.len()]);
                sys.check_lookup(model, n, h, (sel % 1000) as u16);
            }
        }
        sys
    }

    fn check_invariants(sys: &System, model: &Model) {
        assert_eq!(sys.handles.len(), model.handles);
        assert_eq!(
            sys.on_disk.keys().copied().collect::<BTreeSet<_>>(),
            model.disk.keys().copied().collect::<BTreeSet<_>>()
        );
    }

    fn teardown(mut sys: System, model: Model) {
        // After an explicit refresh every handle finds exactly what the model holds.
        sys.store.refresh().unwrap();
        let mut listed = model;
        listed.listed = listed.disk.keys().copied().collect();
        listed.removed.clear();
        for h in 0..sys.handles.len().max(1) {
            for n in 0..UNIVERSE {
                sys.check_lookup(&listed, Some(n), h, 0);
                if listed.must_find(n) {
                    continue;
                }
                let mut fresh = sys.store.handle();
                assert_eq!(fresh.locate(&object_id(n)).unwrap(), None, "object {n}");
            }
        }
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn store_follows_the_model(sequential 1..40 => StoreTest);
}
