//! An index claiming 2^31 objects in a sparse file.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// An index claiming 2^31 objects in a sparse file.
// ---------------------------------------------------------------------------------------------------------

/// Write, in `pack_dir`, a version 2 `.idx` claiming 2^31 objects (all in fan-out bucket 0, every table
/// zero: a sparse file of 60 GB for SHA-1) and a 32-byte `.pack` whose trailer is the checksum the index
/// records. Returns the index's path.
fn sparse_index(pack_dir: &Path, kind: HashKind) -> PathBuf {
    use std::io::{Seek as _, Write as _};
    let h = kind.len() as u64;
    let n: u64 = 1 << 31;
    let stem = pack_dir.join(format!("pack-{}", "ab".repeat(kind.len())));
    let idx = stem.with_extension("idx");
    let len = 8 + 1024 + n * (h + 8) + 2 * h;
    let pack_sum = kind.digest(b"sparse pack");
    let mut f = std::fs::File::create(&idx).unwrap();
    f.write_all(b"\xfftOc\0\0\0\x02").unwrap();
    for _ in 0..256 {
        f.write_all(&(n as u32).to_be_bytes()).unwrap();
    }
    f.set_len(len).unwrap();
    f.seek(std::io::SeekFrom::Start(len - 2 * h)).unwrap();
    f.write_all(pack_sum.as_bytes()).unwrap();
    // The header counts what the index lists (the store checks it, as git does).
    let mut pack = b"PACK\0\0\0\x02".to_vec();
    pack.extend_from_slice(&(n as u32).to_be_bytes());
    pack.extend_from_slice(pack_sum.as_bytes());
    std::fs::write(stem.with_extension("pack"), pack).unwrap();
    idx
}

/// Opening validates in constant time, so a miss is answered without reading the tables (mapped: nothing of
/// the sparse file is read but the pages a search touches); under `LoadMode::Read` the file is refused as
/// sparse instead of read. Every real object is still found. (Time and memory: docs/RELIABILITY.md.)
#[cfg(unix)]
#[test]
fn sparse_index_claiming_2_31_objects() {
    let r = Repo::new("sha1");
    let idx = sparse_index(&r.pack_dir(), r.kind());
    let store = Store::open(r.path(), Options::default()).unwrap();
    let mut hd = store.handle();
    // Ids in the claimed bucket (0x00) and elsewhere.
    let mut absent = r.absent();
    absent.push(format!("00{}", "1".repeat(38)));
    absent.push(format!("{}f", "0".repeat(39)));
    absent.push("0".repeat(40));
    for id in &absent {
        match hd.locate(&oid(id)) {
            Ok(None) => {}
            // The all-zero id is listed (every entry is zero), at offset 0, inside the pack header.
            Err(e) if *id == "0".repeat(40) => {
                assert!(matches!(
                    corrupt_index_problem(&e, &idx),
                    IdxProblem::OffsetInPackHeader { .. }
                ))
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    r.assert_found(&store, &r.all);
    assert!(git_has(r.path(), &r.absent()).iter().all(|&p| !p));
    // Under LoadMode::Read: a typed error naming the file instead of reading 60 GB.
    let store = Store::open(r.path(), Options::default().load(LoadMode::Read)).unwrap();
    let e = incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &idx);
    assert!(
        matches!(io_file_problem(&e, &idx), FileProblem::Sparse { .. }),
        "{e}"
    );
    r.assert_found(&store, &r.all);
}
