//! The delta-base cache (`Objects::with_delta_base_cache`): a reader answers every deltified object with its
//! own bytes, with the cache and without it, also when two packs hold deltas against bases at the same offset
//! under names that only differ in bytes that are not UTF-8 (gix-pack's own key for a pack, a CRC-32 of its
//! path decoded lossily, is the same for both).
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(clippy::disallowed_methods, clippy::too_many_lines)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use odb_index_gix::{ObjectId, Objects, Place};
use odb_index_testkit::{git_stdin, init_repo};

/// `n` reproducible bytes that do not compress (splitmix64 of `seed`).
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// Four versions of a 3 000-byte blob, each the one before with 50 bytes changed: git stores one whole and the
/// others as deltas against it, at the same offsets whatever the seed (the bytes do not compress).
fn versions(seed: u64) -> Vec<Vec<u8>> {
    let mut blob = random_bytes(seed, 3000);
    (0..4u64)
        .map(|k| {
            let start = 1000 + 300 * k as usize;
            blob[start..start + 50].copy_from_slice(&random_bytes(seed * 100 + k, 50));
            blob.clone()
        })
        .collect()
}

/// One pack of `blobs` in the pack directory of `repo`, named `pack-<name>.{idx,pack}` (no `.rev`: the reader
/// makes its own), written by `git pack-objects` from a repository of its own; returns the blobs' ids.
fn pack_named(repo: &Path, blobs: &[Vec<u8>], name: &[u8]) -> Vec<ObjectId> {
    let src = init_repo("sha1", true);
    let mut stream = Vec::new();
    for (i, b) in blobs.iter().enumerate() {
        stream.extend_from_slice(format!("blob\nmark :{}\ndata {}\n", i + 1, b.len()).as_bytes());
        stream.extend_from_slice(b);
        stream.push(b'\n');
    }
    git_stdin(src.path(), &["fast-import", "--quiet"], &stream);
    let ids: Vec<ObjectId> = blobs
        .iter()
        .map(|b| {
            git_stdin(src.path(), &["hash-object", "--stdin"], b)
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let list: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("p");
    let hash = git_stdin(
        src.path(),
        &[
            "pack-objects",
            "-q",
            "--window=10",
            "--depth=10",
            base.to_str().unwrap(),
        ],
        list.as_bytes(),
    );
    let dir = repo.join("objects/pack");
    for ext in ["idx", "pack"] {
        let from = tmp.path().join(format!("p-{}.{ext}", hash.trim()));
        let mut to = b"pack-".to_vec();
        to.extend_from_slice(name);
        to.extend_from_slice(format!(".{ext}").as_bytes());
        std::fs::rename(&from, dir.join(OsStr::from_bytes(&to))).unwrap();
    }
    ids
}

/// Two packs named `pack-\xff` and `pack-\xfe`, each a blob and three deltas against it, every object at the
/// same offset in both (asserted); read through one reader, the second pack's deltas are
/// answered with their own base, not the first pack's, with the cache (the default and a small one) and
/// without it. Fails (the second pack's objects answered with the first pack's bytes) if the cache is keyed by
/// gix-pack's id of a pack, made from its path decoded lossily.
#[test]
fn deltas_of_two_packs_named_alike_are_answered_with_their_own_bases() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    let (one, two) = (versions(1), versions(2));
    let ids_one = pack_named(r, &one, b"\xff");
    let ids_two = pack_named(r, &two, b"\xfe");
    // The same layout in both packs: each object at the same offset in its pack (both bases at 12).
    let reader = Objects::open(r).unwrap();
    let offsets = |ids: &[ObjectId]| -> Vec<u64> {
        ids.iter()
            .map(
                |id| match reader.info(id).unwrap().expect("in a pack").place {
                    Place::Packed { offset, .. } => offset,
                    other => panic!("{id}: {other:?}"),
                },
            )
            .collect()
    };
    assert_eq!(offsets(&ids_one), offsets(&ids_two));
    assert!(offsets(&ids_one).contains(&12));
    for objects in [
        Objects::open(r).unwrap(),
        Objects::open(r).unwrap().with_delta_base_cache(64 << 10),
        Objects::open(r).unwrap().with_delta_base_cache(0),
    ] {
        let limit = objects.delta_base_cache_limit();
        let mut data = Vec::new();
        for (ids, blobs) in [(&ids_one, &one), (&ids_two, &two), (&ids_one, &one)] {
            for (id, blob) in ids.iter().zip(blobs.iter()).rev() {
                let info = objects.read(id, &mut data).unwrap().expect("in a pack");
                assert!(matches!(info.place, Place::Packed { .. }));
                assert!(
                    data == *blob,
                    "{id} (cache of {limit} bytes): another object's bytes"
                );
            }
        }
    }
}
