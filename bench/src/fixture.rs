//! Fixtures made with the real `git`: the one-pack repository of the sched_yield report (12 328 objects, no
//! loose objects), 100 packs with and without a multi-pack-index, and a synthetic 1 000 000-object index.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use odb_index::idx::write::{Entry, write_idx};
use odb_index::{HashKind, ObjectId};

use super::Rng;

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p =
            std::env::temp_dir().join(format!("odb-index-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(TempDir(p))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `git` with no global or system config, no auto-gc or maintenance, fixed identity and dates.
fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "odb-index")
        .env("GIT_AUTHOR_EMAIL", "odb-index@example.invalid")
        .env("GIT_COMMITTER_NAME", "odb-index")
        .env("GIT_COMMITTER_EMAIL", "odb-index@example.invalid")
        .env("GIT_AUTHOR_DATE", "1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"]);
    c
}

fn run_git(dir: &Path, args: &[&str], stdin: &[u8]) -> Result<(), String> {
    let mut child = git(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running git (is it installed?): {e}"))?;
    if let Some(mut si) = child.stdin.take() {
        // A failing git shows in its exit status below.
        let _ = si.write_all(stdin);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
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

/// An objects directory holding one SHA-1 index of `n` random ids (written with `write_idx`) and an empty
/// `.pack` beside it. Returns the objects directory and the ids.
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
    std::fs::write(stem.with_extension("pack"), b"").map_err(|e| e.to_string())?;
    Ok((objects, entries.into_iter().map(|e| e.id).collect()))
}
