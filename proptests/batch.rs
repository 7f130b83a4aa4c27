//! `Handle::locate_many` answers every id as `Handle::locate` does, on every kind of index: `.idx` versions 1 and
//! 2, SHA-1 and SHA-256, a multi-pack-index (covering every pack, or some), loose objects, all mixed, with ids
//! that are nowhere, under the options that change the batch's miss path (events or `stat`, watched, probed or
//! cached loose objects, the miss filter on or off). What would go wrong: an interleaved step that answers
//! instead of only warming a line, a held miss answered with the wrong listing's check, a hit of a later id
//! overwriting a miss's slot, an answer out of place in `out`.

use std::path::Path;

use odb_index::idx::write::{Entry, write_idx};
use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::{HashKind, LooseMode, MissFilterMode, ObjectId, Options, RefreshMode, Store};
use proptest::prelude::*;

/// One repository: packs (each a set of ids), which of them a multi-pack-index covers, loose ids, and the ids to
/// ask for (indices into every id written, or ids written nowhere), in order, repeats allowed.
#[derive(Clone, Debug)]
struct Case {
    kind: HashKind,
    version: u32,
    packs: Vec<Vec<[u8; 32]>>,
    midx: Option<Vec<bool>>,
    loose: Vec<[u8; 32]>,
    asks: Vec<Ask>,
    options: u8,
}

#[derive(Clone, Copy, Debug)]
enum Ask {
    /// The `n`th written id (modulo their number).
    Written(usize),
    /// An id written nowhere (its bytes; almost surely absent).
    Absent([u8; 32]),
}

prop_compose! {
    fn case()(
        sha256 in any::<bool>(),
        v1 in any::<bool>(),
        packs in prop::collection::vec(prop::collection::vec(any::<[u8; 32]>(), 0..120), 0..4),
        midx in prop::option::of(prop::collection::vec(any::<bool>(), 4)),
        loose in prop::collection::vec(any::<[u8; 32]>(), 0..12),
        asks in prop::collection::vec(
            prop_oneof![
                3 => any::<usize>().prop_map(Ask::Written),
                1 => any::<[u8; 32]>().prop_map(Ask::Absent),
            ],
            0..90,
        ),
        options in 0u8..7,
    ) -> Case {
        let kind = if sha256 { HashKind::Sha256 } else { HashKind::Sha1 };
        // Version 1 is SHA-1 only.
        let version = if v1 && !sha256 { 1 } else { 2 };
        Case { kind, version, packs, midx, loose, asks, options }
    }
}

fn id(kind: HashKind, b: &[u8; 32]) -> ObjectId {
    ObjectId::from_bytes(&b[..kind.len()]).unwrap()
}

/// The options of case `n`: the default, `stat` only, probed loose objects without refresh, cached loose
/// objects, the filter built at once, the filter off, and no loose objects without refresh (a batch holds no miss).
fn options(kind: HashKind, n: u8) -> Options {
    let o = Options::default().hash_kind(kind);
    match n {
        0 => o,
        1 => o.change_events(false),
        2 => o.loose(LooseMode::Probe).refresh(RefreshMode::Never),
        3 => o.loose(LooseMode::Cached),
        4 => o.miss_filter(MissFilterMode::Eager).change_events_after(1),
        5 => o.miss_filter(MissFilterMode::Off),
        _ => o.loose(LooseMode::None).refresh(RefreshMode::Never),
    }
}

/// Write the case's files under `objects`; the ids written, in order (pack by pack, then loose).
fn write(case: &Case, objects: &Path) -> Vec<ObjectId> {
    let kind = case.kind;
    let pack_dir = objects.join("pack");
    std::fs::create_dir_all(&pack_dir).unwrap();
    let mut written = Vec::new();
    let mut covered = Vec::new();
    for (p, ids) in case.packs.iter().enumerate() {
        let mut entries: Vec<Entry> = Vec::new();
        for (k, b) in ids.iter().enumerate() {
            let id = id(kind, b);
            if entries.iter().any(|e| e.id == id) {
                continue;
            }
            entries.push(Entry {
                id,
                offset: 12 + 7 * k as u64,
                crc32: 0,
            });
            written.push(id);
        }
        let sum = kind.digest(format!("batch pack {p}").as_bytes());
        let idx = pack_dir.join(format!("pack-{sum}.idx"));
        std::fs::write(&idx, write_idx(case.version, kind, &entries, &sum).unwrap()).unwrap();
        let len = 12 + 7 * ids.len() as u64 + 1 + kind.len() as u64;
        odb_index_testkit::write_stub_pack(
            &idx.with_extension("pack"),
            entries.len() as u32,
            len,
            sum.as_bytes(),
        );
        if case.midx.as_ref().is_some_and(|m| m[p]) {
            covered.push(PackEntries {
                name: idx.file_name().unwrap().to_str().unwrap().to_owned(),
                entries: entries.iter().map(|e| (e.id, e.offset)).collect(),
            });
        }
    }
    if case.midx.is_some() && !covered.is_empty() {
        std::fs::write(
            pack_dir.join("multi-pack-index"),
            write_midx(1, kind, &covered).unwrap(),
        )
        .unwrap();
    }
    for b in &case.loose {
        let id = id(kind, b);
        let hex = id.to_string();
        std::fs::create_dir_all(objects.join(&hex[..2])).unwrap();
        std::fs::write(objects.join(&hex[..2]).join(&hex[2..]), b"not read").unwrap();
        written.push(id);
    }
    written
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn locate_many_answers_as_locate(case in case()) {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path().join("objects");
        let written = write(&case, &objects);
        let ids: Vec<ObjectId> = case
            .asks
            .iter()
            .map(|a| match *a {
                Ask::Written(n) if !written.is_empty() => written[n % written.len()],
                Ask::Written(n) => id(case.kind, &[n as u8; 32]),
                Ask::Absent(b) => id(case.kind, &b),
            })
            .collect();
        let store = Store::open(&objects, options(case.kind, case.options)).unwrap();
        let mut one = store.handle();
        let want: Vec<_> = ids.iter().map(|i| one.locate(i).unwrap()).collect();
        // A handle that starts cold (its batch loads the indices), then the same handle warm (the steady path,
        // the filter built), with something already in `out`.
        let mut many = store.handle();
        for round in 0..3 {
            let mut out = vec![None; round];
            many.locate_many(&ids, &mut out).unwrap();
            prop_assert_eq!(&out[round..], &want[..], "round {}", round);
        }
        // Every written id is found, in a batch of them all (loose ones only where loose objects are looked at).
        let mut out = Vec::new();
        many.locate_many(&written, &mut out).unwrap();
        let looked_at = if case.options == 6 { written.len() - case.loose.len() } else { written.len() };
        for (i, found) in written.iter().zip(&out).take(looked_at) {
            prop_assert!(found.is_some(), "{} written, not found by a batch", i);
        }
    }
}
