//! Property tests for pack index files: round trips through the writer, both search algorithms, and
//! robustness against arbitrary and mutated files.

use std::collections::BTreeMap;

use odb_index::idx::write::{Entry, WriteError, write_idx};
use odb_index::idx::{IdxProblem, PackIndex};
use odb_index::testing::PackIndexExt as _;
use odb_index::{Error, HashKind, ObjectId};
use proptest::prelude::*;

const PATH: &str = "prop.idx";

/// A set of distinct ids of one kind with their offsets.
#[derive(Debug, Clone)]
struct IdSet {
    kind: HashKind,
    map: BTreeMap<ObjectId, u64>,
}

impl IdSet {
    fn entries(&self) -> Vec<Entry> {
        self.map
            .iter()
            .enumerate()
            .map(|(i, (&id, &offset))| Entry {
                id,
                offset,
                crc32: i as u32 ^ 0x5a5a,
            })
            .collect()
    }
}

fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 12u64..(1 << 31),
        1 => (1u64 << 31)..(1 << 32),
        1 => (1u64 << 32)..u64::MAX,
        1 => Just(u64::MAX),
    ]
}

/// Ids: random, or sharing a prefix of random length (up to all but the last byte), or all in one bucket;
/// sometimes with the all-zero and all-ff ids; sometimes none at all.
fn id_set(max: usize) -> impl Strategy<Value = IdSet> {
    (
        any::<bool>(),
        prop::collection::vec((any::<[u8; 32]>(), offset()), 0..max),
        prop_oneof![Just(0usize), 0usize..32],
        any::<[u8; 32]>(),
        prop::option::of(any::<u8>()),
        (
            any::<bool>(),
            any::<bool>(),
            offset(),
            offset(),
            prop::bool::weighted(0.9),
        ),
    )
        .prop_map(
            |(sha256, raw, prefix_len, prefix, bucket, (zero, ff, zoff, foff, small_first))| {
                let kind = if sha256 {
                    HashKind::Sha256
                } else {
                    HashKind::Sha1
                };
                let h = kind.len();
                let keep = prefix_len.min(h - 1);
                let mut map = BTreeMap::new();
                for (mut r, off) in raw {
                    r[..keep].copy_from_slice(&prefix[..keep]);
                    if let Some(b) = bucket {
                        r[0] = b;
                    }
                    map.insert(ObjectId::from_bytes(&r[..h]).unwrap(), off);
                }
                if zero {
                    map.insert(ObjectId::from_bytes(&[0u8; 32][..h]).unwrap(), zoff);
                }
                if ff {
                    map.insert(ObjectId::from_bytes(&[0xffu8; 32][..h]).unwrap(), foff);
                }
                // A real pack has an object at offset 12; without one, version 2 cannot hold the set.
                if small_first
                    && map.values().all(|&o| o >= 1 << 31)
                    && let Some(first) = map.values_mut().next()
                {
                    *first = 12;
                }
                IdSet { kind, map }
            },
        )
}

fn open(bytes: Vec<u8>, kind: HashKind) -> Result<PackIndex, Error> {
    PackIndex::from_data(bytes.into(), PATH.into(), kind)
}

/// Ids near `id`: the last byte and the first byte one up and one down, and the byte in the middle flipped.
fn neighbours(id: &ObjectId) -> Vec<ObjectId> {
    let b = id.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    for (pos, delta) in [
        (n - 1, 1u8),
        (n - 1, 255),
        (0, 1),
        (0, 255),
        (7, 1),
        (8, 255),
    ] {
        let mut v = b.to_vec();
        v[pos] = v[pos].wrapping_add(delta);
        out.push(ObjectId::from_bytes(&v).unwrap());
    }
    let mut v = b.to_vec();
    v[n / 2] ^= 0x80;
    out.push(ObjectId::from_bytes(&v).unwrap());
    out
}

/// Both searches agree with `expected` for `id`, and a position found names `id`.
fn check_lookup(
    idx: &PackIndex,
    id: &ObjectId,
    expected: Option<u64>,
) -> Result<(), TestCaseError> {
    let b = id.as_bytes();
    prop_assert_eq!(idx.lookup(b), expected, "interpolated lookup of {}", id);
    prop_assert_eq!(idx.lookup_binary(b), expected, "binary lookup of {}", id);
    prop_assert_eq!(idx.lookup_id(id), expected);
    let pos = idx.position(b);
    prop_assert_eq!(pos.is_some(), expected.is_some());
    if let Some(p) = pos {
        prop_assert_eq!(idx.id_at(p), Some(b));
        prop_assert_eq!(idx.offset_at(p), expected);
    }
    Ok(())
}

/// On any index that opened: lookups never panic and never name the wrong entry; the two searches agree
/// when the ids are sorted.
fn probe_any(idx: &PackIndex, ids: &[ObjectId]) -> Result<(), TestCaseError> {
    for id in ids {
        for q in std::iter::once(*id).chain(neighbours(id)) {
            let b = q.as_bytes();
            for pos in [idx.position(b), idx.position_binary(b)]
                .into_iter()
                .flatten()
            {
                prop_assert_eq!(idx.id_at(pos), Some(b), "a lookup named the wrong entry");
                prop_assert!(idx.checked_offset_at(pos).is_some());
            }
            // Found exactly when listed with an offset that can be right; otherwise `find` says why.
            let checked = idx.position(b).and_then(|p| idx.checked_offset_at(p));
            prop_assert_eq!(idx.find(b), checked.clone().transpose());
            prop_assert_eq!(idx.lookup(b), checked.and_then(Result::ok));
            if let Some(off) = idx.lookup(b) {
                prop_assert!(off >= 12, "an offset inside the pack header was answered");
            }
        }
    }
    // Entries whose 64-bit reference lies outside the table (checked when used, not at open) are skipped.
    let mut listed = Vec::new();
    for (id, off) in idx.iter() {
        listed.push((id, off));
    }
    let mut expected = Vec::new();
    for i in 0..idx.len() {
        let _ = idx.crc32_at(i);
        if let (Some(id), Some(off)) = (idx.id_at(i), idx.offset_at(i)) {
            expected.push((ObjectId::from_bytes(id).unwrap(), off));
        }
    }
    prop_assert_eq!(listed, expected, "iter() disagrees with id_at/offset_at");
    let _ = (idx.pack_checksum(), idx.index_checksum());
    Ok(())
}

/// Write `set` as `version`, or `None` if the version cannot hold it (checked to be the writer's reason).
fn write(set: &IdSet, version: u32) -> Result<Option<Vec<u8>>, TestCaseError> {
    let pack = set.kind.digest(b"pack");
    match write_idx(version, set.kind, &set.entries(), &pack) {
        Ok(b) => Ok(Some(b)),
        Err(WriteError::OffsetTooLarge {
            offset,
            version: 1,
            id,
        }) => {
            prop_assert_eq!(version, 1);
            prop_assert!(offset > u64::from(u32::MAX));
            prop_assert_eq!(set.map.get(&id), Some(&offset));
            Ok(None)
        }
        Err(WriteError::NoSmallOffset) => {
            prop_assert_eq!(version, 2);
            prop_assert!(!set.map.is_empty() && set.map.values().all(|&o| o >= 1 << 31));
            Ok(None)
        }
        Err(e) => Err(TestCaseError::fail(format!("writer failed: {e}"))),
    }
}

/// `set` with every offset reduced to 32 bits, which version 1 can hold.
fn small_offsets(set: &IdSet) -> IdSet {
    IdSet {
        kind: set.kind,
        map: set
            .map
            .iter()
            .map(|(&k, &v)| (k, v & 0xffff_ffff))
            .collect(),
    }
}

fn check_roundtrip(set: &IdSet, version: u32, others: &[[u8; 32]]) -> Result<(), TestCaseError> {
    let Some(bytes) = write(set, version)? else {
        return Ok(());
    };
    let idx = open(bytes, set.kind).map_err(|e| TestCaseError::fail(e.to_string()))?;
    idx.verify()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(idx.version(), version);
    prop_assert_eq!(idx.hash_kind(), set.kind);
    prop_assert_eq!(idx.len() as usize, set.map.len());
    prop_assert_eq!(idx.is_empty(), set.map.is_empty());
    prop_assert_eq!(idx.pack_checksum(), set.kind.digest(b"pack"));
    for (i, (id, &off)) in set.map.iter().enumerate() {
        check_lookup(&idx, id, Some(off))?;
        prop_assert_eq!(idx.position(id.as_bytes()), Some(i as u32));
        let crc = if version == 2 {
            Some(i as u32 ^ 0x5a5a)
        } else {
            None
        };
        prop_assert_eq!(idx.crc32_at(i as u32), crc);
        for q in neighbours(id) {
            check_lookup(&idx, &q, set.map.get(&q).copied())?;
        }
    }
    for o in others {
        let q = ObjectId::from_bytes(&o[..set.kind.len()]).unwrap();
        check_lookup(&idx, &q, set.map.get(&q).copied())?;
    }
    let listed: Vec<(ObjectId, u64)> = idx.iter().collect();
    let expected: Vec<(ObjectId, u64)> = set.map.iter().map(|(&k, &v)| (k, v)).collect();
    prop_assert_eq!(listed, expected);
    prop_assert_eq!(idx.id_at(idx.len()), None);
    prop_assert_eq!(idx.offset_at(idx.len()), None);
    Ok(())
}

/// How to damage a valid file.
#[derive(Debug, Clone)]
enum Mutation {
    /// Keep the first `len % file length` bytes.
    Truncate(usize),
    /// XOR the byte at `pos % file length` with a non-zero value.
    Flip(usize, u8),
    /// Overwrite fan-out entry `bucket` with `value`.
    SetFanout(u8, u32),
    /// Add `delta` to the total count (fan-out entry 255).
    InflateCount(u32),
    /// Make entry `entry % len` (v2) refer to 64-bit offset `large count + extra`.
    LargeRefPastTable(usize, u32),
    /// Append bytes.
    Append(Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1u8..=255).prop_map(|(p, x)| Mutation::Flip(p, x)),
        (any::<u8>(), any::<u32>()).prop_map(|(b, v)| Mutation::SetFanout(b, v)),
        (1u32..1_000_000).prop_map(Mutation::InflateCount),
        (any::<usize>(), 0u32..1000).prop_map(|(e, x)| Mutation::LargeRefPastTable(e, x)),
        prop::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Append),
    ]
}

/// Apply `m`; returns whether the result must fail to open.
fn mutate(bytes: &mut Vec<u8>, m: &Mutation, version: u32, set: &IdSet) -> bool {
    let fanout_at = if version == 2 { 8 } else { 0 };
    if bytes.len() < fanout_at + 1024
        && !matches!(
            m,
            Mutation::Truncate(_) | Mutation::Flip(..) | Mutation::Append(_)
        )
    {
        // An earlier truncation removed the table this mutation edits.
        return false;
    }
    let fan =
        |b: &[u8], i: usize| u32::from_be_bytes(b[fanout_at + 4 * i..][..4].try_into().unwrap());
    match m {
        Mutation::Truncate(n) => {
            bytes.truncate(n % bytes.len());
            // A v2 file may lose whole 8-byte rows of its large-offset table and keep a size git's
            // `check_packed_git_idx` accepts (min + a multiple of 8): it opens, and the entries that refer to the
            // lost rows are errors when used (`probe_any` checks every answer). Any other length must fail.
            let h = set.kind.len();
            let min = 8 + 1024 + set.map.len() * (h + 8) + 2 * h;
            version == 1 || bytes.len() < min || !(bytes.len() - min).is_multiple_of(8)
        }
        Mutation::Flip(p, x) => {
            let p = p % bytes.len();
            bytes[p] ^= x;
            false
        }
        Mutation::SetFanout(b, v) => {
            let i = usize::from(*b);
            let before = if i == 0 { 0 } else { fan(bytes, i - 1) };
            let after = if i == 255 {
                None
            } else {
                Some(fan(bytes, i + 1))
            };
            let old = fan(bytes, i);
            bytes[fanout_at + 4 * i..][..4].copy_from_slice(&v.to_be_bytes());
            // Non-monotonic, or a changed total: the file cannot open.
            // (A smaller total in a v2 file may still add up, as some other layout.)
            *v < before
                || after.is_some_and(|a| *v > a)
                || (i == 255 && (*v > old || (version == 1 && *v != old)))
        }
        Mutation::InflateCount(d) => {
            let total = fan(bytes, 255).saturating_add(*d);
            bytes[fanout_at + 1020..][..4].copy_from_slice(&total.to_be_bytes());
            true
        }
        Mutation::LargeRefPastTable(e, extra) => {
            if version != 2 || set.map.is_empty() {
                return false;
            }
            let h = set.kind.len();
            let n = set.map.len();
            let offsets_at = 8 + 1024 + n * (h + 4);
            let Some(large) = bytes.len().checked_sub(offsets_at + 4 * n + 2 * h) else {
                return false;
            };
            let word = 0x8000_0000u32 | (large as u32 / 8 + extra);
            bytes[offsets_at + 4 * (e % n)..][..4].copy_from_slice(&word.to_be_bytes());
            // Checked when the entry is used (and by verify), not at open.
            false
        }
        Mutation::Append(extra) => {
            bytes.extend_from_slice(extra);
            // v1 sizes are exact; v2 may accept whole 64-bit offsets that nothing refers to, but then only
            // if the length is a multiple of 8 and within bounds.
            version == 1 || extra.len() % 8 != 0
        }
    }
}

/// A structurally valid file (monotonic fan-out, right size, in-range 64-bit references) with random ids,
/// CRCs and offsets: opens, but its ids are in no particular order.
fn random_structured() -> impl Strategy<Value = (HashKind, u32, Vec<u8>)> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(0u8..=255, 0..40),
        0usize..4,
    )
        .prop_flat_map(|(sha256, v1, firsts, large)| {
            let kind = if sha256 {
                HashKind::Sha256
            } else {
                HashKind::Sha1
            };
            let n = firsts.len();
            let large = if v1 || n == 0 { 0 } else { large.min(n - 1) };
            let body = if v1 {
                n * (kind.len() + 4)
            } else {
                n * (kind.len() + 8) + 8 * large
            };
            let words = prop::collection::vec(any::<u32>(), n);
            (
                Just((kind, v1, firsts, large)),
                prop::collection::vec(any::<u8>(), body + 2 * kind.len()),
                words,
            )
        })
        .prop_map(|((kind, v1, mut firsts, large), mut body, words)| {
            firsts.sort_unstable();
            let mut fanout = [0u32; 256];
            for &f in &firsts {
                fanout[usize::from(f)] += 1;
            }
            let mut out = Vec::new();
            if !v1 {
                out.extend_from_slice(b"\xfftOc\0\0\0\x02");
            }
            let mut total = 0u32;
            for c in fanout {
                total += c;
                out.extend_from_slice(&total.to_be_bytes());
            }
            let n = firsts.len();
            if !v1 {
                // Make every 32-bit offset either small or a valid 64-bit reference.
                let at = n * (kind.len() + 4);
                for (i, w) in words.iter().enumerate() {
                    let w = if large > 0 && w & 0x8000_0000 != 0 {
                        0x8000_0000 | (w % large as u32)
                    } else {
                        w & 0x7fff_ffff
                    };
                    body[at + 4 * i..][..4].copy_from_slice(&w.to_be_bytes());
                }
            }
            out.extend_from_slice(&body);
            (kind, if v1 { 1 } else { 2 }, out)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn roundtrip_v1_v2(set in id_set(200), others in prop::collection::vec(any::<[u8; 32]>(), 0..50)) {
        check_roundtrip(&set, 2, &others)?;
        let v1_fits = set.map.values().all(|&o| o <= u64::from(u32::MAX));
        let v1 = write(&set, 1)?;
        prop_assert_eq!(v1.is_some(), v1_fits, "v1 writer must reject exactly the offsets >= 2^32");
        check_roundtrip(&set, 1, &others)?;
        check_roundtrip(&small_offsets(&set), 1, &others)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        sha256 in any::<bool>(),
        header in any::<bool>(),
        mut bytes in prop::collection::vec(any::<u8>(), 0..3000),
        probes in prop::collection::vec(any::<[u8; 32]>(), 1..20),
    ) {
        let kind = if sha256 { HashKind::Sha256 } else { HashKind::Sha1 };
        if header && bytes.len() >= 8 {
            bytes[..8].copy_from_slice(b"\xfftOc\0\0\0\x02");
        }
        if let Ok(idx) = open(bytes, kind) {
            let ids: Vec<_> = probes.iter().map(|p| ObjectId::from_bytes(&p[..kind.len()]).unwrap()).collect();
            probe_any(&idx, &ids)?;
            let _ = idx.verify();
        }
    }

    #[test]
    fn structured_random_files((kind, version, bytes) in random_structured(),
                               probes in prop::collection::vec(any::<[u8; 32]>(), 1..20)) {
        let idx = open(bytes, kind).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(idx.version(), version);
        let mut ids: Vec<_> = idx.iter().map(|(id, _)| id).collect();
        ids.extend(probes.iter().map(|p| ObjectId::from_bytes(&p[..kind.len()]).unwrap()));
        probe_any(&idx, &ids)?;
        if idx.verify().is_ok() {
            // Sorted after all (e.g. at most one id per bucket): then every id must be found, by both.
            for (id, off) in idx.iter() {
                check_lookup(&idx, &id, Some(off))?;
            }
        }
    }

    #[test]
    fn mutated_files(set in id_set(200), version in 1u32..=2,
                     mutations in prop::collection::vec(mutation(), 1..4)) {
        let set = if version == 1 { small_offsets(&set) } else { set };
        let Some(original) = write(&set, version)? else { return Ok(()) };
        let mut bytes = original.clone();
        let mut must_fail = false;
        let mut flipped = false;
        for m in &mutations {
            if bytes.is_empty() {
                break;
            }
            let before = bytes.clone();
            // Only the first structural damage is sure to be seen: later mutations may undo it.
            let fails = mutate(&mut bytes, m, version, &set);
            must_fail |= fails && mutations.len() == 1;
            flipped |= matches!(m, Mutation::Flip(..)) && bytes != before;
        }
        let ids: Vec<ObjectId> = set.map.keys().copied().collect();
        match open(bytes.clone(), set.kind) {
            Err(e) => {
                prop_assert!(matches!(e, Error::CorruptIndex { .. }), "{}", e);
                prop_assert!(e.to_string().starts_with(PATH));
            }
            Ok(idx) => {
                prop_assert!(!must_fail, "opened a file damaged by {:?}", mutations);
                probe_any(&idx, &ids)?;
                if let [Mutation::LargeRefPastTable(e, _)] = mutations[..]
                    && bytes != original
                {
                    // The damaged entry is an error when used, and verify reports it.
                    let id = idx.id_at((e % set.map.len()) as u32).unwrap();
                    let is_large_ref = |p: &IdxProblem| matches!(p, IdxProblem::LargeOffsetOutOfRange { .. });
                    prop_assert!(idx.find(id).is_err_and(|p| is_large_ref(&p)));
                    let verified = idx.verify();
                    let reported = matches!(
                        &verified,
                        Err(Error::CorruptIndex { problem, .. }) if is_large_ref(problem)
                    );
                    prop_assert!(reported, "verify: {:?}", verified);
                }
                match idx.verify() {
                    Ok(()) => {
                        prop_assert!(!(flipped && mutations.len() == 1), "verify missed a flipped byte");
                        // A file that passes verify answers exactly as the original.
                        for (id, off) in &set.map {
                            check_lookup(&idx, id, Some(*off))?;
                        }
                        let listed: Vec<_> = idx.iter().collect();
                        let expected: Vec<_> = set.map.iter().map(|(&k, &v)| (k, v)).collect();
                        prop_assert_eq!(listed, expected);
                    }
                    Err(e) => prop_assert!(matches!(e, Error::CorruptIndex { .. }), "{}", e),
                }
            }
        }
    }

    #[test]
    fn single_flip_fails_verify(set in id_set(200), version in 1u32..=2, pos in any::<usize>(), x in 1u8..=255) {
        let set = if version == 1 { small_offsets(&set) } else { set };
        let Some(mut bytes) = write(&set, version)? else { return Ok(()) };
        let p = pos % bytes.len();
        bytes[p] ^= x;
        if let Ok(idx) = open(bytes, set.kind) {
            prop_assert!(idx.verify().is_err(), "byte {} flipped by {:#x} passed verify", p, x);
            probe_any(&idx, &set.map.keys().copied().collect::<Vec<_>>())?;
        }
    }
}

proptest! {
    // Bigger buckets, where interpolation gallops further; fewer cases (slow without optimisation).
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn roundtrip_large_sets(set in id_set(6000), others in prop::collection::vec(any::<[u8; 32]>(), 0..500)) {
        check_roundtrip(&set, 2, &others)?;
        check_roundtrip(&small_offsets(&set), 1, &others)?;
    }
}
