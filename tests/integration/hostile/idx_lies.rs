//! Index files whose structure and checksums are valid but whose offsets lie, and packs that do not match
//! their index.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// An .idx whose offsets lie.
// ---------------------------------------------------------------------------------------------------------

/// A 32-bit or 64-bit offset past the end of the `.pack`, an offset at its trailing checksum, and offsets inside
/// its 12-byte header: the object is a typed error naming the index (never a location); every other object is
/// found where git's index put it; absent ids are misses. git dies on the past-the-end ones ("offset beyond end
/// of packfile") and answers the in-header ones with whatever it decodes there.
#[test]
fn idx_offsets_past_the_pack_or_in_its_header_are_errors_never_locations() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let kind = r.kind();
        let idx = r.idx(0);
        let original = std::fs::read(&idx).unwrap();
        let pack_len = std::fs::metadata(idx.with_extension("pack")).unwrap().len();
        let target = r.only_in(0)[0].clone();
        let pos = r.packs[&idx]
            .iter()
            .position(|(i, _)| *i == target)
            .unwrap();
        let h = kind.len() as u64;
        for (bad, past_end) in [
            (pack_len + 100, true),
            (1 << 33, true),
            (pack_len - h, true),
            (3, false),
            (0, false),
            (11, false),
        ] {
            replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, bad));
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(r.path(), Options::default().load(load)).unwrap();
                let mut hd = store.handle();
                let e = hd
                    .locate(&oid(&target))
                    .expect_err("a lying offset was answered");
                let problem = corrupt_index_problem(&e, &idx);
                if past_end {
                    assert_eq!(
                        problem,
                        IdxProblem::OffsetPastPackEnd {
                            entry: pos as u32,
                            offset: bad,
                            pack_len
                        },
                        "{format} {bad}"
                    );
                } else {
                    assert_eq!(
                        problem,
                        IdxProblem::OffsetInPackHeader {
                            entry: pos as u32,
                            offset: bad
                        }
                    );
                }
                r.assert_found(&store, &r.all_but(std::slice::from_ref(&target)));
                for id in r.absent() {
                    assert_eq!(hd.locate(&oid(&id)).unwrap(), None);
                }
            }
            if past_end {
                // git dies with "offset beyond end of packfile" past the end; at the trailer itself it decodes
                // the checksum as an object header (an error or a wrong answer, depending on its bytes).
                let (_, ok, err) = git_batch_check(r.path(), std::slice::from_ref(&target));
                if bad > pack_len {
                    assert!(
                        !ok && err.contains("offset beyond end of packfile"),
                        "git: {err}"
                    );
                }
            }
        }
        // verify (the full check, given the pack's length) reports it too.
        replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, pack_len + 1));
        let loaded = PackIndex::open(&idx, kind).unwrap();
        let len = loaded.check_pack(&idx.with_extension("pack")).unwrap();
        assert_eq!(len, pack_len);
        let e = loaded.with_pack_len(len).verify().unwrap_err();
        assert!(matches!(
            corrupt_index_problem(&e, &idx),
            IdxProblem::OffsetPastPackEnd { .. }
        ));
    }
}

/// The same lie when the object is also in a good pack: it is found there.
#[test]
fn object_behind_a_lying_offset_is_found_in_another_pack() {
    let r = Repo::new("sha1");
    let kind = r.kind();
    let idx = r.idx(0);
    // A second copy of pack 0 under another name (git would find the object in either).
    let copy_stem = r
        .pack_dir()
        .join(format!("pack-{}", "c0".repeat(kind.len())));
    std::fs::copy(idx.with_extension("pack"), copy_stem.with_extension("pack")).unwrap();
    std::fs::copy(&idx, copy_stem.with_extension("idx")).unwrap();
    let mut r = r;
    r.packs
        .insert(copy_stem.with_extension("idx"), r.packs[&idx].clone());
    let target = r.packs[&idx][0].0.clone();
    let original = std::fs::read(&idx).unwrap();
    replace_by_rename(&idx, &idx_with_offset(&original, kind, 0, 1 << 40));
    let store = Store::open(r.path(), Options::default()).unwrap();
    let loc = store
        .handle()
        .locate(&oid(&target))
        .unwrap()
        .expect("found in the copy");
    r.check_location(&store, &target, loc);
    let Location::Packed { pack, .. } = loc else {
        panic!("{loc:?}")
    };
    assert_eq!(
        store.pack_path(pack).unwrap(),
        copy_stem.with_extension("pack")
    );
    r.assert_found(&store, &r.all);
}

// ---------------------------------------------------------------------------------------------------------
// A pack that does not match its index.
// ---------------------------------------------------------------------------------------------------------

/// Another pack's `.idx` copied over this one, a `.pack` whose trailer is not the checksum its index records,
/// and a `.pack` too short to hold a header and a trailer: the index is a typed error naming both files; its
/// objects are looked up elsewhere (those of the copied index are found in their own pack, like git); a miss
/// is `Error::Incomplete` naming the index.
#[test]
fn packs_that_do_not_match_their_index_are_reported_and_their_objects_looked_up_elsewhere() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let (idx0, idx1) = (r.idx(0), r.idx(1));
        let (in0, in1) = (r.only_in(0), r.only_in(1));
        let original1 = std::fs::read(&idx1).unwrap();
        let pack0 = idx0.with_extension("pack");
        let original_pack0 = std::fs::read(&pack0).unwrap();
        let h = r.kind().len();

        // 1. Pack 0's index copied over pack 1's.
        std::fs::copy(&idx0, idx1.with_file_name("tmp_copy")).unwrap();
        std::fs::rename(idx1.with_file_name("tmp_copy"), &idx1).unwrap();
        // 2. Pack 0's trailer changed; 3. pack 0 cut to 12 + h - 1 bytes.
        let mut other_trailer = original_pack0.clone();
        *other_trailer.last_mut().unwrap() ^= 1;
        let short = original_pack0[..12 + h - 1].to_vec();
        for (case, pack0_bytes, bad_idx, bad_pack, lost) in [
            (
                "idx copied over",
                None,
                &idx1,
                idx1.with_extension("pack"),
                &in1,
            ),
            ("trailer", Some(&other_trailer), &idx0, pack0.clone(), &in0),
            ("short pack", Some(&short), &idx0, pack0.clone(), &in0),
        ] {
            if let Some(b) = pack0_bytes {
                std::fs::write(&idx1, &original1).unwrap();
                replace_by_rename(&pack0, b);
            }
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(r.path(), Options::default().load(load)).unwrap();
                r.assert_found(&store, &r.all_but(lost));
                let mut hd = store.handle();
                for id in lost.iter().chain(&r.absent()) {
                    let got = hd.locate(&oid(id));
                    let e = incomplete_for(&got, bad_idx);
                    let shown = e.to_string();
                    assert!(
                        shown.contains(bad_pack.to_str().unwrap()),
                        "{case}: {shown}"
                    );
                    match corrupt_index_problem(&e, bad_idx) {
                        IdxProblem::PackMismatch { pack, .. } if case != "short pack" => {
                            assert_eq!(pack, bad_pack)
                        }
                        IdxProblem::PackTooSmall { pack, len, .. } if case == "short pack" => {
                            assert_eq!((pack, len), (bad_pack.clone(), (12 + h - 1) as u64))
                        }
                        other => panic!("{case}: {other:?}"),
                    }
                }
            }
            // git agrees on what is found (for the trailer, it says "does not match index" too).
            let (lines, _, err) = git_batch_check(r.path(), lost);
            assert!(
                lines.iter().all(|l| l.ends_with(" missing")),
                "{case}: git {lines:?}"
            );
            if case == "trailer" {
                assert!(
                    err.contains("does not match index"),
                    "{case}: git said {err:?}"
                );
            }
            assert!(
                git_has(r.path(), &r.all_but(lost)).iter().all(|&p| p),
                "{case}"
            );
        }
    }
}

/// A `.pack` removed after listing, before its index was loaded: a vanished pack (the store refreshes and
/// searches again, and then, like git, ignores an index without its pack), not a mismatch.
#[test]
fn pack_removed_after_listing_is_a_vanished_pack_not_a_mismatch() {
    let r = Repo::new("sha1");
    let lost = r.only_in(0);
    let store = Store::open(r.path(), Options::default()).unwrap();
    let never = Store::open(r.path(), Options::default().refresh(RefreshMode::Never)).unwrap();
    std::fs::remove_file(r.idx(0).with_extension("pack")).unwrap();
    let mut hd = store.handle();
    for id in &lost {
        assert_eq!(hd.locate(&oid(id)).unwrap(), None, "{id}");
    }
    assert!(git_has(r.path(), &lost).iter().all(|&p| !p));
    r.assert_found(&store, &r.all_but(&lost));
    // Without refreshes the index cannot be used either: incomplete, naming it, for want of its pack.
    let got = never.handle().locate(&oid(&lost[0]));
    let e = incomplete_for(&got, &r.idx(0));
    assert!(
        got.unwrap_err().to_string().contains(".pack: "),
        "names the pack"
    );
    match &*e {
        Error::Io { path, source } => {
            assert_eq!(path, &r.idx(0).with_extension("pack"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}
