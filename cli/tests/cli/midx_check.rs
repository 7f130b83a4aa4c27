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

/// The multi-pack-index no longer lists one object of a pack (the last bit of its id in `OIDL` flipped, which
/// keeps the ids in order; checksum recomputed): `bounds` misses it, as git's lookup through the file does;
/// `pack-index` checks the fanout bucket against the packs' own `.idx` files and finds it there, every line as
/// git's on the intact repository (and on the repository without the file), with one warning naming the
/// multi-pack-index. Fails if that check compares only the file's ids with the `.idx` files', not the reverse.
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
    assert!(
        truth.contains(&format!("{omitted} blob")),
        "row {row} is a blob"
    );
    let mut bad = good.clone();
    bad[oidl + 20 * row + 19] ^= 1;
    reseal_sha1(&mut bad);
    replace_file(&midx, &bad);
    let by_default = odb(
        &["batch-check", r.to_str().unwrap()],
        format!("{omitted}\n").as_bytes(),
    );
    assert_eq!(
        String::from_utf8_lossy(&by_default.stdout),
        format!("{omitted} missing\n"),
        "bounds answers from the file"
    );
    assert_eq!(
        git_stdin(
            r,
            &["cat-file", "--batch-check"],
            format!("{omitted}\n").as_bytes()
        ),
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
