//! Properties of the multi-pack-index reader and writer: a written file answers like the union of its packs,
//! and no mutation of a file makes opening, looking up or iterating panic.

use std::collections::{BTreeMap, HashSet};

use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::midx::{MidxProblem, MultiPackIndex};
use odb_index::testing::MultiPackIndexExt as _;
use odb_index::{Error, HashKind, ObjectId};
use proptest::prelude::*;

/// A set of packs to write, and ids that are in none of them.
#[derive(Clone, Debug)]
struct Case {
    kind: HashKind,
    version: u8,
    packs: Vec<PackEntries>,
    absent: Vec<ObjectId>,
}

impl Case {
    /// For every id, the (pack name, offset) pairs of the packs listing it.
    fn model(&self) -> BTreeMap<ObjectId, Vec<(String, u64)>> {
        let mut m: BTreeMap<ObjectId, Vec<(String, u64)>> = BTreeMap::new();
        for p in &self.packs {
            for &(id, off) in &p.entries {
                m.entry(id).or_default().push((p.name.clone(), off));
            }
        }
        m
    }

    fn bytes(&self) -> Vec<u8> {
        write_midx(self.version, self.kind, &self.packs).expect("writer accepts the case")
    }
}

fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        // No object starts inside the 12-byte pack header.
        6 => 12u64..1 << 20,
        1 => (1u64 << 31) - 3..(1u64 << 31) + 3,
        1 => (1u64 << 32) - 3..(1u64 << 32) + 3,
        1 => 12u64..,
    ]
}

prop_compose! {
    fn case()(
        sha256 in any::<bool>(),
        version in 1u8..=2,
        num_packs in 0usize..=6,
        large in any::<bool>(),
        skew in any::<bool>(),
        raw in prop::collection::vec(
            (any::<[u8; 32]>(), 0u8..48, any::<u8>(), prop::array::uniform6(offset())),
            0..150,
        ),
        absent_raw in prop::collection::vec(any::<[u8; 32]>(), 0..40),
        name_seeds in prop::array::uniform6(any::<u32>()),
    ) -> Case {
        let kind = if sha256 { HashKind::Sha256 } else { HashKind::Sha1 };
        let h = kind.len();
        let mut packs: Vec<PackEntries> = (0..num_packs)
            .map(|i| PackEntries {
                name: format!("pack-{:08x}{i:032x}.idx", name_seeds[i]),
                entries: Vec::new(),
            })
            .collect();
        let mut seen = HashSet::new();
        let mut prev = [0u8; 32];
        for (bytes, share, mask, offs) in &raw {
            let mut b = *bytes;
            if skew {
                b[0] %= 4;
            }
            // Often share a long prefix with the previous id, so that the 8-byte prefixes compare equal.
            if *share < 24 {
                let n = 8 + usize::from(*share);
                b[..n].copy_from_slice(&prev[..n]);
            }
            prev = b;
            let id = ObjectId::from_bytes(&b[..h]).unwrap();
            if !seen.insert(id) {
                continue;
            }
            for (p, pack) in packs.iter_mut().enumerate() {
                if mask & (1 << p) != 0 {
                    let off = if large { offs[p] } else { (offs[p] & 0x7fff_ffff).max(12) };
                    pack.entries.push((id, off));
                }
            }
        }
        // Absent: random ids, and neighbours of present ones (last byte changed).
        let mut absent = Vec::new();
        for a in &absent_raw {
            absent.push(ObjectId::from_bytes(&a[..h]).unwrap());
        }
        for id in seen.iter().take(40) {
            let mut b = id.as_bytes().to_vec();
            b[h - 1] ^= 1;
            absent.push(ObjectId::from_bytes(&b).unwrap());
        }
        absent.retain(|id| {
            !packs.iter().any(|p| p.entries.iter().any(|e| e.0 == *id))
        });
        Case { kind, version, packs, absent }
    }
}

fn open(bytes: Vec<u8>, kind: HashKind) -> Result<MultiPackIndex, Error> {
    MultiPackIndex::from_data(bytes.into(), "prop/multi-pack-index".into(), kind)
}

/// Use everything a reader offers on `m`; it must not panic, whatever the file.
fn exercise(m: &MultiPackIndex, case: &Case) {
    let h = case.kind.len();
    for p in &case.packs {
        for (id, _) in &p.entries {
            if let Some((pack, _)) = m.lookup(id.as_bytes()) {
                assert!((pack as usize) < m.pack_names().len());
            }
        }
    }
    for id in &case.absent {
        let _ = m.lookup(id.as_bytes());
    }
    let _ = m.lookup(&[0u8; 32][..h]);
    let _ = m.lookup(&[0xffu8; 32][..h]);
    for (_, pack, _) in m.iter() {
        assert!((pack as usize) < m.pack_names().len());
    }
    let _ = m.verify();
}

/// Chunk id -> (start, end), from a file the writer made.
fn chunks(b: &[u8]) -> BTreeMap<[u8; 4], (usize, usize)> {
    let n = usize::from(b[6]);
    let row = |i: usize| {
        let at = 12 + 12 * i;
        let id: [u8; 4] = b[at..at + 4].try_into().unwrap();
        let off = u64::from_be_bytes(b[at + 4..at + 12].try_into().unwrap()) as usize;
        (id, off)
    };
    (0..n)
        .map(|i| (row(i).0, (row(i).1, row(i + 1).1)))
        .collect()
}

/// Recompute the trailer checksum after an edit, so that only the open-time checks can catch it.
fn reseal(b: &mut [u8], kind: HashKind) {
    let n = b.len() - kind.len();
    let sum = kind.digest(&b[..n]);
    b[n..].copy_from_slice(sum.as_bytes());
}

#[track_caller]
fn expect_problem(bytes: Vec<u8>, kind: HashKind, want: impl Fn(&MidxProblem) -> bool) {
    match open(bytes, kind) {
        Err(Error::CorruptMultiPackIndex { problem, .. }) => {
            assert!(want(&problem), "unexpected problem: {problem}")
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("a corrupted file was accepted"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn answers_like_the_union_of_its_packs(case in case()) {
        let m = open(case.bytes(), case.kind).unwrap();
        let model = case.model();
        prop_assert_eq!(m.len() as usize, model.len());
        prop_assert_eq!(m.is_empty(), model.is_empty());
        prop_assert_eq!(m.version(), u32::from(case.version));
        prop_assert_eq!(m.hash_kind(), case.kind);
        m.verify().unwrap();
        // Pack names: sorted in v1, in the given order in v2.
        let mut names: Vec<String> = case.packs.iter().map(|p| p.name.clone()).collect();
        if case.version == 1 {
            names.sort();
        }
        let got: Vec<&str> = m.pack_names().iter().map(|n| n.to_str().unwrap()).collect();
        prop_assert_eq!(got, names.iter().map(String::as_str).collect::<Vec<_>>());
        for (id, places) in &model {
            let found = m.lookup(id.as_bytes());
            prop_assert!(found.is_some(), "{} not found", id);
            let (pack, off) = found.unwrap();
            let name = m.pack_names()[pack as usize].to_str().unwrap();
            prop_assert!(
                places.iter().any(|(n, o)| n == name && *o == off),
                "{}: got {} at {}, packs say {:?}", id, name, off, places
            );
            // The writer keeps the copy in the pack with the lowest pack int id.
            let lowest = places.iter().map(|(n, _)| names.iter().position(|x| x == n).unwrap()).min();
            prop_assert_eq!(Some(pack as usize), lowest);
        }
        for id in &case.absent {
            prop_assert_eq!(m.lookup(id.as_bytes()), None, "absent {} found", id);
        }
        // Ids of the wrong length are never found.
        if let Some(id) = model.keys().next() {
            prop_assert_eq!(m.lookup(&id.as_bytes()[..19]), None);
        }
        let all: Vec<(ObjectId, u32, u64)> = m.iter().collect();
        prop_assert_eq!(all.len(), model.len());
        prop_assert!(all.iter().map(|e| e.0).eq(model.keys().copied()));
        for (id, pack, off) in &all {
            prop_assert_eq!(m.lookup(id.as_bytes()), Some((*pack, *off)));
        }
    }

    #[test]
    fn truncation_never_panics(case in case(), cut in any::<prop::sample::Index>()) {
        let mut b = case.bytes();
        let len = cut.index(b.len());
        b.truncate(len);
        if let Ok(m) = open(b, case.kind) {
            exercise(&m, &case);
            prop_assert!(m.verify().is_err(), "verify accepted a file truncated to {} bytes", len);
        }
    }

    #[test]
    fn flipped_bytes_never_panic_and_fail_verify(
        case in case(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
    ) {
        let mut b = case.bytes();
        let mut changed = HashSet::new();
        for (at, x) in &flips {
            let i = at.index(b.len());
            b[i] ^= x;
            changed.insert(i);
        }
        let original = case.bytes();
        if b == original {
            return Ok(()); // two flips cancelled out
        }
        if let Ok(m) = open(b, case.kind) {
            exercise(&m, &case);
            prop_assert!(m.verify().is_err(), "verify accepted flips at {:?}", changed);
        }
    }

    #[test]
    fn chunk_table_offsets_pointing_anywhere(case in case(), row in 0usize..6, off in any::<u64>()) {
        let mut b = case.bytes();
        let rows = usize::from(b[6]) + 1;
        let at = 12 + 12 * (row % rows) + 4;
        let off = if off % 2 == 0 { off % (b.len() as u64 * 2) } else { off };
        b[at..at + 8].copy_from_slice(&off.to_be_bytes());
        reseal(&mut b, case.kind);
        let outside = off > (b.len() - case.kind.len()) as u64;
        match open(b, case.kind) {
            Ok(m) => {
                prop_assert!(!outside, "accepted a chunk offset {} outside the file", off);
                exercise(&m, &case);
            }
            Err(Error::CorruptMultiPackIndex { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn inflated_counts_are_rejected(case in case(), extra in 1u32..=u32::MAX) {
        let b = case.bytes();
        let c = chunks(&b);
        // Pack count in the header.
        let mut v = b.clone();
        let packs = u32::from_be_bytes(v[8..12].try_into().unwrap());
        v[8..12].copy_from_slice(&packs.wrapping_add(extra).to_be_bytes());
        reseal(&mut v, case.kind);
        prop_assert!(open(v, case.kind).is_err());
        // Object count (fanout[255]), and every later entry of the fanout from some point on.
        let (f, _) = c[b"OIDF"];
        let mut v = b.clone();
        let count = u32::from_be_bytes(v[f + 1020..f + 1024].try_into().unwrap());
        let inflated = count.saturating_add(extra);
        if inflated != count {
            v[f + 1020..f + 1024].copy_from_slice(&inflated.to_be_bytes());
            reseal(&mut v, case.kind);
            expect_problem(v, case.kind, |p| matches!(p, MidxProblem::WrongChunkSize { .. }));
        }
    }

    /// The store's lookup with the bounds of the packs' lengths (`entry`) and the check that explains a bad
    /// entry (`entry_problem`) agree (`checks_agree`), for lengths around the header and the trailing checksum,
    /// and for absent ids.
    #[test]
    fn precomputed_bounds_answer_like_pack_lengths(
        case in case(),
        lens in prop::collection::vec(prop_oneof![0u64..80, any::<u64>(), 0u64..(1 << 34)], 0..6),
        absent in prop::collection::vec(any::<[u8; 32]>(), 0..8),
    ) {
        let m = open(case.bytes(), case.kind).unwrap();
        let h = case.kind.len();
        let ids: Vec<Vec<u8>> = m
            .iter()
            .map(|(id, _, _)| id.as_bytes().to_vec())
            .chain(absent.iter().map(|a| a[..h].to_vec()))
            .collect();
        for id in &ids {
            prop_assert!(m.checks_agree(id, &lens), "{:?} {:?}", id, lens);
        }
    }

    /// `check_bucket` accepts every bucket of a written file and names the first position out of order once two
    /// neighbours of one bucket are swapped (with their entries), the damage the store's miss confirmation finds.
    #[test]
    fn bucket_check_finds_neighbours_out_of_order(case in case()) {
        let b = case.bytes();
        let m = open(b.clone(), case.kind).unwrap();
        for first in 0..=255u8 {
            prop_assert!(m.check_bucket(first).is_ok(), "bucket {}", first);
        }
        let c = chunks(&b);
        let ((oidl, _), (ooff, _)) = (c[b"OIDL"], c[b"OOFF"]);
        let h = case.kind.len();
        let n = m.len() as usize;
        let Some(i) = (0..n.saturating_sub(1)).find(|&i| b[oidl + h * i] == b[oidl + h * (i + 1)]) else {
            return Ok(());
        };
        let mut v = b.clone();
        for (start, len) in [(oidl, h), (ooff, 8)] {
            let a = start + len * i;
            let (x, y) = (v[a..a + len].to_vec(), v[a + len..a + 2 * len].to_vec());
            v[a..a + len].copy_from_slice(&y);
            v[a + len..a + 2 * len].copy_from_slice(&x);
        }
        reseal(&mut v, case.kind);
        let m = open(v, case.kind).unwrap();
        let got = m.check_bucket(b[oidl + h * i]);
        prop_assert!(
            matches!(got, Err(MidxProblem::IdsOutOfOrder { object }) if object as usize == i + 1),
            "{:?}", got
        );
    }

    #[test]
    fn bad_pack_ids_and_large_offset_refs_are_errors_when_used(
        case in case(),
        pick in any::<prop::sample::Index>(),
        extra in prop_oneof![Just(0u32), 0u32..1000],
    ) {
        let b = case.bytes();
        let m = open(b.clone(), case.kind).unwrap();
        prop_assume!(!m.is_empty());
        let c = chunks(&b);
        let (ooff, _) = c[b"OOFF"];
        let (oidl, _) = c[b"OIDL"];
        let object = pick.index(m.len() as usize);
        let h = case.kind.len();
        let id = b[oidl + h * object..][..h].to_vec();
        let at = ooff + 8 * object;
        // Opens (nothing scans the entries), answers the damaged object with the error, and verify reports it.
        let check = |v: Vec<u8>, want: &dyn Fn(&MidxProblem) -> bool| -> Result<(), TestCaseError> {
            let m = open(v, case.kind).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let got = m.find(&id);
            prop_assert!(got.as_ref().is_err_and(want), "find: {:?}", got);
            prop_assert!(m.checks_agree(&id, &[]));
            prop_assert_eq!(m.lookup(&id), None);
            match m.verify() {
                Err(Error::CorruptMultiPackIndex { problem, .. }) => prop_assert!(want(&problem), "{}", problem),
                other => prop_assert!(false, "verify: {:?}", other),
            }
            Ok(())
        };
        // A pack id >= the number of packs.
        let mut v = b.clone();
        let packs = m.pack_names().len() as u32;
        v[at..at + 4].copy_from_slice(&packs.saturating_add(extra).to_be_bytes());
        reseal(&mut v, case.kind);
        check(v, &|p| matches!(
            p, MidxProblem::PackIdOutOfRange { object: o, .. } if *o as usize == object
        ))?;
        // A LOFF row past its end (only meaningful when there is a LOFF chunk).
        if let Some(&(ls, le)) = c.get(b"LOFF") {
            let rows = ((le - ls) / 8) as u32;
            let mut v = b.clone();
            let r = (rows + extra) | 0x8000_0000;
            v[at + 4..at + 8].copy_from_slice(&r.to_be_bytes());
            reseal(&mut v, case.kind);
            check(v, &|p| matches!(
                p, MidxProblem::LargeOffsetOutOfRange { object: o, .. } if *o as usize == object
            ))?;
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        sha256 in any::<bool>(),
        head in prop::collection::vec(any::<u8>(), 0..16),
        body in prop::collection::vec(any::<u8>(), 0..2048),
        keep_header in any::<bool>(),
    ) {
        let kind = if sha256 { HashKind::Sha256 } else { HashKind::Sha1 };
        let mut b = Vec::new();
        if keep_header {
            // A plausible header so that parsing gets past the first checks.
            b.extend_from_slice(b"MIDX");
            b.extend_from_slice(&[1 + head.first().copied().unwrap_or(0) % 2, kind.midx_id()]);
            b.push(head.get(1).copied().unwrap_or(4) % 8);
            b.push(0);
            b.extend_from_slice(&u32::from(head.get(2).copied().unwrap_or(1) % 4).to_be_bytes());
        } else {
            b.extend_from_slice(&head);
        }
        b.extend_from_slice(&body);
        let case = Case { kind, version: 1, packs: Vec::new(), absent: Vec::new() };
        if let Ok(m) = open(b, kind) {
            exercise(&m, &case);
            for i in 0..=255u8 {
                let mut id = [i; 32];
                id[1] = 0;
                let _ = m.lookup(&id[..kind.len()]);
            }
        }
    }
}
