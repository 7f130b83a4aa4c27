//! Incremental multi-pack-index chains written by the installed git (`git multi-pack-index write
//! --incremental`, 2.47): every layer is used (no `.idx` loaded for the packs it covers), every object is found
//! where `git show-index` says, and a broken chain or layer is a typed problem while every object is still found
//! through the packs' own indices. SHA-1 and SHA-256.

use std::path::Path;

use odb_index::testing::{CHAIN_DIR, read_chain};
use odb_index::{Location, ObjectId, Options, Problem, Store};
use odb_index_testkit::*;

use crate::api_common::*;

/// A repository of `format` with `layers` chain layers, each over two new packs.
fn chained_repo(format: &str, layers: usize) -> tempfile::TempDir {
    let repo = init_repo(format, true);
    for l in 0..layers {
        fast_import_blobs(repo.path(), 200, 10 * l as u64 + 1, &format!("a{l}"));
        fast_import_blobs(repo.path(), 200, 10 * l as u64 + 2, &format!("b{l}"));
        git(repo.path(), &["multi-pack-index", "write", "--incremental"]);
    }
    let pack_dir = objects_dir(repo.path()).join("pack");
    assert!(!pack_dir.join("multi-pack-index").exists());
    let chain = read_chain(&pack_dir, format.parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(chain.len(), layers, "git wrote one layer per call");
    repo
}

/// Every object is found in a pack whose index lists it at that offset; returns how many index files loaded.
fn check_all(repo: &Path, format: &str) -> (u64, Vec<Problem>) {
    check_all_with(repo, format, Options::default())
}

/// [`check_all`] with a store opened with `options`.
fn check_all_with(repo: &Path, format: &str, options: Options) -> (u64, Vec<Problem>) {
    let store = Store::open(repo, options).unwrap();
    let mut h = store.handle();
    let t = truth(&store.objects_dirs(), format);
    for id in all_objects(repo) {
        let Some(Location::Packed { pack, offset }) = h.locate(&oid(&id)).unwrap() else {
            panic!("{id} not found packed")
        };
        let at = (canon(&store.pack(pack).unwrap().pack_path), offset);
        assert!(t.packed[&id].contains(&at), "{id} at {at:?}");
    }
    for id in absent_ids(500, if format == "sha256" { 64 } else { 40 }, 4) {
        assert_eq!(h.locate(&oid(&id)).unwrap(), None);
    }
    // Iteration through the layers agrees with git too.
    assert_eq!(sorted_ids(&mut h), all_objects(repo));
    (store.metrics().index_loads, store.problems())
}

#[test]
fn chain_layers_are_used() {
    for format in FORMATS {
        let repo = chained_repo(format, 3);
        git(repo.path(), &["multi-pack-index", "verify"]);
        let (loads, problems) = check_all(repo.path(), format);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(loads, 3, "three layers loaded, no .idx");
    }
}

#[test]
fn packs_added_after_the_chain_are_searched() {
    let repo = chained_repo("sha1", 2);
    fast_import_blobs(repo.path(), 100, 99, "late");
    let (loads, problems) = check_all(repo.path(), "sha1");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(loads, 3, "two layers and the new pack's .idx");
}

/// Flip the lowest bit of the byte `from_end` bytes before the end of the middle layer of a three-layer chain;
/// returns that layer's path.
fn flip_in_middle_layer(repo: &Path, format: &str, from_end: usize) -> std::path::PathBuf {
    let pack_dir = objects_dir(repo).join("pack");
    let chain = read_chain(&pack_dir, format.parse().unwrap())
        .unwrap()
        .unwrap();
    let path = chain[1].path.clone();
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - from_end] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn broken_layer_falls_back_to_its_packs() {
    for format in FORMATS {
        let repo = chained_repo(format, 3);
        // Damage the middle layer's trailer: it no longer ends with the checksum it is named after.
        let middle = flip_in_middle_layer(repo.path(), format, 1);
        let (loads, problems) = check_all(repo.path(), format);
        assert!(
            matches!(&problems[..], [Problem::MultiPackIndexNotLoaded { path, error }]
                if path.ends_with(middle.file_name().unwrap())
                && matches!(**error, odb_index::Error::CorruptChain { .. })),
            "{problems:?}"
        );
        assert_eq!(
            loads,
            3 + 2,
            "three layers tried, the broken one's two packs load their .idx"
        );
    }
}

/// A layer with one bit flipped inside (its trailer still the checksum it is named after, so opening it passes):
/// the last object's offset, one byte off. Under `Options::midx_checksum(true)` the layer is hashed when it
/// loads and refused; its packs' own `.idx` files answer every object where git says.
#[test]
fn layer_with_a_flipped_bit_is_refused_under_midx_checksum() {
    let format = "sha1";
    let repo = chained_repo(format, 3);
    // git writes `OOFF` last: the byte before the trailer is the last object's offset's lowest byte.
    let middle = flip_in_middle_layer(repo.path(), format, 20 + 1);
    let (loads, problems) =
        check_all_with(repo.path(), format, Options::default().midx_checksum(true));
    assert!(
        matches!(&problems[..], [Problem::MultiPackIndexNotLoaded { path, .. }]
            if path.ends_with(middle.file_name().unwrap())
            && problems[0].to_string().contains("checksum mismatch")),
        "{problems:?}"
    );
    assert_eq!(loads, 3 + 2, "three layers, the refused one's two packs");
}

#[test]
fn unreadable_chain_is_a_problem() {
    let repo = chained_repo("sha1", 2);
    let chain_file = objects_dir(repo.path())
        .join("pack")
        .join(CHAIN_DIR)
        .join("multi-pack-index-chain");
    let before = all_objects(repo.path());
    std::fs::write(
        &chain_file,
        "not a checksum at all, but long enough to be read\n",
    )
    .unwrap();
    let (loads, problems) = check_all(repo.path(), "sha1");
    assert!(
        matches!(&problems[..], [Problem::MultiPackIndexIgnored { path, .. }] if path.ends_with("multi-pack-index-chain")),
        "{problems:?}"
    );
    assert_eq!(loads, 4, "every pack's own .idx");
    // git ignores it too and still lists every object.
    assert_eq!(all_objects(repo.path()), before);
}

#[test]
fn missing_layer_file() {
    let repo = chained_repo("sha1", 2);
    let pack_dir = objects_dir(repo.path()).join("pack");
    let chain = read_chain(&pack_dir, odb_index::HashKind::Sha1)
        .unwrap()
        .unwrap();
    std::fs::remove_file(&chain[0].path).unwrap();
    let (_, problems) = check_all(repo.path(), "sha1");
    assert!(
        matches!(&problems[..], [Problem::MultiPackIndexIgnored { path, .. }] if *path == chain[0].path),
        "{problems:?}"
    );
}

/// A layer written while the store is open: the next miss refreshes (the new packs changed the pack directory),
/// and the new layer answers for its packs.
#[test]
fn new_layer_is_picked_up_on_miss() {
    let repo = chained_repo("sha1", 1);
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let before: std::collections::HashSet<String> = all_objects(repo.path()).into_iter().collect();
    for id in &before {
        assert!(h.locate(&oid(id)).unwrap().is_some());
    }
    assert_eq!(store.metrics().index_loads, 1);
    fast_import_blobs(repo.path(), 100, 77, "new1");
    fast_import_blobs(repo.path(), 100, 78, "new2");
    git(repo.path(), &["multi-pack-index", "write", "--incremental"]);
    let t = truth(&store.objects_dirs(), "sha1");
    for id in all_objects(repo.path())
        .iter()
        .filter(|id| !before.contains(*id))
    {
        let Some(Location::Packed { pack, offset }) = h.locate(&oid(id)).unwrap() else {
            panic!("{id} not found after the new layer")
        };
        let at = (canon(&store.pack(pack).unwrap().pack_path), offset);
        assert!(t.packed[id].contains(&at));
    }
    assert_eq!(store.metrics().index_loads, 2, "the new layer, no .idx");
    assert!(store.problems().is_empty(), "{:?}", store.problems());
}

/// Issue 21: a chain file that is a symbolic link to `/dev/zero`, a FIFO, or longer than any chain, was read
/// with `std::fs::read` (forever, or until the writer came). Now it is refused at once as a problem naming it,
/// and every object is found through the packs' own indices, as git does.
#[test]
fn chain_file_that_is_a_device_a_fifo_or_huge_is_refused_at_once() {
    for what in ["dev-zero", "fifo", "huge"] {
        let repo = chained_repo("sha1", 2);
        let chain_file = objects_dir(repo.path())
            .join("pack")
            .join(CHAIN_DIR)
            .join("multi-pack-index-chain");
        let before = all_objects(repo.path());
        match what {
            "dev-zero" => {
                std::fs::remove_file(&chain_file).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &chain_file).unwrap();
            }
            "fifo" => odb_index_testkit::fifo_over(&chain_file),
            _ => {
                let f = std::fs::File::create(&chain_file).unwrap();
                f.set_len(odb_index::testing::MAX_CHAIN_FILE_LEN + 1)
                    .unwrap();
            }
        }
        // A guard against a hang only (the old read never returned): not a performance bound. (git itself
        // blocks on the FIFO, so it is not asked here.)
        let path = repo.path().to_owned();
        let ids = before.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let store = Store::open(&path, Options::default()).unwrap();
            let mut h = store.handle();
            let found = ids
                .iter()
                .filter(|id| h.locate(&oid(id)).unwrap().is_some())
                .count();
            tx.send((found, store.metrics().index_loads, store.problems()))
                .unwrap()
        });
        let (found, loads, problems) = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{what}: the store hangs on the chain file"));
        assert_eq!(found, before.len(), "{what}: every object found");
        assert!(
            matches!(&problems[..], [Problem::MultiPackIndexIgnored { path, .. }] if path.ends_with("multi-pack-index-chain")),
            "{what}: {problems:?}"
        );
        assert_eq!(loads, 4, "{what}: every pack's own .idx");
        if what == "fifo" {
            continue;
        }
        assert_eq!(
            all_objects(repo.path()),
            before,
            "{what}: git still lists every object"
        );
    }
}

/// Issue 32: a layer the chain directory's listing says is a regular file is opened without a `stat` of its path
/// first. One that is a FIFO, a device or a symbolic link is not listed so: it is `stat`ed first as before, so a
/// FIFO or device is refused at once as a problem naming it (never opened, never mapped: the packs it covered are
/// found through their own indices), and a link to a good layer is followed and used.
#[test]
fn layer_that_is_a_fifo_a_device_or_a_link_is_stated_first() {
    for what in ["fifo", "dev-zero", "link"] {
        let repo = chained_repo("sha1", 2);
        let pack_dir = objects_dir(repo.path()).join("pack");
        let chain = read_chain(&pack_dir, odb_index::HashKind::Sha1)
            .unwrap()
            .unwrap();
        let layer = chain[0].path.clone();
        let before = all_objects(repo.path());
        match what {
            "fifo" => odb_index_testkit::fifo_over(&layer),
            "dev-zero" => {
                std::fs::remove_file(&layer).unwrap();
                std::os::unix::fs::symlink("/dev/zero", &layer).unwrap();
            }
            _ => {
                let aside = repo.path().join("layer-aside.midx");
                std::fs::rename(&layer, &aside).unwrap();
                std::os::unix::fs::symlink(&aside, &layer).unwrap();
            }
        }
        // A guard against a hang only, not a performance bound.
        let path = repo.path().to_owned();
        let ids = before.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let store = Store::open(&path, Options::default()).unwrap();
            let mut h = store.handle();
            let found = ids
                .iter()
                .filter(|id| h.locate(&oid(id)).unwrap().is_some())
                .count();
            tx.send((found, store.metrics().index_loads, store.problems()))
                .unwrap()
        });
        let (found, loads, problems) = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{what}: the store hangs on the layer"));
        assert_eq!(found, before.len(), "{what}: every object found");
        if what == "link" {
            assert!(problems.is_empty(), "{what}: {problems:?}");
            assert_eq!(loads, 2, "{what}: both layers, no .idx");
        } else {
            assert!(
                matches!(&problems[..], [Problem::MultiPackIndexIgnored { path, .. }] if *path == layer),
                "{what}: {problems:?}"
            );
            assert_eq!(loads, 3, "{what}: the other layer and its two packs' .idx");
        }
    }
}

/// Issue 32: the packs a multi-pack-index covers are not `stat`ed when the pack directory is listed (git does not
/// look at them either), so a location's bound is their `.pack`'s length read on the first lookup that needs it.
/// An entry whose offset lies past its pack's end is still never answered (the object is found through the
/// pack's own index, the entry reported), every other entry of that pack is answered as git's index has it, and
/// the pack's `PackInfo` gives the `.pack`'s size and mtime as the file has them.
#[test]
fn a_covered_packs_length_is_read_when_a_location_needs_it() {
    use odb_index::HashKind;
    use odb_index::idx::PackIndex;
    use odb_index::midx::write::{PackEntries, write_midx};
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 50, 7, "a");
    fast_import_blobs(repo.path(), 50, 8, "b");
    let objects = objects_dir(repo.path());
    let mut packs = Vec::new();
    for idx_path in idx_files(&objects) {
        let idx = PackIndex::open(&idx_path, HashKind::Sha1).unwrap();
        packs.push(PackEntries {
            name: idx_path.file_name().unwrap().to_str().unwrap().to_owned(),
            entries: idx.iter().collect(),
        });
    }
    packs.sort_by(|a, b| a.name.cmp(&b.name));
    let pack_path = objects
        .join("pack")
        .join(packs[0].name.replace(".idx", ".pack"));
    let pack_len = std::fs::metadata(&pack_path).unwrap().len();
    // The first pack's first object: its offset moved past the pack's end.
    let (moved, right) = packs[0].entries[0];
    packs[0].entries[0].1 = pack_len + 100;
    let bytes = write_midx(1, HashKind::Sha1, &packs).unwrap();
    std::fs::write(objects.join("pack/multi-pack-index"), bytes).unwrap();

    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let Some(Location::Packed { pack, offset }) = h.locate(&moved).unwrap() else {
        panic!("{moved} not found")
    };
    assert_eq!(offset, right, "the pack's own index answers, not the entry");
    assert_eq!(store.pack_path(pack).unwrap(), pack_path);
    assert!(
        matches!(
            &store.problems()[..],
            [Problem::MultiPackIndexEntryWrong { .. }]
        ),
        "{:?}",
        store.problems()
    );
    for p in &packs {
        for (id, want) in &p.entries[1..] {
            let Some(Location::Packed { offset, .. }) = h.locate(id).unwrap() else {
                panic!("{id} not found")
            };
            assert_eq!(offset, *want, "{id}");
        }
    }
    let info = store.pack(pack).unwrap();
    let md = std::fs::metadata(&pack_path).unwrap();
    assert_eq!((info.size, info.mtime), (md.len(), md.modified().unwrap()));
}

/// Issue 38, 10: batches over an incremental chain whose layers each hold 65 536 ids and more (a batch warms the
/// search of the first layer from that size on): `locate_many` answers every object where `locate` does and
/// where git's `show-index` puts it, and misses absent ids, in batches of several sizes. Fails if the first
/// layer's warmed probe resumes the search of another layer.
#[test]
fn batches_over_a_chain_of_large_layers_answer_as_locate_and_git() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    for l in 0..2 {
        fast_import_blobs(p, 66_000, 70 + l, &format!("l{l}"));
        git(p, &["multi-pack-index", "write", "--incremental"]);
    }
    let pack_dir = objects_dir(p).join("pack");
    assert!(!pack_dir.join("multi-pack-index").exists());
    let chain = read_chain(&pack_dir, "sha1".parse().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(chain.len(), 2, "two layers");
    let store = Store::open(p, Options::default()).unwrap();
    let t = truth(&store.objects_dirs(), "sha1");
    let all = all_objects(p);
    assert!(all.len() > 2 * 65_536, "{} objects", all.len());
    let absent = absent_ids(all.len() / 4, 40, 38);
    // Objects of both layers in a shuffled order, one absent id after every fourth.
    let mut asks: Vec<ObjectId> = Vec::new();
    for (k, i) in (0..all.len())
        .map(|k| (k, k * 7919 % all.len()))
        .collect::<Vec<_>>()
    {
        asks.push(oid(&all[i]));
        if k % 4 == 3 {
            asks.push(oid(&absent[k / 4]));
        }
    }
    let mut one = store.handle();
    let want: Vec<Option<Location>> = asks.iter().map(|id| one.locate(id).unwrap()).collect();
    for (id, loc) in asks.iter().zip(&want) {
        match loc {
            Some(Location::Packed { pack, offset }) => {
                let at = (canon(&store.pack(*pack).unwrap().pack_path), *offset);
                assert!(t.packed[&id.to_string()].contains(&at), "{id} at {at:?}");
            }
            None => assert!(!t.packed.contains_key(&id.to_string()), "{id} missed"),
            other => panic!("{id}: {other:?}"),
        }
    }
    assert_eq!(store.metrics().index_loads, 2, "two layers loaded, no .idx");
    let mut many = store.handle();
    for size in [asks.len(), 4096, 17] {
        let mut out = Vec::new();
        for batch in asks.chunks(size) {
            many.locate_many(batch, &mut out).unwrap();
        }
        assert_eq!(out.len(), want.len());
        if let Some(k) = (0..want.len()).find(|&k| out[k] != want[k]) {
            panic!(
                "batches of {size}: {} is {:?}, not {:?}",
                asks[k], out[k], want[k]
            );
        }
    }
}
