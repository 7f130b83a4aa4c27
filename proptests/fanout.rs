//! The bucket check (`fanout::check_bucket` and its fast path `fanout::in_order`, which compares 8-byte heads
//! branch-free and whole ids only on a tie) against its definition: the ids of the bucket strictly increasing, each
//! of the bucket's first byte, and the ids just outside it of another. Random buckets and adversarial ones: ids
//! whose heads are equal (differing only after byte 8), a duplicate, a swap at the first, last or any position,
//! an id of another bucket inside, a neighbour of this bucket outside; every stride the files use (`.idx` v1 and
//! v2, multi-pack-index, SHA-1 and SHA-256) and one they do not (the generic loop).

use odb_index::testing::fanout::{Ids, check_bucket, in_order};
use proptest::prelude::*;

/// (stride, id length): `.idx` v2 / midx and `.idx` v1 for both hashes, and a stride no file uses.
const LAYOUTS: [(usize, usize); 5] = [(20, 20), (24, 20), (32, 32), (36, 32), (40, 20)];

/// What is done to a sorted bucket before it is checked.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    None,
    /// The id at the position repeated after it.
    Duplicate,
    SwapFirst,
    SwapLast,
    /// The id at the position swapped with the next.
    Swap,
    /// The id at the position given another first byte.
    OtherBucket,
    /// The id before the bucket given the bucket's first byte.
    NeighbourBefore,
    /// The id after the bucket given the bucket's first byte.
    NeighbourAfter,
}

#[derive(Clone, Debug)]
struct Case {
    layout: (usize, usize),
    first: u8,
    /// The bucket's ids (sorted and deduplicated before the mutation), and neighbours' tails.
    ids: Vec<[u8; 32]>,
    /// The ids' bytes 1..8 are zero (heads equal but for the first byte; ids differ only after byte 8).
    equal_heads: bool,
    before: Option<[u8; 32]>,
    after: Option<[u8; 32]>,
    mutation: Mutation,
    /// The position mutated (modulo the bucket's size).
    pos: usize,
    /// Bytes between ids (a v1 entry's offset) and after the last id.
    filler: u8,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => Just(Mutation::None),
        1 => Just(Mutation::Duplicate),
        1 => Just(Mutation::SwapFirst),
        1 => Just(Mutation::SwapLast),
        1 => Just(Mutation::Swap),
        1 => Just(Mutation::OtherBucket),
        1 => Just(Mutation::NeighbourBefore),
        1 => Just(Mutation::NeighbourAfter),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(&LAYOUTS[..]),
        any::<u8>(),
        prop::collection::vec(any::<[u8; 32]>(), 0..80),
        any::<bool>(),
        any::<Option<[u8; 32]>>(),
        any::<Option<[u8; 32]>>(),
        mutation(),
        any::<usize>(),
        any::<u8>(),
    )
        .prop_map(
            |(layout, first, ids, equal_heads, before, after, mutation, pos, filler)| Case {
                layout,
                first,
                ids,
                equal_heads,
                before,
                after,
                mutation,
                pos,
                filler,
            },
        )
}

/// The ids of the file (neighbours included, `len` bytes each) and the bucket's range.
fn ids_of(c: &Case) -> (Vec<Vec<u8>>, usize, usize) {
    let len = c.layout.1;
    let mut bucket: Vec<Vec<u8>> = c
        .ids
        .iter()
        .map(|raw| {
            let mut id = raw[..len].to_vec();
            id[0] = c.first;
            if c.equal_heads {
                // Only bytes 8.. tell them apart: mostly in the last byte.
                id[1..8].fill(0);
                id[8..len - 1].fill(raw[1] % 2);
            }
            id
        })
        .collect();
    bucket.sort();
    bucket.dedup();
    let n = bucket.len();
    match c.mutation {
        Mutation::Duplicate if n > 0 => {
            let i = c.pos % n;
            bucket.insert(i, bucket[i].clone());
        }
        Mutation::SwapFirst if n > 1 => bucket.swap(0, 1),
        Mutation::SwapLast if n > 1 => bucket.swap(n - 2, n - 1),
        Mutation::Swap if n > 1 => {
            let i = c.pos % (n - 1);
            bucket.swap(i, i + 1);
        }
        Mutation::OtherBucket if n > 0 => {
            let i = c.pos % n;
            bucket[i][0] ^= 1 + (c.filler & 0x7f);
        }
        _ => {}
    }
    let neighbour = |raw: &[u8; 32], same: bool, other: u8| {
        let mut id = raw[..len].to_vec();
        id[0] = if same { c.first } else { other };
        id
    };
    let mut all = Vec::new();
    if let Some(raw) = &c.before
        && c.first > 0
    {
        let same = matches!(c.mutation, Mutation::NeighbourBefore);
        all.push(neighbour(raw, same, c.first - 1 - raw[0] % c.first));
    }
    let start = all.len();
    all.extend(bucket);
    let end = all.len();
    if let Some(raw) = &c.after
        && c.first < 255
    {
        let same = matches!(c.mutation, Mutation::NeighbourAfter);
        all.push(neighbour(raw, same, c.first + 1 + raw[0] % (255 - c.first)));
    }
    (all, start, end)
}

/// The file's bytes: id `i` at `i * stride`, filler between and after (a v1 entry's offset, the trailer).
fn bytes_of(ids: &[Vec<u8>], stride: usize, filler: u8) -> Vec<u8> {
    let mut bytes = vec![filler; ids.len() * stride + 8];
    for (i, id) in ids.iter().enumerate() {
        bytes[i * stride..i * stride + id.len()].copy_from_slice(id);
    }
    bytes
}

/// The definition.
fn in_order_by_definition(ids: &[Vec<u8>], first: u8, start: usize, end: usize) -> bool {
    let bucket = &ids[start..end];
    bucket.iter().all(|id| id[0] == first)
        && bucket.windows(2).all(|w| w[0] < w[1])
        && start.checked_sub(1).is_none_or(|i| ids[i][0] != first)
        && ids.get(end).is_none_or(|id| id[0] != first)
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let (stride, len) = c.layout;
    let (all, start, end) = ids_of(c);
    let bytes = bytes_of(&all, stride, c.filler);
    let ids = Ids {
        bytes: &bytes,
        stride,
        len,
        count: all.len() as u32,
    };
    let expected = in_order_by_definition(&all, c.first, start, end);
    prop_assert_eq!(in_order(ids, c.first, start, end), expected, "fast path");
    prop_assert_eq!(
        check_bucket(ids, c.first, start, end).is_ok(),
        expected,
        "check_bucket"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn bucket_check_is_the_definition(c in case()) {
        check(&c)?;
    }
}

/// Each adversarial bucket, at every layout, with equal and distinct heads: the fast path and the check agree
/// with the definition, and the mutated buckets are refused (the proptest above could draw them rarely).
#[test]
fn adversarial_buckets() {
    let raw: Vec<[u8; 32]> = (0..40u8)
        .map(|i| {
            std::array::from_fn(|j| i.wrapping_mul(37).wrapping_add((j as u8).wrapping_mul(11)))
        })
        .collect();
    for layout in LAYOUTS {
        for equal_heads in [false, true] {
            for (mutation, refused) in [
                (Mutation::None, false),
                (Mutation::Duplicate, true),
                (Mutation::SwapFirst, true),
                (Mutation::SwapLast, true),
                (Mutation::Swap, true),
                (Mutation::OtherBucket, true),
                (Mutation::NeighbourBefore, true),
                (Mutation::NeighbourAfter, true),
            ] {
                let c = Case {
                    layout,
                    first: 0x5a,
                    ids: raw.clone(),
                    equal_heads,
                    before: Some(raw[0]),
                    after: Some(raw[1]),
                    mutation,
                    pos: 17,
                    filler: 0x5a,
                };
                check(&c).unwrap_or_else(|e| panic!("{mutation:?} {layout:?} {equal_heads}: {e}"));
                let (all, start, end) = ids_of(&c);
                assert_eq!(
                    in_order_by_definition(&all, c.first, start, end),
                    !refused,
                    "{mutation:?} {layout:?} {equal_heads}"
                );
            }
        }
    }
}
