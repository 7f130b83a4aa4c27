//! Issue 38, 10: `--midx-check pack-index` (`Options::midx_check(MidxCheck::PackIndex)`) where a check cannot
//! be made or finds the multi-pack-index short: a covered pack whose `.idx` does not load (its entries are
//! answered as written, as `bounds` answers them, and the `.idx`'s error is warned about), and a
//! multi-pack-index that no longer lists an object its pack's `.idx` has (the object is found in the `.idx`, as
//! git finds it without the multi-pack-index). The answers are compared with git's on the intact repository.

use std::path::Path;

use odb_index_testkit::{all_objects, git, git_stdin, idx_files, objects_dir};

use super::{fixture, odb, replace_file, reseal_sha1};

/// `git cat-file --batch-check` (the default format) of every object of `repo`, and the input it was given.
fn git_answers(repo: &Path) -> (String, String) {
    let input: String = all_objects(repo)
        .iter()
        .map(|id| format!("{id}\n"))
        .collect();
    let out = git_stdin(repo, &["cat-file", "--batch-check"], input.as_bytes());
    (input, out)
}

/// `odb-index batch-check --midx-check pack-index` (the default format) on `input`: (stdout, stderr).
fn pack_index_checked(repo: &Path, input: &str) -> (String, String) {
    let args = [
        "batch-check",
        "--midx-check",
        "pack-index",
        repo.to_str().unwrap(),
    ];
    let out = odb(&args, input.as_bytes());
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A covered pack's `.idx` cut to 100 bytes: its entries cannot be checked, and are answered as the
/// multi-pack-index writes them (every line as git's on the intact repository), with one warning naming the
/// `.idx`. Fails if a location that cannot be checked is taken for a miss.
#[test]
fn pack_index_check_with_a_covered_idx_that_does_not_load_answers_as_written() {
    let repo = fixture("sha1", true);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let (input, truth) = git_answers(r);
    let victim = idx_files(&objects_dir(r)).remove(0);
    let bytes = std::fs::read(&victim).unwrap();
    replace_file(&victim, &bytes[..100]);
    let (out, err) = pack_index_checked(r, &input);
    assert_eq!(
        super::first_difference(&out, &truth),
        None,
        "{out}\n----\n{truth}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(victim.to_str().unwrap()), "{err}");
}

/// `midx` (a SHA-1 multi-pack-index without reverse index or bitmap) without the object at `row`: its id and
/// offset cut out, the fanout counts from its bucket on lowered, the chunk offsets moved, the checksum recomputed.
fn without_row(midx: &[u8], row: usize) -> Vec<u8> {
    let chunks = usize::from(midx[6]);
    let at =
        |i: usize| u64::from_be_bytes(midx[16 + 12 * i..24 + 12 * i].try_into().unwrap()) as usize;
    let mut body = Vec::new();
    let mut table = Vec::new();
    let mut offset = 12 + 12 * (chunks + 1);
    for i in 0..chunks {
        let id: [u8; 4] = midx[12 + 12 * i..16 + 12 * i].try_into().unwrap();
        let mut chunk = midx[at(i)..at(i + 1)].to_vec();
        match &id {
            b"OIDL" => drop(chunk.drain(20 * row..20 * row + 20)),
            b"OOFF" => drop(chunk.drain(8 * row..8 * row + 8)),
            b"PNAM" | b"OIDF" | b"LOFF" => {}
            other => panic!("chunk {:?} not expected", String::from_utf8_lossy(other)),
        }
        table.extend_from_slice(&id);
        table.extend_from_slice(&(offset as u64).to_be_bytes());
        offset += chunk.len();
        body.push((id, chunk));
    }
    table.extend_from_slice(&[0; 4]);
    table.extend_from_slice(&(offset as u64).to_be_bytes());
    let oidl = (0..chunks)
        .find(|&i| &midx[12 + 12 * i..16 + 12 * i] == b"OIDL")
        .unwrap();
    let first = usize::from(midx[at(oidl) + 20 * row]);
    let mut out = midx[..12].to_vec();
    out.extend_from_slice(&table);
    for (id, mut chunk) in body {
        if &id == b"OIDF" {
            for b in first..256 {
                let n = u32::from_be_bytes(chunk[4 * b..4 * b + 4].try_into().unwrap());
                chunk[4 * b..4 * b + 4].copy_from_slice(&(n - 1).to_be_bytes());
            }
        }
        out.extend_from_slice(&chunk);
    }
    out.extend_from_slice(&[0; 20]);
    reseal_sha1(&mut out);
    out
}

/// The multi-pack-index no longer lists one object of a pack (its row cut out of a file git wrote, the file
/// otherwise valid): `bounds` misses it, as git's lookup through the file does; `pack-index` checks the fanout
/// bucket against the packs' own `.idx` files and finds it there, every line as git's on the intact repository
/// (and on the repository without the file), with one warning naming the multi-pack-index. Fails if that check
/// compares only the file's ids with the `.idx` files', not the reverse.
#[test]
fn pack_index_check_finds_an_object_the_multi_pack_index_omits() {
    let repo = fixture("sha1", true);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let (input, truth) = git_answers(r);
    let midx = objects_dir(r).join("pack/multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let oidl = (0..usize::from(good[6]))
        .map(|i| 12 + 12 * i)
        .find(|&at| &good[at..at + 4] == b"OIDL")
        .map(|at| u64::from_be_bytes(good[at + 4..at + 12].try_into().unwrap()) as usize)
        .unwrap();
    let row = 100;
    let omitted: String = good[oidl + 20 * row..oidl + 20 * row + 20]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    replace_file(&midx, &without_row(&good, row));
    let one = format!("{omitted}\n");
    let by_default = odb(&["batch-check", r.to_str().unwrap()], one.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&by_default.stdout),
        format!("{omitted} missing\n"),
        "bounds answers from the file"
    );
    assert_eq!(
        git_stdin(r, &["cat-file", "--batch-check"], one.as_bytes()),
        format!("{omitted} missing\n"),
        "as git does"
    );
    let (out, err) = pack_index_checked(r, &input);
    assert_eq!(
        super::first_difference(&out, &truth),
        None,
        "{out}\n----\n{truth}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("multi-pack-index"), "{err}");
    std::fs::remove_file(&midx).unwrap();
    assert_eq!(git_answers(r).1, truth, "git without the file");
}
