//! Pack indices made by git, read by `PackIndex`; indices made by `write_idx`, read by git.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use odb_index::idx::PackIndex;
use odb_index::idx::write::{Entry, write_idx};
use odb_index::testing::PackIndexExt;
use odb_index::{HashKind, LoadMode, ObjectId};
use odb_index_testkit::*;

fn kind_of(format: &str) -> HashKind {
    format.parse().unwrap()
}

/// The only pack file of a repository.
fn the_pack(objects: &Path) -> PathBuf {
    let mut packs: Vec<PathBuf> = std::fs::read_dir(objects.join("pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .collect();
    assert_eq!(packs.len(), 1, "{packs:?}");
    packs.pop().unwrap()
}

/// Everything `git show-index` says about `idx` agrees with `PackIndex` (in both load modes), and
/// `absent` ids are not found. Returns the number of entries.
fn check_against_git(idx_path: &Path, format: &str, version: u32, absent_seed: u64) -> usize {
    let kind = kind_of(format);
    let shown = show_index(idx_path, format);
    assert!(!shown.is_empty());
    for mode in [LoadMode::Mmap, LoadMode::Read] {
        let idx = PackIndex::open_with(idx_path, kind, mode).unwrap();
        idx.verify().unwrap();
        assert_eq!(idx.version(), version, "{}", idx_path.display());
        assert_eq!(idx.hash_kind(), kind);
        assert_eq!(idx.len() as usize, shown.len());
        let listed: Vec<(String, u64)> =
            idx.iter().map(|(id, off)| (id.to_string(), off)).collect();
        let mut expected = shown.clone();
        expected.sort();
        assert_eq!(listed, expected, "iter() differs from git show-index");
        let present: BTreeMap<&str, u64> =
            shown.iter().map(|(id, off)| (id.as_str(), *off)).collect();
        for (hex, off) in &shown {
            let id = ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap();
            assert_eq!(idx.lookup_id(&id), Some(*off), "{hex}");
            assert_eq!(idx.lookup_binary(id.as_bytes()), Some(*off), "{hex}");
        }
        for hex in absent_ids(3000, kind.hex_len(), absent_seed) {
            let id = ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap();
            let expected = present.get(hex.as_str()).copied();
            assert_eq!(idx.lookup_id(&id), expected, "{hex}");
            assert_eq!(idx.lookup_binary(id.as_bytes()), expected, "{hex}");
        }
        // Neighbours of present ids: the last byte changed.
        for (hex, _) in shown.iter().take(500) {
            let id = ObjectId::from_hex_kind(hex.as_bytes(), kind).unwrap();
            let mut b = id.as_bytes().to_vec();
            let last = b.len() - 1;
            b[last] ^= 1;
            let near = ObjectId::from_bytes(&b).unwrap();
            let expected = present.get(near.to_string().as_str()).copied();
            assert_eq!(idx.lookup(&b), expected);
            assert_eq!(idx.lookup_binary(&b), expected);
        }
    }
    shown.len()
}

/// A repository with a few thousand blobs in one pack made by `git repack -adf`.
fn repacked_repo(format: &str, n: usize) -> tempfile::TempDir {
    let repo = init_repo(format, true);
    fast_import_blobs(repo.path(), n, 7, "main");
    git(repo.path(), &["repack", "-adfq"]);
    repo
}

fn check_repo_idx(format: &str) {
    let repo = repacked_repo(format, 3000);
    let objects = objects_dir(repo.path());
    let idx = idx_files(&objects);
    assert_eq!(idx.len(), 1, "{idx:?}");
    let n = check_against_git(&idx[0], format, 2, 1);
    // Every object in the repository is in the pack.
    assert_eq!(n, all_objects(repo.path()).len());
    assert!(n > 3000);
}

#[test]
fn git_idx_sha1() {
    check_repo_idx("sha1");
}

#[test]
fn git_idx_sha256() {
    check_repo_idx("sha256");
}

/// `git index-pack` with `args`, writing `objects/<name>`; returns its path.
fn index_pack(repo: &Path, args: &[&str], name: &str) -> PathBuf {
    let objects = objects_dir(repo);
    let pack = the_pack(&objects);
    let out = objects.join(name);
    let out_s = out.to_str().unwrap();
    let pack_s = pack.to_str().unwrap();
    let mut all: Vec<&str> = vec!["index-pack"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out_s, pack_s]);
    git(repo, &all);
    out
}

fn check_index_versions(format: &str) {
    let repo = repacked_repo(format, 2000);
    let kind = kind_of(format);
    let v1 = index_pack(repo.path(), &["--index-version=1"], "v1.idx");
    check_against_git(&v1, format, 1, 2);
    // Every offset above 0x100 goes to the 64-bit table.
    let v2 = index_pack(repo.path(), &["--index-version=2,0x100"], "v2-large.idx");
    let n = check_against_git(&v2, format, 2, 3);
    let large = show_index(&v2, format)
        .iter()
        .filter(|(_, off)| *off > 0x100)
        .count();
    assert!(large > n / 2, "only {large} of {n} offsets above 0x100");
    let len = std::fs::metadata(&v2).unwrap().len() as usize;
    let min = 8 + 1024 + n * (kind.len() + 8) + 2 * kind.len();
    assert_eq!(
        len,
        min + 8 * large,
        "the 64-bit table holds one entry per large offset"
    );
    // The same pack, indexed by default, agrees on every entry.
    let plain = PackIndex::open(&v2, kind).unwrap();
    let v1 = PackIndex::open(&v1, kind).unwrap();
    assert!(plain.iter().eq(v1.iter()));
    assert_eq!(plain.pack_checksum(), v1.pack_checksum());
}

#[test]
fn git_index_versions_sha1() {
    check_index_versions("sha1");
}

#[test]
fn git_index_versions_sha256() {
    check_index_versions("sha256");
}

/// Pseudo-random ids (xorshift).
fn random_ids(kind: HashKind, n: usize, seed: u64) -> Vec<ObjectId> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let mut b = [0u8; 32];
            for c in b.chunks_mut(8) {
                c.copy_from_slice(&next().to_le_bytes());
            }
            ObjectId::from_bytes(&b[..kind.len()]).unwrap()
        })
        .collect()
}

#[test]
fn git_reads_written_indices() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["sha1", "sha256"] {
        let kind = kind_of(format);
        let ids = random_ids(kind, 700, 99);
        for version in [1u32, 2] {
            let entries: Vec<Entry> = ids
                .iter()
                .enumerate()
                .map(|(i, &id)| {
                    let i = i as u64;
                    let offset = match (version, i % 4) {
                        (_, 0) => 12 + i * 100,
                        (1, 1) => 0xffff_fff0 - i,
                        (1, _) => (1 << 31) + i,
                        (_, 1) => (1 << 31) + i,
                        (_, 2) => (1 << 32) + i,
                        _ => (1 << 50) + i * 3,
                    };
                    Entry {
                        id,
                        offset,
                        crc32: i as u32,
                    }
                })
                .collect();
            let bytes = write_idx(version, kind, &entries, &kind.digest(b"pack")).unwrap();
            let path = dir.path().join(format!("w-{format}-v{version}.idx"));
            std::fs::write(&path, &bytes).unwrap();
            let mut expected: Vec<(String, u64)> = entries
                .iter()
                .map(|e| (e.id.to_string(), e.offset))
                .collect();
            expected.sort();
            assert_eq!(show_index(&path, format), expected, "{}", path.display());
            let n = check_against_git(&path, format, version, 5);
            assert_eq!(n, 700);
        }
    }
}

/// Rough timings of both searches, hit and miss, over 12 328 and 1 000 000 ids in a mapped file.
/// `cargo test --release --test idx_git -- --ignored --nocapture timings`
#[test]
#[ignore]
fn timings() {
    use std::hint::black_box;
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let kind = HashKind::Sha1;
    for n in [12_328usize, 1_000_000] {
        let ids = random_ids(kind, n, 12345);
        let entries: Vec<Entry> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| Entry {
                id,
                offset: 12 + i as u64,
                crc32: 0,
            })
            .collect();
        let bytes = write_idx(2, kind, &entries, &kind.digest(b"pack")).unwrap();
        let path = dir.path().join(format!("t{n}.idx"));
        std::fs::write(&path, bytes).unwrap();
        let idx = PackIndex::open(&path, kind).unwrap();
        // Hits in random order (the ids are random; take them in generation order), misses random.
        let hits: Vec<ObjectId> = ids.iter().copied().cycle().take(400_000).collect();
        let misses = random_ids(kind, 400_000, 777);
        for round in 0..3 {
            let mut line = format!("n={n:>9} round {round}:");
            for (name, queries, want_hit) in [("hit", &hits, true), ("miss", &misses, false)] {
                for (alg, binary) in [("interp", false), ("binary", true)] {
                    let t = Instant::now();
                    let mut found = 0usize;
                    for q in queries.iter() {
                        let r = if binary {
                            idx.lookup_binary(black_box(q.as_bytes()))
                        } else {
                            idx.lookup(black_box(q.as_bytes()))
                        };
                        found += usize::from(r.is_some());
                    }
                    let ns = t.elapsed().as_nanos() as f64 / queries.len() as f64;
                    assert_eq!(found, if want_hit { queries.len() } else { 0 });
                    line.push_str(&format!("  {name} {alg} {ns:6.1} ns"));
                }
            }
            println!("{line}");
        }
    }
}
