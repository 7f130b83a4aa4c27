//! A `.idx` that lists one id twice, checksum valid (one entry's id written over with its neighbour's): git
//! reads whichever entry its binary search finds, so one of the two ids answers the other object's contents
//! (`blob 13` for a `blob 14`). The reader reads the entry whose contents hash to the id, and the other object,
//! no longer listed, is absent, as in git; an id that neither entry holds is an error naming the index. On a pack of 3 000 objects, at positions across the file, with the
//! repeated id's first and second entry the wrong one.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(clippy::disallowed_methods, clippy::too_many_lines)]

use std::path::Path;

use odb_index::HashKind;
use odb_index_gix::{ObjectId, Objects};
use odb_index_testkit::{fast_import_blobs, git, git_stdin, idx_files, init_repo};

/// Write `bytes` to `path` by a rename, resealed (the trailing SHA-1 of everything before it recomputed).
fn write_resealed(path: &Path, mut bytes: Vec<u8>) {
    let n = bytes.len() - 20;
    let sum = HashKind::Sha1.digest(&bytes[..n]);
    bytes[n..].copy_from_slice(sum.as_bytes());
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// git's contents of `id` in the repository as it was written.
fn contents(repo: &Path, id: &str) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "blob", id])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn an_id_listed_twice_is_read_from_the_entry_that_holds_it() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 3000, 7, "main");
    git(r, &["repack", "-adq"]);
    let idx = idx_files(&r.join("objects"))[0].clone();
    let good = std::fs::read(&idx).unwrap();
    let count = u32::from_be_bytes(good[8 + 255 * 4..8 + 256 * 4].try_into().unwrap()) as usize;
    let ids_at = 8 + 256 * 4;
    let id_hex = |bytes: &[u8], i: usize| -> String {
        bytes[ids_at + 20 * i..ids_at + 20 * (i + 1)]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let mut tried = 0;
    for k in 1..12 {
        let i = count * k / 12;
        // A pair of neighbours in one fan-out bucket.
        if good[ids_at + 20 * i] != good[ids_at + 20 * (i + 1)] {
            continue;
        }
        let (x, y) = (id_hex(&good, i), id_hex(&good, i + 1));
        let (x_data, y_data) = (contents(r, &x), contents(r, &y));
        assert_ne!(x_data, y_data);
        // `keep` is listed twice: at its own entry and at the other's.
        for (keep, gone, keep_data) in [(&x, &y, &x_data), (&y, &x, &y_data)] {
            let mut v = good.clone();
            let (from, to) = if keep == &x { (i, i + 1) } else { (i + 1, i) };
            let src = v[ids_at + 20 * from..ids_at + 20 * (from + 1)].to_vec();
            v[ids_at + 20 * to..ids_at + 20 * (to + 1)].copy_from_slice(&src);
            write_resealed(&idx, v);
            let objects = Objects::open(r).unwrap();
            let mut data = Vec::new();
            let keep_id: ObjectId = keep.parse().unwrap();
            let info = objects.read(&keep_id, &mut data).unwrap().expect("listed");
            assert_eq!(
                (info.size as usize, &data),
                (keep_data.len(), keep_data),
                "{i}: {keep}"
            );
            let header = objects.info(&keep_id).unwrap().expect("listed");
            assert_eq!(
                header.size as usize,
                keep_data.len(),
                "{i}: {keep}'s header"
            );
            let gone_id: ObjectId = gone.parse().unwrap();
            assert_eq!(
                objects.read(&gone_id, &mut data).unwrap(),
                None,
                "{i}: {gone}"
            );
            // git as the control: it lists `keep` twice too, and reads one of the two entries for it.
            let listed = git_stdin(
                r,
                &["cat-file", "--batch-check"],
                format!("{keep}\n{gone}\n").as_bytes(),
            );
            assert!(listed.ends_with(&format!("{gone} missing\n")), "{listed}");
        }
        // An id neither entry holds (`x` with its last byte changed, written over both): an error naming the
        // index, never either object's contents.
        let mut v = good.clone();
        let mut w = v[ids_at + 20 * i..ids_at + 20 * (i + 1)].to_vec();
        w[19] ^= 1;
        for at in [i, i + 1] {
            v[ids_at + 20 * at..ids_at + 20 * (at + 1)].copy_from_slice(&w);
        }
        write_resealed(&idx, v);
        let w_hex: String = w.iter().map(|b| format!("{b:02x}")).collect();
        let objects = Objects::open(r).unwrap();
        let w_id: ObjectId = w_hex.parse().unwrap();
        let mut data = Vec::new();
        match objects.read(&w_id, &mut data) {
            Err(e) => assert!(e.to_string().contains(".idx"), "{i}: {e}"),
            Ok(other) => panic!("{i}: {w_hex} answered {other:?}"),
        }
        tried += 1;
    }
    std::fs::write(&idx, &good).unwrap();
    assert!(tried >= 6, "{tried} pairs");
}
