//! Fixtures made with the real `git`: the one-pack repository of the sched_yield report (12 328 objects, no
//! loose objects), 100 packs with and without a multi-pack-index, and a synthetic 1 000 000-object index.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use odb_index::idx::write::{Entry, write_idx};
use odb_index::{HashKind, ObjectId};
use odb_index_testkit::try_git;

use super::Rng;

/// A directory removed when dropped.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    pub fn new(tag: &str) -> Result<TempDir, String> {
        tempfile::Builder::new()
            .prefix(&format!("odb-index-{tag}-"))
            .tempdir()
            .map(TempDir)
            .map_err(|e| format!("creating a temporary directory: {e}"))
    }
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// git with the shared test environment (no global config, no auto-gc, fixed identity); output discarded.
fn run_git(dir: &Path, args: &[&str], stdin: &[u8]) -> Result<(), String> {
    try_git(dir, args, stdin).map(drop)
}

fn init(dir: &Path) -> Result<PathBuf, String> {
    run_git(
        dir,
        &[
            "-c",
            "init.defaultBranch=main",
            "init",
            "-q",
            "--bare",
            "repo.git",
        ],
        b"",
    )?;
    Ok(dir.join("repo.git"))
}

/// One `git fast-import` (always into a pack: `fastimport.unpackLimit=0`) of `blobs` blobs whose contents
/// start with `tag`, and, if `commit`, one flat tree holding them and one commit (`blobs + 2` objects).
fn fast_import(repo: &Path, tag: &str, blobs: usize, commit: bool) -> Result<(), String> {
    let mut s = Vec::with_capacity(blobs * 64);
    for i in 0..blobs {
        let data = format!("{tag} blob {i}\n");
        write!(s, "blob\nmark :{}\ndata {}\n{data}\n", i + 1, data.len()).ok();
    }
    if commit {
        let msg = format!("{tag}\n");
        write!(
            s,
            "commit refs/heads/main\ncommitter odb-index <odb-index@example.invalid> 1700000000 +0000\ndata {}\n{msg}",
            msg.len()
        )
        .ok();
        for i in 0..blobs {
            writeln!(s, "M 100644 :{} f{i:05}", i + 1).ok();
        }
        s.push(b'\n');
    }
    run_git(
        repo,
        &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
        &s,
    )
}

/// The report's fixture: 12 328 objects (12 326 blobs, one tree, one commit) in one pack, no loose objects.
/// Returns the objects directory.
pub fn one_pack(dir: &Path) -> Result<PathBuf, String> {
    let repo = init(dir)?;
    fast_import(&repo, "one-pack", 12_326, true)?;
    Ok(repo.join("objects"))
}

/// `packs` packs of `per_pack` blobs each; the second returned directory is a copy with a multi-pack-index.
pub fn many_packs(dir: &Path, packs: usize, per_pack: usize) -> Result<(PathBuf, PathBuf), String> {
    let repo = init(dir)?;
    for p in 0..packs {
        fast_import(&repo, &format!("pack {p}"), per_pack, false)?;
    }
    let copy = dir.join("repo-midx.git");
    let st = Command::new("cp")
        .args(["-a"])
        .arg(&repo)
        .arg(&copy)
        .status()
        .map_err(|e| format!("cp: {e}"))?;
    if !st.success() {
        return Err("cp -a of the 100-pack repository failed".into());
    }
    run_git(&copy, &["multi-pack-index", "write"], b"")?;
    if !copy.join("objects/pack/multi-pack-index").is_file() {
        return Err("git multi-pack-index write made no multi-pack-index".into());
    }
    Ok((repo.join("objects"), copy.join("objects")))
}

/// An objects directory holding one SHA-1 index of `n` random ids (written with `write_idx`) and a stub
/// `.pack` beside it (sparse: a header, a hole, the checksum the index records). Returns the objects directory
/// and the ids.
pub fn big_index(dir: &Path, n: usize, rng: &mut Rng) -> Result<(PathBuf, Vec<ObjectId>), String> {
    let objects = dir.join("big/objects");
    let pack_dir = objects.join("pack");
    std::fs::create_dir_all(&pack_dir).map_err(|e| format!("{}: {e}", pack_dir.display()))?;
    let mut entries = Vec::with_capacity(n);
    let mut offset = 12u64;
    for _ in 0..n {
        entries.push(Entry {
            id: rng.oid(),
            offset,
            crc32: 0,
        });
        offset += 100;
    }
    let checksum = rng.oid();
    let bytes = write_idx(2, HashKind::Sha1, &entries, &checksum).map_err(|e| e.to_string())?;
    let stem = pack_dir.join(format!("pack-{checksum}"));
    std::fs::write(stem.with_extension("idx"), bytes).map_err(|e| e.to_string())?;
    // The store checks the pack's trailer against the index and every offset against the pack's length.
    odb_index_testkit::write_stub_pack(
        &stem.with_extension("pack"),
        n as u32,
        offset + 20,
        checksum.as_bytes(),
    );
    Ok((objects, entries.into_iter().map(|e| e.id).collect()))
}
