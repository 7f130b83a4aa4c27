//! Scenario 12 (docs/BENCHMARKS.md, "Opening a 1 000-layer chain"): a process that opens a
//! repository of 1 000 packs under an incremental multi-pack-index chain of 1 000 layers and reads the type and
//! size of 10 of its objects, beside `git cat-file --batch-check` on the same ids: system calls (`strace -f -c`,
//! one run each) and wall time (runs interleaved), as ratios to git's.
//!
//! The fixture ([`chain_repo`]) takes seconds where `bench/scripts/midx-chain.sh` takes minutes: git writes the
//! packs (one `git fast-import` with a `checkpoint` after each blob), the crate's multi-pack-index writer
//! writes the layers (one per pack, as `git multi-pack-index write --incremental` after each pack would), and
//! `git multi-pack-index verify` must accept the chain before anything is measured. The test below checks that
//! each layer is byte for byte the one git writes for the same pack.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use odb_index::idx::PackIndex;
use odb_index::midx::write::{PackEntries, write_midx};
use odb_index::testing::{CHAIN_DIR, CHAIN_FILE};
use odb_index::{HashKind, ObjectId};
use odb_index_testkit::try_git;

use super::row::{Row, Val};
use super::targets::{Cmp, Figure, Target, load};

/// Ids read by each process (as the figure in docs/BENCHMARKS.md).
const IDS: usize = 10;

/// The scenario's rows: the chain's fixture built under `dir` with `layers` layers (1 000; 100 in a quick run),
/// then `runs` runs of each process, interleaved.
pub fn rows(dir: &Path, layers: usize, runs: usize) -> Result<Vec<Row>, String> {
    let scenario = format!("open-chain-{layers}");
    let t = Instant::now();
    let (repo, ids) = chain_repo(dir, layers)?;
    eprintln!(
        "bench: {scenario}: {layers} packs and layers written and verified by git in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let step = (ids.len() / IDS).max(1);
    let ids: Vec<ObjectId> = ids.iter().step_by(step).take(IDS).copied().collect();
    let ids_file = dir.join("chain-ids.txt");
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    std::fs::write(&ids_file, text).map_err(|e| format!("{}: {e}", ids_file.display()))?;
    let exe = crate::self_exe()?;
    let arms = [Arm::Odb(&exe), Arm::Git];
    let mut wall = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        for (i, arm) in arms.iter().enumerate() {
            let t = Instant::now();
            arm.run(&repo, &ids_file, ids.len(), None)?;
            wall[i].push(t.elapsed().as_nanos() as f64);
        }
    }
    let calls: Vec<Option<u64>> = arms
        .iter()
        .map(|arm| syscalls(arm, &repo, &ids_file, ids.len(), dir))
        .collect::<Result<_, _>>()?;
    let load = load();
    let med: Vec<(f64, f64)> = wall.iter().map(|w| min_median(w)).collect();
    let time_ratio = med[0].1 / med[1].1;
    let call_ratio = match (calls[0], calls[1]) {
        (Some(o), Some(g)) if g > 0 => Some(o as f64 / g as f64),
        _ => None,
    };
    let shown = |c: Option<u64>| c.map_or("strace not installed".to_owned(), |c| c.to_string());
    let mut rows = Vec::new();
    for (i, name) in [ODB_ARM, GIT_ARM].into_iter().enumerate() {
        let mut row = Row {
            ns_min: Some(med[i].0),
            ns_median: Some(med[i].1),
            runs,
            lookups: ids.len(),
            note: format!(
                "ns per process (open + {} ids' type and size), {} system calls (strace -f -c); load {load:.1}",
                ids.len(),
                shown(calls[i])
            ),
            ..Row::new(&scenario, name)
        }
        .with("load", Val::Num(load));
        if let Some(c) = calls[i] {
            row = row.with("syscalls", Val::Num(c as f64));
        }
        if i == 0 {
            row.note = format!(
                "{}; {time_ratio:.2}x git's time (medians, same run){}",
                row.note,
                call_ratio.map_or(String::new(), |r| format!(", {r:.2}x git's system calls"))
            );
            row = row.with("time_ratio_to_git", Val::Num(time_ratio));
            if let Some(r) = call_ratio {
                row = row.with("syscalls_ratio_to_git", Val::Num(r));
            }
        }
        rows.push(row);
    }
    eprintln!(
        "bench: {scenario}: {time_ratio:.2}x git's time, system calls {} vs git {}",
        shown(calls[0]),
        shown(calls[1])
    );
    Ok(rows)
}

const ODB_ARM: &str = "odb-index adapter info (process)";
const GIT_ARM: &str = "git cat-file --batch-check (process)";

/// The scenario's targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "open-chain: a 1 000-layer chain's open in no more system calls than git",
        figure: Figure::Extra("open-chain-*", ODB_ARM, "syscalls_ratio_to_git"),
        cmp: Cmp::AtMost(1.0),
        unit: "x",
        load: false,
        verdict: true,
    },
    Target {
        name: "open-chain: a 1 000-layer chain's open at most 1.5x git's time",
        figure: Figure::Extra("open-chain-*", ODB_ARM, "time_ratio_to_git"),
        cmp: Cmp::AtMost(1.5),
        unit: "x",
        load: true,
        verdict: true,
    },
];

/// One of the two processes.
enum Arm<'a> {
    /// This binary's hidden `--chain-child IDS_FILE OBJECTS` mode.
    Odb(&'a Path),
    Git,
}

impl Arm<'_> {
    /// The process's command line, on `repo`, reading the ids of `ids_file` (as argument or standard input).
    fn command(&self, repo: &Path, ids_file: &Path) -> Command {
        match self {
            Arm::Odb(exe) => {
                let mut c = Command::new(exe);
                c.arg("--chain-child")
                    .arg(ids_file)
                    .arg(repo.join("objects"));
                c
            }
            Arm::Git => {
                let mut c = Command::new("git");
                c.arg("--git-dir")
                    .arg(repo)
                    .args(["cat-file", "--batch-check"]);
                c
            }
        }
    }

    /// Run once (under `strace -f -c -o FILE` if `strace` is given); every one of `want` ids must be found.
    fn run(
        &self,
        repo: &Path,
        ids_file: &Path,
        want: usize,
        strace: Option<&Path>,
    ) -> Result<(), String> {
        let inner = self.command(repo, ids_file);
        let mut c = match strace {
            None => inner,
            Some(out) => {
                let mut c = Command::new("strace");
                c.args(["-f", "-c", "-o"]).arg(out).arg(inner.get_program());
                c.args(inner.get_args());
                c
            }
        };
        let stdin = std::fs::File::open(ids_file).map_err(|e| e.to_string())?;
        let o = c
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .map_err(|e| format!("{:?}: {e}", c.get_program()))?;
        let out = String::from_utf8_lossy(&o.stdout);
        let found = match self {
            Arm::Odb(_) => out.trim().parse().unwrap_or(0),
            Arm::Git => out.lines().filter(|l| !l.ends_with("missing")).count(),
        };
        if !o.status.success() || found != want {
            return Err(format!(
                "open-chain: {:?} found {found} of {want}: {}",
                c.get_program(),
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(())
    }
}

/// The system calls of one run of `arm` (`strace -f -c`), `None` if strace is not installed.
fn syscalls(
    arm: &Arm<'_>,
    repo: &Path,
    ids_file: &Path,
    want: usize,
    dir: &Path,
) -> Result<Option<u64>, String> {
    let strace_ok = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !strace_ok {
        return Ok(None);
    }
    let out = dir.join("chain-strace.txt");
    arm.run(repo, ids_file, want, Some(&out))?;
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    strace_total(&text)
        .map(Some)
        .ok_or_else(|| format!("open-chain: no total in {}", out.display()))
}

/// The `calls` column of the `total` line of a `strace -c` summary.
fn strace_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.trim_end().ends_with(" total"))?;
    // "100.00  0.012  2  6205  123  total": % time, seconds, usecs/call, calls, [errors,] syscall.
    line.split_whitespace().nth(3)?.parse().ok()
}

fn min_median(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// The hidden `--chain-child IDS_FILE OBJECTS` mode: open the objects directory through the adapter (as a front
/// end does), read the type and size of each id of the file, print how many were found. The process ends without
/// dropping the store, as the command and git do (its mappings go with the process).
pub fn child(ids_file: &Path, objects: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(ids_file).map_err(|e| e.to_string())?;
    let objects = odb_index_gix::Objects::open(objects).map_err(|e| e.to_string())?;
    let mut found = 0;
    for l in text.lines() {
        let id: ObjectId = l.parse().map_err(|e| format!("{l}: {e}"))?;
        if let Some(info) = objects.info(&id).map_err(|e| e.to_string())? {
            std::hint::black_box(info.size);
            found += 1;
        }
    }
    println!("{found}");
    std::mem::forget(objects);
    Ok(())
}

/// The hidden `--make-chain DIR` mode: [`chain_repo`] of 1 000 layers in `dir`, its blobs' ids in `dir/ids`
/// (one a line, in layer order); prints the repository's path. For measuring by hand
/// (docs/BENCHMARKS.md, "Opening a 1 000-layer chain").
pub fn make(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (repo, ids) = chain_repo(dir, 1000)?;
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let file = dir.join("ids");
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    println!("{}", repo.display());
    Ok(())
}

/// A bare repository `dir/chain.git` of `n` packs of one blob each (written by `git fast-import`), under an
/// incremental multi-pack-index chain of `n` layers, one per pack, the layers written by the crate's
/// [`write_midx`] in the packs' name order and accepted by `git multi-pack-index verify`. Returns the repository
/// and its blobs' ids (in layer order).
pub fn chain_repo(dir: &Path, n: usize) -> Result<(PathBuf, Vec<ObjectId>), String> {
    try_git(dir, &["init", "-q", "--bare", "chain.git"], b"")?;
    let repo = dir.join("chain.git");
    // One pack per blob: `checkpoint` ends the current pack (unpackLimit=0: a pack even for one object).
    let mut stream = String::with_capacity(n * 48);
    for i in 0..n {
        let data = format!("chain blob {i} of {n}\n");
        stream.push_str(&format!(
            "blob\ndata {}\n{data}\ncheckpoint\n\n",
            data.len()
        ));
    }
    try_git(
        &repo,
        &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
        stream.as_bytes(),
    )?;
    let pack_dir = repo.join("objects").join("pack");
    let ids = write_chain(&pack_dir)?;
    if ids.len() != n {
        return Err(format!(
            "{}: {} packs, expected {n}",
            pack_dir.display(),
            ids.len()
        ));
    }
    try_git(&repo, &["multi-pack-index", "verify", "--no-progress"], b"")?;
    Ok((repo, ids))
}

/// Write a chain of one layer per pack of `pack_dir` (SHA-1), base first in the packs' name order; returns the
/// ids of the packs' objects in that order.
fn write_chain(pack_dir: &Path) -> Result<Vec<ObjectId>, String> {
    let err = |p: &Path, e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
    let mut names: Vec<String> = std::fs::read_dir(pack_dir)
        .map_err(|e| err(pack_dir, &e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".idx"))
        .collect();
    names.sort();
    let chain_dir = pack_dir.join(CHAIN_DIR);
    std::fs::create_dir_all(&chain_dir).map_err(|e| err(&chain_dir, &e))?;
    let (mut chain, mut ids) = (String::new(), Vec::new());
    for name in names {
        let path = pack_dir.join(&name);
        let idx = PackIndex::open(&path, HashKind::Sha1).map_err(|e| err(&path, &e))?;
        let entries: Vec<(ObjectId, u64)> = idx.iter().collect();
        ids.extend(entries.iter().map(|e| e.0));
        let bytes = write_midx(1, HashKind::Sha1, &[PackEntries { name, entries }])
            .map_err(|e| err(&path, &e))?;
        let checksum = ObjectId::from_bytes(&bytes[bytes.len() - 20..])
            .ok_or("a layer shorter than its checksum")?;
        let layer = chain_dir.join(format!("multi-pack-index-{checksum}.midx"));
        std::fs::write(&layer, &bytes).map_err(|e| err(&layer, &e))?;
        chain.push_str(&format!("{checksum}\n"));
    }
    let file = chain_dir.join(CHAIN_FILE);
    std::fs::write(&file, chain).map_err(|e| err(&file, &e))?;
    Ok(ids)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// The layers the fixture writes are byte for byte the ones `git multi-pack-index write --incremental`
    /// writes for the same packs in the same order (so the chain is git's kind of chain), and git accepts it.
    #[test]
    fn fixture_layers_are_the_ones_git_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let (repo, ids) = chain_repo(tmp.path(), 5).unwrap();
        assert_eq!(ids.len(), 5);
        let chain_dir = repo.join("objects/pack").join(CHAIN_DIR);
        let ours = std::fs::read_to_string(chain_dir.join(CHAIN_FILE)).unwrap();
        assert_eq!(ours.lines().count(), 5);
        // git's chain over the same packs, one `write --incremental` per pack in the same (name) order: in a
        // copy of the repository whose packs are added to it one by one.
        let git_repo = tmp.path().join("git.git");
        try_git(tmp.path(), &["init", "-q", "--bare", "git.git"], b"").unwrap();
        let (from, to) = (repo.join("objects/pack"), git_repo.join("objects/pack"));
        let mut packs: Vec<String> = std::fs::read_dir(&from)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".idx"))
            .collect();
        packs.sort();
        for idx in &packs {
            for ext in ["pack", "idx"] {
                let name = idx.replace(".idx", &format!(".{ext}"));
                std::fs::copy(from.join(&name), to.join(&name)).unwrap();
            }
            try_git(
                &git_repo,
                &["multi-pack-index", "write", "--incremental"],
                b"",
            )
            .unwrap();
        }
        let theirs = std::fs::read_to_string(to.join(CHAIN_DIR).join(CHAIN_FILE)).unwrap();
        assert_eq!(ours, theirs, "same layers (named by their checksums)");
        for l in ours.lines() {
            let name = format!("multi-pack-index-{l}.midx");
            assert_eq!(
                std::fs::read(chain_dir.join(&name)).unwrap(),
                std::fs::read(to.join(CHAIN_DIR).join(&name)).unwrap(),
                "{name}"
            );
        }
        // A layer git would refuse makes the fixture fail: flip a byte of an object id in the last layer.
        let last = chain_dir.join(format!(
            "multi-pack-index-{}.midx",
            ours.lines().last().unwrap()
        ));
        let mut bytes = std::fs::read(&last).unwrap();
        let at = bytes.len() - 20 - 8 - 1;
        bytes[at] ^= 1;
        std::fs::write(&last, bytes).unwrap();
        assert!(try_git(&repo, &["multi-pack-index", "verify", "--no-progress"], b"").is_err());
    }

    #[test]
    fn strace_total_reads_the_calls_column() {
        let text = "% time     seconds  usecs/call     calls    errors syscall\n\
                    ------ ----------- ----------- --------- --------- ----------------\n \
                    60.00    0.006000           2      2007        12 newfstatat\n\
                    ------ ----------- ----------- --------- --------- ----------------\n\
                    100.00    0.010000           1      6205       123 total\n";
        assert_eq!(strace_total(text), Some(6205));
        assert_eq!(strace_total("nothing"), None);
    }
}
