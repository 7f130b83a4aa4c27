//! Fixtures made with the real `git`: the one-pack repository of the sched_yield report (12 328 objects, no
//! loose objects), 100 packs with and without a multi-pack-index, and a synthetic 1 000 000-object index.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use odb_index::idx::write::{Entry, write_idx};
use odb_index::midx::write::{PackEntries, write_midx};
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

/// The report's fixture: 12 328 objects (12 326 blobs, one tree, one commit) in one pack, plus 1 024 loose
/// blobs (so that, as in real repositories, nearly every fan-out directory `xx/` exists and a probe of a
/// missing object walks into one). Returns the objects directory.
pub fn one_pack(dir: &Path) -> Result<PathBuf, String> {
    let repo = init(dir)?;
    fast_import(&repo, "one-pack", 12_326, true)?;
    loose_blobs(dir, &repo, 1024)?;
    Ok(repo.join("objects"))
}

/// Three objects directories: a new repository (one pack of 123 blobs, 256 loose blobs) whose
/// `info/alternates` names `main` (the one-pack fixture's objects directory) and a third repository like the
/// first. Returns the new repository's objects directory.
pub fn three_dirs(dir: &Path, main: &Path) -> Result<PathBuf, String> {
    let mut objects = Vec::new();
    for name in ["own", "alt"] {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        let repo = init(&d)?;
        fast_import(&repo, name, 123, true)?;
        loose_blobs(&d, &repo, 256)?;
        objects.push(repo.join("objects"));
    }
    let alternates = objects[0].join("info/alternates");
    std::fs::write(
        &alternates,
        format!("{}\n{}\n", main.display(), objects[1].display()),
    )
    .map_err(|e| format!("{}: {e}", alternates.display()))?;
    Ok(objects.swap_remove(0))
}

/// Write `n` loose blobs into `repo` (`git hash-object -w --stdin-paths`).
fn loose_blobs(dir: &Path, repo: &Path, n: usize) -> Result<(), String> {
    let src = dir.join("loose-src");
    std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut paths = String::new();
    for i in 0..n {
        let p = src.join(format!("b{i}"));
        std::fs::write(&p, format!("loose blob {i}\n"))
            .map_err(|e| format!("{}: {e}", p.display()))?;
        paths.push_str(&format!("{}\n", p.display()));
    }
    run_git(
        repo,
        &["hash-object", "-w", "--stdin-paths"],
        paths.as_bytes(),
    )?;
    std::fs::remove_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))
}

/// A stub `.pack` for an index written by hand: the 12-byte header, a sparse hole up to `len - 20`, then the
/// pack checksum the index records (what a store that checks the pack's trailer and offsets wants).
fn stub_pack(path: &Path, objects: u32, len: u64, checksum: &[u8]) -> Result<(), String> {
    use std::io::{Seek as _, SeekFrom};
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f = std::fs::File::create(path).map_err(err)?;
    f.write_all(b"PACK\0\0\0\x02").map_err(err)?;
    f.write_all(&objects.to_be_bytes()).map_err(err)?;
    f.set_len(len).map_err(err)?;
    f.seek(SeekFrom::Start(len - checksum.len() as u64))
        .map_err(err)?;
    f.write_all(checksum).map_err(err)
}

/// An objects directory holding one sparse version 2 index that claims `n` objects (`n` up to 2^32 - 1): the
/// header and fan-out are written (ids spread evenly over the buckets), the rest is a hole of zeros
/// (`8 + 1024 + 28 n + 40` bytes, about 60 GB for 2^31 objects, taking no disk space), with a stub pack. Only
/// constant-time opening can answer a first miss on it quickly and in little memory.
pub fn sparse_index(dir: &Path, n: u64) -> Result<PathBuf, String> {
    let objects = dir.join("sparse/objects");
    let pack_dir = objects.join("pack");
    std::fs::create_dir_all(&pack_dir).map_err(|e| format!("{}: {e}", pack_dir.display()))?;
    let idx = pack_dir.join(format!("pack-{}.idx", "0".repeat(40)));
    let err = |e: std::io::Error| format!("{}: {e}", idx.display());
    let mut head = Vec::with_capacity(8 + 1024);
    head.extend_from_slice(b"\xfftOc\0\0\0\x02");
    for b in 0..256u64 {
        head.extend_from_slice(&(((b + 1) * n / 256) as u32).to_be_bytes());
    }
    let mut f = std::fs::File::create(&idx).map_err(err)?;
    f.write_all(&head).map_err(err)?;
    f.set_len(8 + 1024 + 28 * n + 40).map_err(err)?;
    drop(f);
    // The index's trailer is zeros, so the pack checksum it records is 20 zero bytes.
    // The header counts what the index claims (the store checks it against the index, as git does).
    stub_pack(&idx.with_extension("pack"), n as u32, 1 << 20, &[0u8; 20])?;
    Ok(objects)
}

/// Files of the generated project: 8 directories of 4 subdirectories of 12 files (`d0/s0/f0.rs` ...).
const PROJECT: (usize, usize, usize) = (8, 4, 12);

/// A number below `n`.
fn below(n: usize, rng: &mut Rng) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// A line of [`history`]'s generated source: an indent, then 3-10 words of a small vocabulary.
fn source_line(rng: &mut Rng) -> String {
    const WORDS: &[&str] = &[
        "let", "fn", "self", "match", "if", "else", "return", "Some", "None", "Ok", "Err", "map",
        "iter", "len", "index", "offset", "id", "pack", "entry", "value", "count", "next", "key",
        "slot", "path", "=", "==", "+", "(", ")", "{", "}", ";", ",", "&", "mut", "u32", "usize",
        "u64", "Vec", "out",
    ];
    let mut l = "    ".repeat(below(4, rng));
    for k in 0..3 + below(8, rng) {
        if k > 0 {
            l.push(' ');
        }
        l.push_str(WORDS[below(WORDS.len(), rng)]);
    }
    l
}

/// A fast-import `M` command writing `lines` at `path`.
fn write_file(stream: &mut Vec<u8>, (path, lines): &(String, Vec<String>)) {
    let text = lines.join("\n") + "\n";
    write!(
        stream,
        "M 100644 inline {path}\ndata {}\n{text}\n",
        text.len()
    )
    .ok();
}

/// A repository with a history written here, not read from anywhere (the bench's "real history"): a project of
/// 384 files of source-like text (lines of identifiers, keywords and punctuation, 20-120 lines a file), the
/// first commit adding them all, each of the next `commits - 1` editing 16 files (two lines replaced, one
/// inserted) and adding one, imported with one `git fast-import` into one pack (fast-import stores a blob as a
/// delta where it can, as it did for the registry's sources this replaces). Commits, trees and blobs, about 40
/// objects a commit. Deterministic (`seed`). Returns the objects directory and how many objects git counts.
pub fn history(dir: &Path, commits: usize, seed: u64) -> Result<(PathBuf, usize), String> {
    let repo = dir.join("real.git");
    run_git(
        dir,
        &[
            "-c",
            "init.defaultBranch=main",
            "init",
            "-q",
            "--bare",
            "real.git",
        ],
        b"",
    )?;
    let mut rng = Rng::new(seed);
    let (dirs, subs, per) = PROJECT;
    let mut files: Vec<(String, Vec<String>)> = Vec::new();
    for (d, s, f) in
        (0..dirs).flat_map(|d| (0..subs).flat_map(move |s| (0..per).map(move |f| (d, s, f))))
    {
        let lines = (0..20 + below(100, &mut rng))
            .map(|_| source_line(&mut rng))
            .collect();
        files.push((format!("d{d}/s{s}/f{f}.rs"), lines));
    }
    let mut stream = Vec::new();
    for c in 0..commits {
        let msg = format!("commit {c}\n");
        write!(
            stream,
            "commit refs/heads/main\ncommitter odb-index <odb-index@example.invalid> {} +0000\ndata {}\n{msg}",
            1_700_000_000 + c,
            msg.len()
        )
        .ok();
        if c == 0 {
            for f in &files {
                write_file(&mut stream, f);
            }
        } else {
            for _ in 0..16 {
                let i = below(files.len(), &mut rng);
                let lines = &mut files[i].1;
                for _ in 0..2 {
                    let at = below(lines.len(), &mut rng);
                    lines[at] = source_line(&mut rng);
                }
                let at = below(lines.len() + 1, &mut rng);
                lines.insert(at, source_line(&mut rng));
                write_file(&mut stream, &files[i]);
            }
            let (d, s) = (below(dirs, &mut rng), below(subs, &mut rng));
            let lines = (0..20 + below(100, &mut rng))
                .map(|_| source_line(&mut rng))
                .collect();
            files.push((format!("d{d}/s{s}/n{c}.rs"), lines));
            write_file(&mut stream, files.last().expect("just pushed"));
        }
        stream.push(b'\n');
    }
    run_git(
        &repo,
        &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
        &stream,
    )?;
    let counted = try_git(&repo, &["count-objects", "-v"], b"")?;
    let objects = counted
        .lines()
        .find_map(|l| l.strip_prefix("in-pack: ")?.trim().parse().ok())
        .ok_or("git count-objects -v: no in-pack count")?;
    Ok((repo.join("objects"), objects))
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

/// An objects directory holding one SHA-1 index of `n` random ids (written with `write_idx`) and a sparse stub
/// `.pack` beside it. Returns the objects directory and the ids.
pub fn big_index(dir: &Path, n: usize, rng: &mut Rng) -> Result<(PathBuf, Vec<ObjectId>), String> {
    big_index_in(&dir.join("big/objects"), n, rng).map(|(objects, ids, _)| (objects, ids))
}

/// The same as [`big_index`] in `dir/big-midx/objects`, with a multi-pack-index over the pack (written by
/// [`write_midx`]: header, `PNAM`, `OIDF`, `OIDL`, `OOFF`, trailer; about 28 bytes per object): for
/// `--open-first-miss [--midx-checksum]`, which times opening it with and without
/// `Options::midx_checksum`.
pub fn big_midx(dir: &Path, n: usize, rng: &mut Rng) -> Result<PathBuf, String> {
    let (objects, ids, name) = big_index_in(&dir.join("big-midx/objects"), n, rng)?;
    let entries = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| (id, 12 + 100 * i as u64))
        .collect();
    let bytes = write_midx(1, HashKind::Sha1, &[PackEntries { name, entries }])
        .map_err(|e| e.to_string())?;
    let path = objects.join("pack/multi-pack-index");
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(objects)
}

/// [`big_index`] in `objects`; also returns the `.idx` file's name.
fn big_index_in(
    objects: &Path,
    n: usize,
    rng: &mut Rng,
) -> Result<(PathBuf, Vec<ObjectId>, String), String> {
    let objects = objects.to_path_buf();
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
    // Sparse: longer than the largest offset, holding no data.
    stub_pack(
        &stem.with_extension("pack"),
        n as u32,
        offset + 20,
        checksum.as_bytes(),
    )?;
    let name = format!("pack-{checksum}.idx");
    Ok((objects, entries.into_iter().map(|e| e.id).collect(), name))
}
