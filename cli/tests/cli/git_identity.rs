//! Byte-identity with `git cat-file --batch-check`: the default format and one with every git atom, on every
//! object of repositories built with git (OFS_DELTA and REF_DELTA packs, loose objects, a multi-pack-index,
//! alternates, SHA-256), abbreviated ids (ambiguous ones included), and `--batch-all-objects` sorted
//! (byte-identical) and `--unordered` (the same set of lines).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;

use odb_index_testkit::{
    absent_ids, all_objects, fast_import_history, git, idx_files, init_repo, objects_dir,
};

use super::{add_loose, odb};

/// Every atom git knows (`%(rest)` makes git split the input line at its first blank).
const ALL_ATOMS: &str =
    "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase) [%(rest)]";

/// `--batch-check` or `--batch-check=<format>`.
fn flag(format: Option<&str>) -> String {
    format.map_or("--batch-check".to_owned(), |f| format!("--batch-check={f}"))
}

/// git's stdout for `cat-file <flag> <extra>` on `input` (its stderr, hints about ambiguous names, is ignored).
fn git_batch(repo: &Path, format: Option<&str>, extra: &[&str], input: &[u8]) -> Vec<u8> {
    let f = flag(format);
    let args: Vec<&str> = std::iter::once(f.as_str())
        .chain(extra.iter().copied())
        .collect();
    let (stdout, _, code) = super::as_git::git_run(repo, &args, input);
    assert_eq!(code, Some(0), "git cat-file {extra:?} failed");
    stdout
}

fn ours(repo: &Path, format: Option<&str>, extra: &[&str], input: &[u8]) -> Vec<u8> {
    let mut args: Vec<&OsStr> = vec![OsStr::new("batch-check")];
    let f = flag(format);
    args.push(OsStr::new(&f));
    args.extend(extra.iter().map(OsStr::new));
    args.push(repo.as_os_str());
    let out = odb(&args, input);
    // Only git's report of ambiguous names on stderr (compared with git's own in `as_git`).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && stderr
                .lines()
                .all(|l| l.starts_with("error: short object ID ") || l.starts_with("hint: ")),
        "odb-index batch-check {extra:?}: {} {stderr}",
        out.status,
    );
    out.stdout
}

fn assert_same(what: &str, git: &[u8], ours: &[u8]) {
    if git != ours {
        let (g, o) = (String::from_utf8_lossy(git), String::from_utf8_lossy(ours));
        let line = g.lines().zip(o.lines()).position(|(a, b)| a != b);
        let show = |t: &str| line.and_then(|l| t.lines().nth(l)).unwrap_or("").to_owned();
        panic!(
            "{what}: output differs from git's ({} vs {} lines), first at line {line:?}:\n git: {}\nours: {}",
            g.lines().count(),
            o.lines().count(),
            show(&g),
            show(&o)
        );
    }
}

/// The input lines: every object (plain, with trailing text, in upper case), 4-, 5- and 9-digit prefixes of each,
/// absent ids, ids of the other length, and names that are no ids.
fn names(repo: &Path, hex_len: usize) -> Vec<String> {
    let ids = all_objects(repo);
    let mut v = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        v.push(id.clone());
        v.push(format!("{id} some rest\tof the line"));
        if i % 5 == 0 {
            v.push(id.to_ascii_uppercase());
        }
        v.push(id[..4].to_owned());
        if i % 3 == 0 {
            v.push(id[..5].to_owned());
            v.push(id[..9].to_ascii_uppercase());
        }
    }
    let other = if hex_len == 40 { 64 } else { 40 };
    v.extend(absent_ids(50, hex_len, 7));
    v.extend(absent_ids(5, other, 8));
    v.extend(absent_ids(5, 6, 9));
    v.extend(["", "abc", "zzzz", "12345g", " leading"].map(String::from));
    v
}

/// Check every way of asking against git on `repo` (whose object format is `format`).
fn check(repo: &Path, format: &str) {
    let hex_len = if format == "sha256" { 64 } else { 40 };
    let input = names(repo, hex_len).join("\n") + "\n";
    let mut ambiguous = 0;
    for fmt in [None, Some(ALL_ATOMS)] {
        let g = git_batch(repo, fmt, &[], input.as_bytes());
        ambiguous = String::from_utf8_lossy(&g)
            .lines()
            .filter(|l| l.ends_with(" ambiguous"))
            .count();
        assert_same(
            &format!("{fmt:?}"),
            &g,
            &ours(repo, fmt, &[], input.as_bytes()),
        );
        assert_same(
            &format!("{fmt:?} --threads 3 --buffer"),
            &g,
            &ours(repo, fmt, &["--threads", "3", "--buffer"], input.as_bytes()),
        );
        let all = ["--batch-all-objects"];
        let g = git_batch(repo, fmt, &all, b"");
        assert_same(
            &format!("{fmt:?} --batch-all-objects"),
            &g,
            &ours(repo, fmt, &all, b""),
        );
        let un = ["--batch-all-objects", "--unordered"];
        let set = |b: Vec<u8>| -> BTreeSet<String> {
            String::from_utf8(b)
                .unwrap()
                .lines()
                .map(String::from)
                .collect()
        };
        let (g, o) = (
            set(git_batch(repo, fmt, &un, b"")),
            set(ours(repo, fmt, &un, b"")),
        );
        assert_eq!(g.len(), all_objects(repo).len());
        assert!(
            g == o,
            "{fmt:?} --unordered: {:?}",
            g.symmetric_difference(&o).take(3).collect::<Vec<_>>()
        );
    }
    assert!(
        ambiguous > 0,
        "the input should hold ambiguous abbreviations"
    );
}

/// How many OFS_DELTA and REF_DELTA entries the packs in `objects/pack` hold (the type bits of each entry's first
/// byte, at the offsets `git show-index` gives).
fn delta_kinds(repo: &Path, format: &str) -> (usize, usize) {
    let (mut ofs, mut refd) = (0, 0);
    for idx in idx_files(&objects_dir(repo)) {
        let pack = std::fs::read(idx.with_extension("pack")).unwrap();
        for (_, off) in odb_index_testkit::show_index(&idx, format) {
            match (pack[off as usize] >> 4) & 7 {
                6 => ofs += 1,
                7 => refd += 1,
                _ => {}
            }
        }
    }
    (ofs, refd)
}

#[test]
fn ofs_delta_pack_and_loose_objects_match_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 120, 1, "main");
    git(r, &["repack", "-adfq"]);
    let (ofs, refd) = delta_kinds(r, "sha1");
    assert!(
        ofs > 50 && refd == 0,
        "OFS_DELTA pack expected: {ofs} {refd}"
    );
    assert!(
        r.join(".git/objects/pack").read_dir().unwrap().any(|e| e
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "rev"))
    );
    fast_import_history(r, 20, 2, "side");
    add_loose(r, 30, "l");
    check(r, "sha1");
}

#[test]
fn ref_delta_pack_without_rev_file_matches_git() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_history(r, 120, 3, "main");
    git(
        r,
        &[
            "-c",
            "repack.useDeltaBaseOffset=false",
            "-c",
            "pack.writeReverseIndex=false",
            "repack",
            "-adfq",
        ],
    );
    let (ofs, refd) = delta_kinds(r, "sha1");
    assert!(
        refd > 50 && ofs == 0,
        "REF_DELTA pack expected: {ofs} {refd}"
    );
    assert!(
        !r.join("objects/pack").read_dir().unwrap().any(|e| e
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "rev"))
    );
    check(r, "sha1");
}

#[test]
fn multi_pack_index_with_loose_objects_matches_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 60, 4, "main");
    git(r, &["repack", "-dq"]);
    fast_import_history(r, 60, 5, "b");
    git(
        r,
        &["-c", "repack.useDeltaBaseOffset=false", "repack", "-dq"],
    );
    fast_import_history(r, 40, 6, "c");
    git(r, &["multi-pack-index", "write"]);
    assert!(objects_dir(r).join("pack/multi-pack-index").is_file());
    add_loose(r, 20, "m");
    check(r, "sha1");
}

#[test]
fn alternates_match_git() {
    let base = init_repo("sha1", true);
    fast_import_history(base.path(), 60, 7, "main");
    git(base.path(), &["repack", "-adq"]);
    add_loose(base.path(), 10, "base");
    let repo = init_repo("sha1", false);
    let r = repo.path();
    std::fs::write(
        objects_dir(r).join("info/alternates"),
        format!("{}\n", objects_dir(base.path()).display()),
    )
    .unwrap();
    fast_import_history(r, 40, 8, "main");
    git(r, &["repack", "-dlq"]);
    add_loose(r, 10, "own");
    check(r, "sha1");
}

#[test]
fn sha256_repository_matches_git() {
    let repo = init_repo("sha256", false);
    let r = repo.path();
    fast_import_history(r, 80, 9, "main");
    git(
        r,
        &["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"],
    );
    // fast-import's own pack has OFS_DELTA entries.
    fast_import_history(r, 40, 10, "b");
    let (ofs, refd) = delta_kinds(r, "sha256");
    assert!(
        ofs > 0 && refd > 0,
        "both delta kinds expected: {ofs} {refd}"
    );
    add_loose(r, 20, "s");
    check(r, "sha256");
}

/// `HEAD`, ref names and `rev:path` name what `git rev-parse` names them (the comparison with `git cat-file` is
/// `names::names_answer_as_git`); `%(objectpack)` and `%(objectoffset)` say where each object is.
#[test]
fn names_that_are_not_ids_and_location_atoms() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 10, 11, "main");
    git(r, &["repack", "-adq"]);
    let loose = add_loose(r, 1, "x").remove(0);
    let blob = git(r, &["rev-parse", "main:d0/f0"]).trim().to_owned();
    let input = format!("HEAD\nmain\nmain:d0/f0\n{loose}\n{blob}\n");
    let out = ours(
        r,
        Some("%(objectname) %(objectpack) [%(objectoffset)]"),
        &[],
        input.as_bytes(),
    );
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    assert!(lines[0].starts_with(&format!("{head} pack-")), "{out}");
    assert_eq!(lines[0], lines[1]);
    assert_eq!(lines[2], lines[4]);
    assert_eq!(lines[3], format!("{loose} loose []"));
    let pack = odb_index_testkit::idx_files(&objects_dir(r))[0].with_extension("pack");
    let name = pack.file_name().unwrap().to_str().unwrap();
    let offset = odb_index_testkit::show_index(&pack.with_extension("idx"), "sha1")
        .into_iter()
        .find(|(id, _)| *id == blob)
        .unwrap()
        .1;
    assert_eq!(lines[4], format!("{blob} {name} [{offset}]"));
}

#[test]
fn incremental_multi_pack_index_chain_matches_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 50, 12, "main");
    git(r, &["repack", "-adq"]);
    git(r, &["multi-pack-index", "write", "--incremental"]);
    fast_import_history(r, 30, 13, "b");
    git(r, &["multi-pack-index", "write", "--incremental"]);
    let chain = objects_dir(r).join("pack/multi-pack-index.d/multi-pack-index-chain");
    assert_eq!(std::fs::read_to_string(chain).unwrap().lines().count(), 2);
    add_loose(r, 10, "c");
    check(r, "sha1");
}
