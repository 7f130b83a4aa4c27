//! Multi-pack-indices whose entries lie (and the chunk helpers the other hostile tests use).

use super::*;

// ---------------------------------------------------------------------------------------------------------
// A multi-pack-index whose entries lie.
// ---------------------------------------------------------------------------------------------------------

/// Offset of chunk `id` in a multi-pack-index, and the offset of the next row's (its end).
pub(crate) fn chunk_range(midx: &[u8], id: &[u8; 4]) -> Option<(usize, usize)> {
    let chunks = usize::from(midx[6]);
    let at = |row: usize| {
        u64::from_be_bytes(
            midx[12 + 12 * row + 4..12 + 12 * row + 12]
                .try_into()
                .unwrap(),
        )
    };
    (0..chunks)
        .find(|&row| &midx[12 + 12 * row..12 + 12 * row + 4] == id)
        .map(|row| (at(row) as usize, at(row + 1) as usize))
}

/// `midx` with chunk `id` grown by `delta` bytes (zeros appended at its end) or shrunk by `-delta` (its last bytes
/// dropped), every chunk-table offset at or past its end (later chunks, the terminator) moved by `delta`, and the
/// trailing checksum recomputed: a file consistent in every way except that chunk's size.
pub(crate) fn resize_chunk(midx: &[u8], id: &[u8; 4], delta: isize, kind: HashKind) -> Vec<u8> {
    let (_, end) = chunk_range(midx, id).unwrap_or_else(|| panic!("no chunk {id:?}"));
    let trailer = midx.len() - kind.len();
    let mut v = if delta >= 0 {
        let mut v = midx[..end].to_vec();
        v.resize(end + delta as usize, 0);
        v.extend_from_slice(&midx[end..]);
        v
    } else {
        let mut v = midx[..end - delta.unsigned_abs()].to_vec();
        v.extend_from_slice(&midx[end..]);
        v
    };
    assert!(v.len() - kind.len() == (trailer as isize + delta) as usize);
    for row in 0..=usize::from(v[6]) {
        let at = 12 + 12 * row + 4;
        let off = u64::from_be_bytes(v[at..at + 8].try_into().unwrap());
        if off as usize >= end {
            v[at..at + 8].copy_from_slice(&((off as i64 + delta as i64) as u64).to_be_bytes());
        }
    }
    reseal(&mut v, kind);
    v
}

/// The hostile edits of a git-written multi-pack-index, each named.
fn lying_midx_files(good: &[u8], kind: HashKind, packs: usize) -> Vec<(&'static str, Vec<u8>)> {
    let h = kind.len();
    let (ooff, _) = chunk_range(good, b"OOFF").unwrap();
    let (oidl, _) = chunk_range(good, b"OIDL").unwrap();
    let (pnam, pnam_end) = chunk_range(good, b"PNAM").unwrap();
    let row = |b: &mut Vec<u8>, object: usize, pack: Option<u32>, off: Option<u32>| {
        if let Some(p) = pack {
            b[ooff + 8 * object..ooff + 8 * object + 4].copy_from_slice(&p.to_be_bytes());
        }
        if let Some(o) = off {
            b[ooff + 8 * object + 4..ooff + 8 * object + 8].copy_from_slice(&o.to_be_bytes());
        }
    };
    let field = |b: &[u8], object: usize, at: usize| {
        u32::from_be_bytes(
            b[ooff + 8 * object + at..ooff + 8 * object + at + 4]
                .try_into()
                .unwrap(),
        )
    };
    let mut out = Vec::new();
    let mut v = good.to_vec();
    let off = field(&v, 0, 4);
    row(&mut v, 0, None, Some(off + 1));
    out.push(("offset off by one", v));
    // Two packs' ids swapped, in every entry.
    let mut v = good.to_vec();
    let n = (chunk_range(good, b"OOFF").unwrap().1 - ooff) / 8;
    for o in 0..n {
        let p = field(&v, o, 0);
        let swapped = match p {
            0 => 1,
            1 => 0,
            p => p,
        };
        row(&mut v, o, Some(swapped), None);
    }
    out.push(("pack ids swapped", v));
    let mut v = good.to_vec();
    row(&mut v, 0, None, Some(0x8000_0005));
    out.push(("large-offset flag without a LOFF chunk", v));
    let mut v = good.to_vec();
    row(&mut v, 0, Some(packs as u32 + 3), None);
    out.push(("pack int id out of range", v));
    let mut v = good.to_vec();
    row(&mut v, 0, None, Some(5));
    out.push(("offset inside the pack header", v));
    // A pack name with no such pack: change one hex digit of the last name (names stay sorted in v1).
    let mut v = good.to_vec();
    let names_end = pnam + v[pnam..pnam_end].iter().rposition(|&b| b == b'x').unwrap();
    v[names_end - 6] = if v[names_end - 6] == b'f' { b'e' } else { b'f' };
    out.push(("a pack name with no such pack", v));
    // Out-of-order ids: swap two neighbours of one fanout bucket, with their entries (so every entry stays true
    // and only the order lies). A binary search may then miss one of them (git's does).
    let n = (chunk_range(good, b"OOFF").unwrap().1 - ooff) / 8;
    let pair = (0..n - 1)
        .find(|&i| good[oidl + h * i] == good[oidl + h * (i + 1)])
        .expect("two ids share a first byte (about 70 ids in 256 buckets)");
    let mut v = good.to_vec();
    for (start, len) in [(oidl, h), (ooff, 8)] {
        let a = start + len * pair;
        let (x, y) = (v[a..a + len].to_vec(), v[a + len..a + 2 * len].to_vec());
        v[a..a + len].copy_from_slice(&y);
        v[a + len..a + 2 * len].copy_from_slice(&x);
    }
    out.push(("ids out of order", v));
    for (_, v) in &mut out {
        reseal(v, kind);
    }
    out
}

/// `git multi-pack-index verify` and the library's verify against the packs' indices (what the command's
/// `verify` runs) both report every lie; lookups never report a location outside its pack or in a pack the
/// file does not name, and an entry that names no pack or lies outside its pack is looked up in the packs'
/// own indices.
#[test]
fn multi_pack_index_lies_are_caught_by_verify_and_never_located_outside_a_pack() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let kind = r.kind();
        git(r.path(), &["multi-pack-index", "write"]);
        let midx_path = r.pack_dir().join("multi-pack-index");
        let good = std::fs::read(&midx_path).unwrap();
        let indices: Vec<PackIndex> = r
            .packs
            .keys()
            .map(|p| {
                let i = PackIndex::open(p, kind).unwrap();
                let len = i.check_pack(&p.with_extension("pack")).unwrap();
                i.with_pack_len(len)
            })
            .collect();
        let refs: Vec<Option<&PackIndex>> = indices.iter().map(Some).collect();
        MultiPackIndex::open(&midx_path, kind)
            .unwrap()
            .verify_with_packs(&refs)
            .unwrap();
        for (case, bytes) in lying_midx_files(&good, kind, r.packs.len()) {
            replace_by_rename(&midx_path, &bytes);
            // git's verify fails.
            let st = git_cmd(r.path())
                .args(["multi-pack-index", "verify"])
                .output()
                .unwrap();
            assert!(!st.status.success(), "{format} {case}: git verify passed");
            // So does ours: the midx opens, and verify against the packs names the problem.
            let m =
                MultiPackIndex::open(&midx_path, kind).unwrap_or_else(|e| panic!("{case}: {e}"));
            let names = m.pack_names().to_vec();
            let packs: Vec<Option<&PackIndex>> = names
                .iter()
                .map(|n| {
                    indices
                        .iter()
                        .find(|i| i.path().file_name().unwrap() == n.as_os_str())
                })
                .collect();
            let e = m.verify_with_packs(&packs).expect_err(case);
            let Error::CorruptMultiPackIndex { path, problem } = &e else {
                panic!("{case}: {e:?}")
            };
            assert_eq!(path, &midx_path);
            let expected = match case {
                "offset off by one" => {
                    matches!(problem, MidxProblem::OffsetMismatch { object: 0, .. })
                }
                "pack ids swapped" => matches!(
                    problem,
                    MidxProblem::ObjectNotInPack { .. } | MidxProblem::OffsetMismatch { .. }
                ),
                "large-offset flag without a LOFF chunk" => {
                    matches!(problem, MidxProblem::OffsetPastPackEnd { object: 0, .. })
                }
                "pack int id out of range" => {
                    matches!(problem, MidxProblem::PackIdOutOfRange { object: 0, .. })
                }
                "offset inside the pack header" => {
                    matches!(
                        problem,
                        MidxProblem::OffsetInPackHeader {
                            object: 0,
                            offset: 5,
                            ..
                        }
                    )
                }
                "a pack name with no such pack" => {
                    matches!(problem, MidxProblem::PackMissing { .. })
                }
                "ids out of order" => matches!(problem, MidxProblem::IdsOutOfOrder { .. }),
                other => unreachable!("{other}"),
            };
            assert!(expected, "{format} {case}: {problem}");
            // Lookups: never a location outside its pack, never a pack the listing does not have.
            for (check, load) in [
                (MidxCheck::Bounds, LoadMode::Mmap),
                (MidxCheck::Bounds, LoadMode::Read),
                (MidxCheck::PackIndex, LoadMode::Mmap),
            ] {
                let store =
                    Store::open(r.path(), Options::default().load(load).midx_check(check)).unwrap();
                let mut hd = store.handle();
                // Entries that are in range may still lie (off by one, swapped): under the default check, only
                // verify, which reads the packs' indices, can tell. Every other location must be right, and
                // under `MidxCheck::PackIndex` every location.
                let in_range_lie = matches!(case, "offset off by one" | "pack ids swapped");
                let exact = check == MidxCheck::PackIndex || !in_range_lie;
                for id in r.all.iter().chain(&r.absent()) {
                    match hd.locate(&oid(id)) {
                        Ok(Some(Location::Packed { pack, offset })) => {
                            let pack = store.pack_path(pack).unwrap();
                            let len = std::fs::metadata(&pack).unwrap().len();
                            assert!(
                                offset >= 12 && offset < len - kind.len() as u64,
                                "{case}: {id} at {offset} of a {len}-byte pack"
                            );
                            if exact {
                                r.check_location(
                                    &store,
                                    id,
                                    Location::Packed {
                                        pack: store
                                            .packs()
                                            .into_iter()
                                            .find(|(_, p)| *p == pack.with_extension("idx"))
                                            .unwrap()
                                            .0,
                                        offset,
                                    },
                                );
                            }
                        }
                        Ok(Some(loc)) => r.check_location(&store, id, loc),
                        Ok(None) => assert!(
                            !r.all.contains(id) || case == "a pack name with no such pack",
                            "{case} {check:?}: {id} reported missing"
                        ),
                        // An entry that names no pack or lies outside its pack is answered from the packs' own
                        // indices: every object of a good pack is found.
                        Err(e) => panic!("{format} {case} {check:?}: {id}: {e}"),
                    }
                }
                // What was answered from the .idx files is reported, naming the multi-pack-index.
                let reported = store.problems().iter().any(|p| {
                    matches!(p, Problem::MultiPackIndexEntryWrong { path, .. } if *path == midx_path)
                });
                let expect_reported = match case {
                    "offset off by one" | "pack ids swapped" => Some(check == MidxCheck::PackIndex),
                    "large-offset flag without a LOFF chunk"
                    | "pack int id out of range"
                    | "offset inside the pack header" => Some(true),
                    // Reported when a search missed in the bucket (its order is then checked): the lookups
                    // above found every object either way.
                    "ids out of order" => None,
                    _ => Some(false),
                };
                if let Some(expected) = expect_reported {
                    assert_eq!(
                        reported,
                        expected,
                        "{format} {case} {check:?}: {:?}",
                        store.problems()
                    );
                }
            }
        }
    }
}

/// Under `MidxCheck::PackIndex`, a covered pack whose own `.idx` does not load cannot check the multi-pack-index's
/// entries for it: they are answered as written (as the default mode answers them), never turned into misses, and
/// the index that could not check them is reported.
#[test]
fn pack_index_check_with_an_unloadable_idx_answers_as_written() {
    let r = Repo::new("sha1");
    git(r.path(), &["multi-pack-index", "write"]);
    let midx_path = r.pack_dir().join("multi-pack-index");
    let victim = r.idx(0);
    let bytes = std::fs::read(&victim).unwrap();
    replace_by_rename(&victim, &bytes[..100]);
    let store = Store::open(
        r.path(),
        Options::default().midx_check(MidxCheck::PackIndex),
    )
    .unwrap();
    r.assert_found(&store, &r.all);
    let mut h = store.handle();
    for id in r.absent() {
        assert_eq!(h.locate(&oid(&id)).unwrap(), None);
    }
    let problems = store.problems();
    assert!(
        problems.iter().any(|p| matches!(
            p,
            Problem::MultiPackIndexEntryWrong { path, error }
                if *path == midx_path && error.to_string().contains(victim.to_str().unwrap())
        )),
        "{problems:?}"
    );
}
