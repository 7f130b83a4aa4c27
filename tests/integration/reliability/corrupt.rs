//! Corrupt files, replaced the way git replaces files (new inode): reported, and the rest still answers.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// Corrupt files, replaced the way git replaces files (new inode): reported, and the rest still answers.
// ---------------------------------------------------------------------------------------------------------

#[test]
fn truncated_idx_is_reported_and_the_other_packs_still_answer() {
    for format in ["sha1", "sha256"] {
        let f = Fixture::new(format);
        let bad = f.idx(0);
        let lost = f.only_in(0);
        let bytes = std::fs::read(&bad).unwrap();
        for cut in [0, 7, 8 + 1024 - 1, bytes.len() / 2, bytes.len() - 1] {
            replace_by_rename(&bad, &bytes[..cut]);
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(f.path(), Options::default().load(load)).unwrap();
                let mut h = store.handle();
                for id in &f.all {
                    let r = h.locate(&oid(id));
                    if lost.contains(id) {
                        assert_incomplete_naming(&r, &bad);
                        let msg = r.unwrap_err().to_string();
                        assert!(msg.contains("corrupt pack index"), "{msg}");
                    } else {
                        let loc = r.unwrap_or_else(|e| panic!("{format} cut {cut}: {id}: {e}"));
                        check_location(&f, &store, id, loc.expect("present"));
                    }
                }
                for id in f.absent() {
                    assert_incomplete_naming(&h.locate(&oid(&id)), &bad);
                }
            }
        }
    }
}

#[test]
fn garbage_multi_pack_index_falls_back_to_the_idx_files() {
    let f = Fixture::new("sha1");
    git(f.path(), &["multi-pack-index", "write"]);
    let midx = f.pack_dir().join("multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let mut variants: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("text", b"this is not a multi-pack-index\n".repeat(40)),
        ("truncated header", good[..10].to_vec()),
        ("truncated in the chunk table", good[..30].to_vec()),
        ("half", good[..good.len() / 2].to_vec()),
    ];
    let mut bad_version = good.clone();
    bad_version[4] = 9;
    variants.push(("unknown version", bad_version));
    let mut bad_pnam = good.clone();
    let pnam = chunk_offset(&good, *b"PNAM");
    bad_pnam[pnam] = b'/';
    variants.push(("pack name with a slash", bad_pnam));
    for (what, bytes) in variants {
        replace_by_rename(&midx, &bytes);
        let store = open(&f);
        assert_serves_everything(&f, &store);
        let problems = store.problems();
        assert!(
            problems.iter().any(is_midx_problem),
            "{what}: not reported: {problems:?}"
        );
    }
}

/// Offset of the chunk `id` in a multi-pack-index (from its chunk table).
fn chunk_offset(midx: &[u8], id: [u8; 4]) -> usize {
    let chunks = usize::from(midx[6]);
    (0..chunks)
        .map(|i| 12 + 12 * i)
        .find(|&at| midx[at..at + 4] == id)
        .map(|at| u64::from_be_bytes(midx[at + 4..at + 12].try_into().unwrap()) as usize)
        .expect("chunk present")
}

/// The fallback itself, for two kinds of corrupt body and both load modes, and the report.
#[test]
fn multi_pack_index_with_a_corrupt_body_falls_back_to_the_idx_files() {
    let f = Fixture::new("sha1");
    git(f.path(), &["multi-pack-index", "write"]);
    let midx = f.pack_dir().join("multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let oidf = chunk_offset(&good, *b"OIDF");
    let ooff = chunk_offset(&good, *b"OOFF");
    let mut fanout = good.clone();
    fanout[oidf..oidf + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut pack_int = good.clone();
    pack_int[ooff..ooff + 4].copy_from_slice(&77u32.to_be_bytes());
    // The fanout is checked when the file is opened; an object's pack int id only when that object is looked up
    // (opening is O(packs), not O(objects)): that entry never gives a location; the object is answered from the
    // packs' own .idx files, the entry is reported naming the file, and every other object is served.
    let first = {
        let oidl = chunk_offset(&good, *b"OIDL");
        ObjectId::from_bytes(&good[oidl..oidl + 20]).unwrap()
    };
    replace_by_rename(&midx, &pack_int);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        let store = Store::open(f.path(), Options::default().load(load)).unwrap();
        let mut h = store.handle();
        let loc = h
            .locate(&first)
            .unwrap()
            .expect("found through the .idx files");
        check_location(&f, &store, &first.to_string(), loc);
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| matches!(
                p,
                Problem::MultiPackIndexEntryWrong { path, error }
                    if *path == midx
                        && matches!(**error, Error::CorruptMultiPackIndex { .. })
                        && error.to_string().contains("pack 77")
            )),
            "{problems:?}"
        );
        for id in f.all.iter().filter(|i| **i != first.to_string()) {
            let loc = h.locate(&oid(id)).unwrap().expect("present");
            check_location(&f, &store, id, loc);
        }
        for id in f.absent() {
            assert_eq!(h.locate(&oid(&id)).unwrap(), None);
        }
    }
    for (what, bytes) in [("fanout", fanout)] {
        replace_by_rename(&midx, &bytes);
        for load in [LoadMode::Mmap, LoadMode::Read] {
            let store = Store::open(f.path(), Options::default().load(load)).unwrap();
            assert_serves_everything(&f, &store);
            // Under `LoadMode::Read` the listing reads (and so validates) the whole file instead of mapping
            // it for its pack names, so the broken file is rejected there and never becomes a slot.
            let expected = if load == LoadMode::Read { 3 } else { 4 };
            assert_eq!(
                store.metrics().index_loads,
                expected,
                "{what}: the midx (unless rejected at listing) and the three .idx"
            );
            let problems = store.problems();
            assert!(
                problems.iter().any(is_midx_problem),
                "{what}: the broken multi-pack-index is not reported: {problems:?}"
            );
        }
    }
}

#[test]
fn idx_of_the_wrong_hash_kind_is_reported() {
    for (format, other) in [("sha1", HashKind::Sha256), ("sha256", HashKind::Sha1)] {
        let f = Fixture::new(format);
        // A well-formed index of the other hash kind, with a pack beside it.
        let entries: Vec<Entry> = (0..10u32)
            .map(|i| Entry {
                id: other.digest(format!("other {i}").as_bytes()),
                offset: 12 + u64::from(i) * 50,
                crc32: i,
            })
            .collect();
        let bytes = write_idx(2, other, &entries, &other.digest(b"pack")).unwrap();
        let stem = format!("pack-{}", "0f".repeat(f.kind().len()));
        let bad = f.pack_dir().join(format!("{stem}.idx"));
        std::fs::write(&bad, bytes).unwrap();
        std::fs::write(bad.with_extension("pack"), b"PACK").unwrap();
        let store = open(&f);
        let mut h = store.handle();
        for id in &f.all {
            let loc = h.locate(&oid(id)).unwrap().expect("present");
            check_location(&f, &store, id, loc);
        }
        for id in f.absent() {
            assert_incomplete_naming(&h.locate(&oid(&id)), &bad);
        }
        // An id of the other kind is refused, not searched.
        assert!(matches!(
            h.locate(&entries[0].id),
            Err(Error::WrongIdHashKind { .. })
        ));
    }
}

#[test]
fn multi_pack_index_of_the_wrong_hash_kind_is_reported() {
    let f = Fixture::new("sha1");
    let other = Fixture::new("sha256");
    git(other.path(), &["multi-pack-index", "write"]);
    let bytes = std::fs::read(other.pack_dir().join("multi-pack-index")).unwrap();
    std::fs::write(f.pack_dir().join("multi-pack-index"), bytes).unwrap();
    let store = open(&f);
    assert_serves_everything(&f, &store);
    let problems = store.problems();
    assert!(
        problems
            .iter()
            .any(|p| is_midx_problem(p) && p.to_string().contains("sha256")),
        "{problems:?}"
    );
}
