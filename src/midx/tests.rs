// Over 600 lines: one malformed file per MidxProblem variant, built chunk by chunk by the same few helpers.
//! Unit tests: one malformed file per [`MidxProblem`] variant, built chunk by chunk.

use super::write::{PackEntries, WriteError, chunk_file, write_midx};
use super::*;
use crate::idx::PackIndex;

/// The lookups these tests compare (the other test targets have them from `testing::MultiPackIndexExt`).
impl MultiPackIndex {
    /// [`find`](Self::find) with a bad entry answered `None`.
    fn lookup(&self, id: &[u8]) -> Option<(u32, u64)> {
        self.find(id).ok().flatten()
    }

    /// The store's lookup with the bounds of `pack_lens`, a bad entry explained.
    fn find_in(&self, id: &[u8], pack_lens: &[u64]) -> Result<Option<(u32, u64)>, MidxProblem> {
        let bounds = self.offset_bounds(pack_lens);
        self.explain(
            self.find_entry(id, |p| bounds.get(p as usize).copied(), None),
            pack_lens,
        )
    }
}

/// A file made of a header and these chunks in this order, with a valid checksum: the writer's own
/// ([`write::chunk_file`](super::write)), given chunks of any content.
fn file(version: u8, kind: HashKind, num_packs: u32, chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
    let chunks: Vec<(ChunkId, &[u8])> = chunks
        .iter()
        .map(|(id, b)| (ChunkId(**id), &b[..]))
        .collect();
    chunk_file(version, kind, num_packs, &chunks)
}

fn id(first: u8, last: u8) -> Vec<u8> {
    let mut v = vec![0x55; 20];
    v[0] = first;
    v[19] = last;
    v
}

/// `OIDF`, `OIDL`, `OOFF` for sorted SHA-1 `ids` with (pack, raw 32-bit offset).
fn objects(rows: &[(Vec<u8>, u32, u32)]) -> [(&'static [u8; 4], Vec<u8>); 3] {
    let mut fan = Vec::new();
    for b in 0..=255u8 {
        let n = rows.iter().filter(|r| r.0[0] <= b).count() as u32;
        fan.extend_from_slice(&n.to_be_bytes());
    }
    let oidl: Vec<u8> = rows.iter().flat_map(|r| r.0.clone()).collect();
    let ooff: Vec<u8> = rows
        .iter()
        .flat_map(|r| [r.1.to_be_bytes(), r.2.to_be_bytes()].concat())
        .collect();
    [(b"OIDF", fan), (b"OIDL", oidl), (b"OOFF", ooff)]
}

fn basic_rows() -> Vec<(Vec<u8>, u32, u32)> {
    vec![(id(1, 0), 0, 12), (id(1, 1), 0, 40), (id(0xfe, 0), 0, 100)]
}

fn with_pnam(pnam: &[u8], rows: &[(Vec<u8>, u32, u32)]) -> Vec<(&'static [u8; 4], Vec<u8>)> {
    let mut c = vec![(b"PNAM", pnam.to_vec())];
    c.extend(objects(rows));
    c
}

fn open(bytes: Vec<u8>) -> Result<MultiPackIndex, Error> {
    MultiPackIndex::from_data(bytes.into(), "test/multi-pack-index".into(), HashKind::Sha1)
}

#[track_caller]
fn problem(bytes: Vec<u8>) -> MidxProblem {
    match open(bytes) {
        Err(Error::CorruptMultiPackIndex { path, problem }) => {
            assert_eq!(path, Path::new("test/multi-pack-index"));
            // Display names the file and never panics.
            let e = Error::CorruptMultiPackIndex {
                path,
                problem: problem.clone(),
            };
            assert!(
                e.to_string()
                    .starts_with("test/multi-pack-index: corrupt multi-pack-index: "),
                "{e}"
            );
            problem
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[track_caller]
fn verify_problem(bytes: Vec<u8>) -> MidxProblem {
    let m = open(bytes).expect("opens");
    match m.verify() {
        Err(Error::CorruptMultiPackIndex { problem, .. }) => problem,
        Err(e) => panic!("unexpected error {e}"),
        Ok(()) => panic!("verified"),
    }
}

fn good() -> Vec<u8> {
    file(
        1,
        HashKind::Sha1,
        1,
        &with_pnam(b"pack-a.idx\0\0", &basic_rows()),
    )
}

#[test]
fn hand_built_file_is_accepted() {
    let m = open(good()).unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m.pack_names(), ["pack-a.idx"]);
    assert_eq!(m.lookup(&id(1, 1)), Some((0, 40)));
    assert_eq!(m.lookup(&id(0xfe, 0)), Some((0, 100)));
    assert_eq!(m.lookup(&id(1, 2)), None);
    assert_eq!(m.lookup(&id(0xfe, 0)[..19]), None);
    m.verify().unwrap();
    assert_eq!(m.iter().count(), 3);
}

#[test]
fn too_small() {
    assert_eq!(
        problem(Vec::new()),
        MidxProblem::TooSmall { len: 0, min: 44 }
    );
    let mut v = good();
    v.truncate(43);
    assert_eq!(problem(v), MidxProblem::TooSmall { len: 43, min: 44 });
}

#[test]
fn bad_signature() {
    let mut v = good();
    v[0] = b'X';
    assert_eq!(problem(v), MidxProblem::BadSignature { found: *b"XIDX" });
}

#[test]
fn unsupported_version() {
    let mut v = good();
    v[4] = 3;
    assert_eq!(problem(v), MidxProblem::UnsupportedVersion { version: 3 });
}

#[test]
fn unknown_hash_version_and_wrong_kind() {
    let mut v = good();
    v[5] = 7;
    assert_eq!(problem(v), MidxProblem::UnknownHashVersion { id: 7 });
    match MultiPackIndex::from_data(good().into(), "x".into(), HashKind::Sha256) {
        Err(Error::WrongHashKind {
            expected: HashKind::Sha256,
            found: HashKind::Sha1,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn incremental_not_supported() {
    let mut v = good();
    v[7] = 1;
    assert_eq!(
        problem(v),
        MidxProblem::IncrementalNotSupported { bases: 1 }
    );
}

#[test]
fn chunk_table_truncated() {
    let mut v = good();
    v[6] = 200;
    assert!(matches!(
        problem(v),
        MidxProblem::ChunkTableTruncated { chunks: 200, .. }
    ));
}

#[test]
fn early_terminator() {
    let mut v = good();
    v[HEADER_LEN + 2 * TOC_ROW_LEN..][..4].copy_from_slice(&[0; 4]);
    assert_eq!(problem(v), MidxProblem::EarlyTerminator { row: 2 });
}

#[test]
fn missing_terminator() {
    let mut v = good();
    v[HEADER_LEN + 4 * TOC_ROW_LEN..][..4].copy_from_slice(b"ZZZZ");
    assert_eq!(
        problem(v),
        MidxProblem::MissingTerminator {
            found: ChunkId(*b"ZZZZ")
        }
    );
}

#[test]
fn duplicate_chunk() {
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c.push((b"OIDF", vec![0; 4]));
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::DuplicateChunk { id: CHUNK_OIDF }
    );
}

#[test]
fn chunk_overlaps_table() {
    let mut v = good();
    v[HEADER_LEN + 4..][..8].copy_from_slice(&8u64.to_be_bytes());
    assert_eq!(
        problem(v),
        MidxProblem::ChunkOverlapsTable {
            id: CHUNK_PNAM,
            offset: 8,
            table_end: 72
        }
    );
}

#[test]
fn chunk_out_of_bounds() {
    // The terminator's offset (end of the last chunk) points past the file.
    let mut v = good();
    let len = v.len() as u64;
    v[HEADER_LEN + 4 * TOC_ROW_LEN + 4..][..8].copy_from_slice(&u64::MAX.to_be_bytes());
    assert_eq!(
        problem(v),
        MidxProblem::ChunkOutOfBounds {
            id: CHUNK_OOFF,
            offset: len - 20 - 24,
            end: u64::MAX,
            trailer_start: len - 20
        }
    );
    // Decreasing offsets.
    let mut v = good();
    v[HEADER_LEN + 2 * TOC_ROW_LEN + 4..][..8].copy_from_slice(&80u64.to_be_bytes());
    assert!(matches!(
        problem(v),
        MidxProblem::ChunkOutOfBounds {
            id: CHUNK_OIDF,
            offset: 84,
            end: 80,
            ..
        }
    ));
}

#[test]
fn missing_chunk() {
    let c: Vec<_> = with_pnam(b"a\0\0\0", &basic_rows())
        .into_iter()
        .filter(|c| c.0 != b"OIDL")
        .collect();
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::MissingChunk { id: CHUNK_OIDL }
    );
}

#[test]
fn wrong_chunk_sizes() {
    // OOFF one row short.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c[3].1.truncate(16);
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::WrongChunkSize {
            id: CHUNK_OOFF,
            size: 16,
            expected: 24
        }
    );
    // Inflated count: fanout says 4 objects, OIDL holds 3.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c[1].1[255 * 4..].copy_from_slice(&4u32.to_be_bytes());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::WrongChunkSize {
            id: CHUNK_OIDL,
            size: 60,
            expected: 80
        }
    );
    // Huge count: never allocated, just rejected.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c[1].1[255 * 4..].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::WrongChunkSize { id: CHUNK_OIDL, .. }
    ));
    // Short fanout.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c[1].1.truncate(1020);
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::WrongChunkSize {
            id: CHUNK_OIDF,
            size: 1020,
            expected: 1024
        }
    );
    // LOFF not a multiple of 8.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c.push((b"LOFF", vec![0; 12]));
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::WrongChunkSize {
            id: CHUNK_LOFF,
            size: 12,
            expected: 8
        }
    );
}

#[test]
fn ridx_chunk_size_is_checked_at_open() {
    // One row per object (3 objects: 12 bytes) opens; a row short or a row more is refused.
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c.push((b"RIDX", vec![0; 12]));
    open(file(1, HashKind::Sha1, 1, &c)).unwrap();
    for len in [8u64, 16] {
        let mut c = with_pnam(b"a\0\0\0", &basic_rows());
        c.push((b"RIDX", vec![0; len as usize]));
        assert_eq!(
            problem(file(1, HashKind::Sha1, 1, &c)),
            MidxProblem::WrongChunkSize {
                id: CHUNK_RIDX,
                size: len,
                expected: 12
            }
        );
    }
}

#[test]
fn fanout_not_monotonic() {
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c[1].1[10 * 4..][..4].copy_from_slice(&3u32.to_be_bytes());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::FanoutNotMonotonic {
            index: 11,
            prev: 3,
            value: 2
        }
    );
}

#[test]
fn pack_names_truncated() {
    let c = with_pnam(b"a\0b\0", &basic_rows());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 3, &c)),
        MidxProblem::PackNamesTruncated {
            found: 2,
            expected: 3
        }
    );
    // Inflated pack count: no allocation of 4 billion names.
    assert!(matches!(
        problem(file(1, HashKind::Sha1, u32::MAX, &c)),
        MidxProblem::PackNamesTruncated { .. }
    ));
}

#[test]
fn pack_names_trailing_bytes() {
    let c = with_pnam(b"a\0\0\0\0\0", &basic_rows());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::PackNamesTrailingBytes { extra: 4 }
    );
    let c = with_pnam(b"a\0b\0", &basic_rows());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 1, &c)),
        MidxProblem::PackNamesTrailingBytes { extra: 2 }
    );
}

/// A pack name is its bytes, as git reads it: on Unix, `\xff` is a file name like any other,
/// and version 1's order is byte order (`\xff` after `a`).
#[cfg(unix)]
#[test]
fn pack_name_not_utf8_is_its_bytes() {
    use std::os::unix::ffi::OsStrExt as _;
    let c = with_pnam(b"a\0\xff\0", &basic_rows());
    let m = open(file(1, HashKind::Sha1, 2, &c)).unwrap();
    assert_eq!(m.pack_names()[1].as_bytes(), b"\xff");
    let c = with_pnam(b"\xff\0a\0", &basic_rows());
    assert!(matches!(
        problem(file(1, HashKind::Sha1, 2, &c)),
        MidxProblem::PackNamesOutOfOrder { pack: 1, .. }
    ));
}

#[test]
fn bad_pack_name() {
    for name in [&b"../x.idx"[..], b"", b"..", b"d/x.idx", b"d\\x"] {
        let mut pnam = name.to_vec();
        pnam.push(0);
        let c = with_pnam(&pnam, &basic_rows());
        let want = MidxProblem::BadPackName {
            pack: 0,
            name: String::from_utf8(name.to_vec()).unwrap().into(),
        };
        assert_eq!(problem(file(2, HashKind::Sha1, 1, &c)), want);
    }
}

#[test]
fn pack_names_out_of_order_in_v1_only() {
    let c = with_pnam(b"b\0a\0", &basic_rows());
    assert_eq!(
        problem(file(1, HashKind::Sha1, 2, &c)),
        MidxProblem::PackNamesOutOfOrder {
            pack: 1,
            prev: "b".into(),
            name: "a".into()
        }
    );
    let m = open(file(2, HashKind::Sha1, 2, &c)).unwrap();
    assert_eq!(m.pack_names(), ["b", "a"]);
    assert_eq!(m.version(), 2);
}

#[test]
fn duplicate_pack_name() {
    let c = with_pnam(b"a\0b\0a\0\0\0", &basic_rows());
    assert_eq!(
        problem(file(2, HashKind::Sha1, 3, &c)),
        MidxProblem::DuplicatePackName { name: "a".into() }
    );
    // In v1 the same file is out of order.
    assert!(matches!(
        problem(file(1, HashKind::Sha1, 3, &c)),
        MidxProblem::PackNamesOutOfOrder { pack: 2, .. }
    ));
}

/// What `find` says of object `object` (id `target`), which `open` accepted: an error that `lookup` turns
/// into a miss, `iter` skips, and `verify` reports (it is the only bad entry).
#[track_caller]
fn find_problem(m: &MultiPackIndex, target: &[u8]) -> MidxProblem {
    let p = m.find(target).expect_err("a bad entry was answered");
    assert_eq!(m.find_in(target, &[u64::MAX; 4]), Err(p.clone()));
    assert_eq!(m.lookup(target), None);
    // The store's lookup with the bounds of packs of unknown length (every offset past the header) rejects it
    // too, and the check that explains it agrees.
    let bounds = m.offset_bounds(&[]);
    let found = m.find_entry(target, |p| bounds.get(p as usize).copied(), None);
    assert!(matches!(found, MidxFound::Bad(_)), "{found:?} answered");
    assert!(m.checks_agree(target, &[]));
    assert!(m.iter().all(|(id, _, _)| id.as_bytes() != target));
    match m.verify() {
        Err(Error::CorruptMultiPackIndex { problem, .. }) => assert_eq!(problem, p),
        other => panic!("verify: {other:?}"),
    }
    p
}

#[test]
fn pack_id_out_of_range_is_found_when_used() {
    let mut rows = basic_rows();
    rows[2].1 = 1;
    let c = with_pnam(b"a\0\0\0", &rows);
    // Opening does not scan the entries; the good ones answer.
    let m = open(file(1, HashKind::Sha1, 1, &c)).unwrap();
    assert_eq!(m.find(&id(1, 0)), Ok(Some((0, 12))));
    assert_eq!(m.iter().count(), 2);
    assert_eq!(
        find_problem(&m, &id(0xfe, 0)),
        MidxProblem::PackIdOutOfRange {
            object: 2,
            pack: 1,
            packs: 1
        }
    );
    // No packs, some objects.
    let c = with_pnam(b"", &basic_rows());
    let m = open(file(1, HashKind::Sha1, 0, &c)).unwrap();
    assert_eq!(
        m.find(&id(1, 0)),
        Err(MidxProblem::PackIdOutOfRange {
            object: 0,
            pack: 0,
            packs: 0
        })
    );
    assert_eq!(m.iter().count(), 0);
}

#[test]
fn large_offsets() {
    let mut rows = basic_rows();
    rows[1].2 = 0x8000_0001;
    // Without LOFF the 32-bit value is the offset (git's `nth_midxed_offset`).
    let m = open(file(1, HashKind::Sha1, 1, &with_pnam(b"a\0\0\0", &rows))).unwrap();
    assert_eq!(m.lookup(&id(1, 1)), Some((0, 0x8000_0001)));
    // ... which a pack shorter than that does not hold.
    assert_eq!(
        m.find_in(&id(1, 1), &[1000]),
        Err(MidxProblem::OffsetPastPackEnd {
            object: 1,
            pack: 0,
            offset: 0x8000_0001,
            pack_len: 1000
        })
    );
    assert_eq!(m.find_in(&id(1, 0), &[1000]), Ok(Some((0, 12))));
    // With LOFF it is row 1 of it.
    let mut c = with_pnam(b"a\0\0\0", &rows);
    c.push((
        b"LOFF",
        [7u64.to_be_bytes(), (1u64 << 40).to_be_bytes()].concat(),
    ));
    let m = open(file(1, HashKind::Sha1, 1, &c)).unwrap();
    assert_eq!(m.lookup(&id(1, 1)), Some((0, 1 << 40)));
    assert_eq!(
        m.find_in(&id(1, 1), &[(1 << 40) + 21]),
        Ok(Some((0, 1 << 40)))
    );
    assert_eq!(
        m.find_in(&id(1, 1), &[(1 << 40) + 20]),
        Err(MidxProblem::OffsetPastPackEnd {
            object: 1,
            pack: 0,
            offset: 1 << 40,
            pack_len: (1 << 40) + 20
        })
    );
    // A reference past the end of LOFF: found when used.
    c.last_mut().unwrap().1.truncate(8);
    let m = open(file(1, HashKind::Sha1, 1, &c)).unwrap();
    assert_eq!(
        find_problem(&m, &id(1, 1)),
        MidxProblem::LargeOffsetOutOfRange {
            object: 1,
            row: 1,
            rows: 1
        }
    );
}

#[test]
fn offsets_inside_the_pack_header_are_errors() {
    for bad in [0, 3, 11] {
        let mut rows = basic_rows();
        rows[1].2 = bad;
        let m = open(file(1, HashKind::Sha1, 1, &with_pnam(b"a\0\0\0", &rows))).unwrap();
        assert_eq!(
            find_problem(&m, &id(1, 1)),
            MidxProblem::OffsetInPackHeader {
                object: 1,
                pack: 0,
                offset: u64::from(bad)
            }
        );
    }
}

/// Two packs as git would index them (`a` and `b`), their `.idx` files with pack lengths, and a
/// multi-pack-index that `edit` has tampered with.
fn packs_and_midx(
    edit: impl FnOnce(&mut Vec<(Vec<u8>, u32, u32)>, &mut Vec<(&'static [u8; 4], Vec<u8>)>),
) -> (MultiPackIndex, [PackIndex; 2]) {
    use crate::idx::write::{Entry, write_idx};
    let k = HashKind::Sha1;
    let oid = |v: &[u8]| ObjectId::from_bytes(v).unwrap();
    // Pack a: 1/0 at 12, fe/0 at 100; pack b: 1/1 at 12, 2/0 at 60. Each pack is 200 bytes long.
    let a = [(id(1, 0), 12u64), (id(0xfe, 0), 100)];
    let b = [(id(1, 1), 12u64), (id(2, 0), 60)];
    let idx = |entries: &[(Vec<u8>, u64)], name: &str| {
        let e: Vec<Entry> = entries
            .iter()
            .map(|(i, o)| Entry {
                id: oid(i),
                offset: *o,
                crc32: 0,
            })
            .collect();
        let bytes = write_idx(2, k, &e, &oid(&[9; 20])).unwrap();
        PackIndex::from_data(bytes.into(), name.into(), k)
            .unwrap()
            .with_pack_len(200)
    };
    let mut rows = vec![
        (id(1, 0), 0, 12),
        (id(1, 1), 1, 12),
        (id(2, 0), 1, 60),
        (id(0xfe, 0), 0, 100),
    ];
    let mut extra = Vec::new();
    edit(&mut rows, &mut extra);
    let mut c = with_pnam(b"pack-a.idx\0pack-b.idx\0\0\0", &rows);
    c.extend(extra);
    let m = open(file(1, k, 2, &c)).unwrap();
    (m, [idx(&a, "pack-a.idx"), idx(&b, "pack-b.idx")])
}

#[track_caller]
fn verify_packs_problem(m: &MultiPackIndex, packs: &[Option<&PackIndex>]) -> MidxProblem {
    match m.verify_with_packs(packs) {
        Err(e @ Error::CorruptMultiPackIndex { .. }) => {
            assert!(e.to_string().starts_with("test/multi-pack-index: "), "{e}");
            let Error::CorruptMultiPackIndex { problem, .. } = e else {
                unreachable!()
            };
            problem
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn verify_with_packs_checks_every_entry_against_the_packs_indices() {
    let oid = |v: &[u8]| ObjectId::from_bytes(v).unwrap();
    let (m, [a, b]) = packs_and_midx(|_, _| {});
    m.verify_with_packs(&[Some(&a), Some(&b)]).unwrap();
    // A pack name with no such pack.
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), None]),
        MidxProblem::PackMissing {
            pack: 1,
            name: "pack-b.idx".into()
        }
    );
    assert!(matches!(
        verify_packs_problem(&m, &[Some(&a)]),
        MidxProblem::PackMissing { pack: 1, .. }
    ));
    // An offset off by one: consistent in itself, wrong against the pack's index.
    let (m, [a, b]) = packs_and_midx(|rows, _| rows[2].2 += 1);
    m.verify().unwrap();
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), Some(&b)]),
        MidxProblem::OffsetMismatch {
            object: 2,
            id: oid(&id(2, 0)),
            pack: 1,
            offset: 61,
            idx_offset: 60
        }
    );
    // Two packs' ids swapped.
    let (m, [a, b]) = packs_and_midx(|rows, _| {
        for r in rows.iter_mut() {
            r.1 = 1 - r.1;
        }
    });
    m.verify().unwrap();
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), Some(&b)]),
        MidxProblem::ObjectNotInPack {
            object: 0,
            id: oid(&id(1, 0)),
            pack: 1
        }
    );
    // A large-offset flag with no LOFF chunk: a 32-bit offset past the 200-byte pack.
    let (m, [a, b]) = packs_and_midx(|rows, _| rows[3].2 = 0x8000_0000);
    m.verify().unwrap();
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), Some(&b)]),
        MidxProblem::OffsetPastPackEnd {
            object: 3,
            pack: 0,
            offset: 0x8000_0000,
            pack_len: 200
        }
    );
    // A large offset past its pack.
    let (m, [a, b]) = packs_and_midx(|rows, extra| {
        rows[3].2 = 0x8000_0000;
        extra.push((b"LOFF", (1u64 << 33).to_be_bytes().to_vec()));
    });
    m.verify().unwrap();
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), Some(&b)]),
        MidxProblem::OffsetPastPackEnd {
            object: 3,
            pack: 0,
            offset: 1 << 33,
            pack_len: 200
        }
    );
    // Out-of-order ids: found before the packs are consulted.
    let (m, [a, b]) = packs_and_midx(|rows, _| rows.swap(0, 1));
    assert_eq!(
        verify_packs_problem(&m, &[Some(&a), Some(&b)]),
        MidxProblem::IdsOutOfOrder { object: 1 }
    );
}

#[test]
fn checksum_mismatch() {
    let mut v = good();
    let n = v.len();
    v[n - 1] ^= 1;
    assert!(matches!(
        verify_problem(v),
        MidxProblem::ChecksumMismatch { .. }
    ));
    // A changed id breaks the checksum too.
    let mut v = good();
    let at = v.len() - 20 - 24 - 1;
    v[at] ^= 0x80;
    assert!(matches!(
        verify_problem(v),
        MidxProblem::ChecksumMismatch { .. }
    ));
}

#[test]
fn ids_out_of_order() {
    let rows = vec![(id(1, 1), 0, 12), (id(1, 0), 0, 40), (id(0xfe, 0), 0, 100)];
    let v = file(1, HashKind::Sha1, 1, &with_pnam(b"a\0\0\0", &rows));
    assert_eq!(verify_problem(v), MidxProblem::IdsOutOfOrder { object: 1 });
    let rows = vec![(id(1, 1), 0, 12), (id(1, 1), 0, 40)];
    let v = file(1, HashKind::Sha1, 1, &with_pnam(b"a\0\0\0", &rows));
    assert_eq!(verify_problem(v), MidxProblem::IdsOutOfOrder { object: 1 });
}

#[test]
fn id_not_in_fanout_bucket() {
    let rows = basic_rows();
    let mut c = with_pnam(b"a\0\0\0", &rows);
    // Claim the two ids starting with 0x01 start with 0x00.
    c[1].1[..4].copy_from_slice(&2u32.to_be_bytes());
    let v = file(1, HashKind::Sha1, 1, &c);
    assert_eq!(
        verify_problem(v),
        MidxProblem::IdNotInFanoutBucket { object: 0 }
    );
}

/// A `BTMP` chunk (v1 or v2 file) of the wrong size, or with a pack's bit range past the object
/// count, refuses the file at open (the packs' `.idx` files then answer); a right one is accepted.
#[test]
fn btmp_chunk_size_and_ranges_are_checked_at_open() {
    for version in [1u8, 2] {
        let with_btmp = |btmp: Vec<u8>| {
            let mut c = with_pnam(b"a\0\0\0", &basic_rows());
            c.insert(1, (b"BTMP", btmp));
            file(version, HashKind::Sha1, 1, &c)
        };
        let row = |pos: u32, nr: u32| [pos.to_be_bytes(), nr.to_be_bytes()].concat();
        // One pack, three objects.
        let m = open(with_btmp(row(0, 3))).unwrap();
        assert_eq!(m.lookup(&id(1, 0)), Some((0, 12)));
        assert!(open(with_btmp(row(u32::MAX, 0))).is_ok(), "v{version}");
        for short in [
            vec![],
            row(0, 3)[..4].to_vec(),
            [row(0, 3), row(0, 0)].concat(),
        ] {
            let size = short.len() as u64;
            assert_eq!(
                problem(with_btmp(short)),
                MidxProblem::WrongChunkSize {
                    id: CHUNK_BTMP,
                    size,
                    expected: 8
                },
                "v{version}"
            );
        }
        // Where a range lies depends on the layers below (a layer's bits follow theirs): opening checks its
        // length and the 2^32 bits, `check_bitmapped_packs` its place.
        let shifted = open(with_btmp(row(1, 3))).unwrap();
        let place = |m: &MultiPackIndex, base| match m.check_bitmapped_packs(base) {
            Err(Error::CorruptMultiPackIndex { problem, .. }) => Some(problem),
            Err(e) => panic!("{e}"),
            Ok(()) => None,
        };
        assert_eq!(
            place(&shifted, 0),
            Some(MidxProblem::BitmapRangeOutOfBounds {
                pack: 0,
                pos: 1,
                nr: 3,
                count: 3
            })
        );
        assert_eq!(place(&shifted, 1), None, "a layer over one object");
        assert_eq!(
            place(&shifted, 2),
            Some(MidxProblem::BitmapRangeOutsideLayer {
                pack: 0,
                pos: 1,
                nr: 3,
                first: 2,
                end: 5
            })
        );
        assert_eq!(place(&m, 0), None);
        for too_long in [row(0, 4), row(u32::MAX, 2), row(u32::MAX - 1, 3)] {
            assert!(
                matches!(
                    problem(with_btmp(too_long)),
                    MidxProblem::BitmapRangeOutOfBounds { .. }
                ),
                "v{version}"
            );
        }
        for last in [row(u32::MAX - 2, 3), row(u32::MAX, 1)] {
            assert!(open(with_btmp(last)).is_ok(), "the last bits of 2^32");
        }
    }
}

#[test]
fn unknown_chunks_are_skipped() {
    let mut c = with_pnam(b"a\0\0\0", &basic_rows());
    c.insert(1, (b"RIDX", vec![0; 12]));
    c.push((b"XTRA", vec![1, 2, 3]));
    let m = open(file(1, HashKind::Sha1, 1, &c)).unwrap();
    assert_eq!(m.lookup(&id(1, 0)), Some((0, 12)));
    m.verify().unwrap();
}

#[test]
fn display_of_every_problem_is_nonempty() {
    let oid = ObjectId::null(HashKind::Sha1);
    let c = ChunkId(*b"OIDF");
    let all = [
        MidxProblem::TooSmall { len: 1, min: 44 },
        MidxProblem::BadSignature { found: *b"XXXX" },
        MidxProblem::UnsupportedVersion { version: 9 },
        MidxProblem::UnknownHashVersion { id: 9 },
        MidxProblem::IncrementalNotSupported { bases: 1 },
        MidxProblem::ChunkTableTruncated {
            chunks: 1,
            table_end: 2,
            trailer_start: 1,
        },
        MidxProblem::EarlyTerminator { row: 0 },
        MidxProblem::BitmapRangeOutOfBounds {
            pack: 0,
            pos: 1,
            nr: 3,
            count: 3,
        },
        MidxProblem::BitmapRangeOutsideLayer {
            pack: 0,
            pos: 1,
            nr: 3,
            first: 2,
            end: 5,
        },
        MidxProblem::MissingTerminator {
            found: ChunkId([1, 2, 3, 4]),
        },
        MidxProblem::DuplicateChunk { id: c },
        MidxProblem::ChunkOverlapsTable {
            id: c,
            offset: 0,
            table_end: 1,
        },
        MidxProblem::ChunkOutOfBounds {
            id: c,
            offset: 0,
            end: 1,
            trailer_start: 0,
        },
        MidxProblem::MissingChunk { id: c },
        MidxProblem::WrongChunkSize {
            id: c,
            size: 0,
            expected: 1,
        },
        MidxProblem::FanoutNotMonotonic {
            index: 0,
            prev: 1,
            value: 0,
        },
        MidxProblem::PackNamesTruncated {
            found: 0,
            expected: 1,
        },
        MidxProblem::PackNamesTrailingBytes { extra: 1 },
        MidxProblem::PackNameNotUtf8 { pack: 0 },
        MidxProblem::BadPackName {
            pack: 0,
            name: "".into(),
        },
        MidxProblem::PackNamesOutOfOrder {
            pack: 1,
            prev: "b".into(),
            name: "a".into(),
        },
        MidxProblem::DuplicatePackName { name: "a".into() },
        MidxProblem::PackIdOutOfRange {
            object: 0,
            pack: 1,
            packs: 1,
        },
        MidxProblem::LargeOffsetOutOfRange {
            object: 0,
            row: 0,
            rows: 0,
        },
        MidxProblem::OffsetInPackHeader {
            object: 0,
            pack: 0,
            offset: 3,
        },
        MidxProblem::OffsetPastPackEnd {
            object: 0,
            pack: 0,
            offset: 3,
            pack_len: 1,
        },
        MidxProblem::PackMissing {
            pack: 0,
            name: "p".into(),
        },
        MidxProblem::ObjectNotInPack {
            object: 0,
            id: oid,
            pack: 0,
        },
        MidxProblem::OffsetMismatch {
            object: 0,
            id: oid,
            pack: 0,
            offset: 1,
            idx_offset: 2,
        },
        MidxProblem::ChecksumMismatch {
            stored: oid,
            computed: oid,
        },
        MidxProblem::IdsOutOfOrder { object: 0 },
        MidxProblem::IdNotInFanoutBucket { object: 0 },
    ];
    for p in all {
        assert!(!p.to_string().is_empty());
    }
    assert_eq!(ChunkId([1, 2, 3, 4]).to_string(), "0x01020304");
}

#[test]
fn read_pack_names_reads_only_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("multi-pack-index");
    // OOFF names a pack that does not exist: the entry is an error when used; the names read fine.
    let mut rows = basic_rows();
    rows[0].1 = 5;
    std::fs::write(
        &path,
        file(
            1,
            HashKind::Sha1,
            2,
            &with_pnam(b"pack-a.idx\0pack-b.idx\0\0\0", &rows),
        ),
    )
    .unwrap();
    assert_eq!(
        read_pack_names(&path, HashKind::Sha1).unwrap(),
        ["pack-a.idx", "pack-b.idx"]
    );
    let m = MultiPackIndex::open(&path, HashKind::Sha1).unwrap();
    assert!(matches!(
        m.find(&id(1, 0)),
        Err(MidxProblem::PackIdOutOfRange { pack: 5, .. })
    ));
    assert!(m.verify().is_err());
    match read_pack_names(&dir.path().join("missing"), HashKind::Sha1) {
        Err(Error::Io { path, .. }) => assert!(path.ends_with("missing")),
        other => panic!("{other:?}"),
    }
    std::fs::write(&path, good()).unwrap();
    for mode in [LoadMode::Mmap, LoadMode::Read] {
        let m = MultiPackIndex::open_with(&path, HashKind::Sha1, mode).unwrap();
        assert_eq!(m.path(), path);
        assert_eq!(m.lookup(&id(1, 0)), Some((0, 12)));
    }
}

#[test]
fn writer_errors() {
    let k = HashKind::Sha1;
    let a = ObjectId::from_bytes(&[1; 20]).unwrap();
    let p = |name: &str, entries: Vec<(ObjectId, u64)>| PackEntries {
        name: name.into(),
        entries,
    };
    assert_eq!(
        write_midx(3, k, &[]),
        Err(WriteError::UnsupportedVersion { version: 3 })
    );
    assert_eq!(
        write_midx(1, k, &[p("a/b", vec![])]),
        Err(WriteError::BadPackName { name: "a/b".into() })
    );
    assert_eq!(
        write_midx(2, k, &[p("x", vec![]), p("x", vec![])]),
        Err(WriteError::DuplicatePackName { name: "x".into() })
    );
    assert_eq!(
        write_midx(1, HashKind::Sha256, &[p("x", vec![(a, 1)])]),
        Err(WriteError::WrongIdKind {
            pack: "x".into(),
            id: a
        })
    );
    assert_eq!(
        write_midx(1, k, &[p("y", vec![]), p("x", vec![(a, 1), (a, 2)])]),
        Err(WriteError::DuplicateObjectInPack {
            pack: "x".into(),
            id: a
        })
    );
    // An empty file is valid.
    let m = open(write_midx(1, k, &[]).unwrap()).unwrap();
    assert!(m.is_empty());
    assert_eq!(m.lookup(&[1; 20]), None);
    m.verify().unwrap();
}

#[test]
fn writer_v2_keeps_pack_order_and_uses_loff_only_when_needed() {
    let k = HashKind::Sha1;
    let a = ObjectId::from_bytes(&[1; 20]).unwrap();
    let b = ObjectId::from_bytes(&[2; 20]).unwrap();
    let packs = [
        PackEntries {
            name: "z.idx".into(),
            entries: vec![(a, 0x8000_0000)],
        },
        PackEntries {
            name: "a.idx".into(),
            entries: vec![(a, 17), (b, 0xffff_ffff)],
        },
    ];
    let m = open(write_midx(2, k, &packs).unwrap()).unwrap();
    assert_eq!(m.pack_names(), ["z.idx", "a.idx"]);
    assert!(m.chunks.loff.is_none());
    assert_eq!(m.lookup(a.as_bytes()), Some((0, 0x8000_0000)));
    assert_eq!(m.lookup(b.as_bytes()), Some((1, 0xffff_ffff)));
    let m = open(write_midx(1, k, &packs).unwrap()).unwrap();
    assert_eq!(m.pack_names(), ["a.idx", "z.idx"]);
    assert_eq!(m.lookup(a.as_bytes()), Some((0, 17)));
    let mut packs = packs;
    packs[1]
        .entries
        .push((ObjectId::from_bytes(&[3; 20]).unwrap(), 1 << 32));
    let m = open(write_midx(1, k, &packs).unwrap()).unwrap();
    assert!(m.chunks.loff.is_some());
    assert_eq!(m.lookup(&[3; 20]), Some((0, 1 << 32)));
    assert_eq!(m.lookup(b.as_bytes()), Some((0, 0xffff_ffff)));
    m.verify().unwrap();
}
