//! Repositories made with the real `git`, for tests and the benchmark.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A `git` command with a clean, reproducible environment: no global config, no auto-gc, fixed identity.
pub fn git_cmd(dir: &Path) -> Command {
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
        .args([
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
            "-c",
            "init.defaultBranch=main",
        ]);
    c
}

/// Run git in `dir` with `args` and `stdin`; return stdout, or an error with git's stderr if it fails (for
/// programs, such as the benchmark, that report failures instead of panicking).
pub fn try_git(dir: &Path, args: &[&str], stdin: &[u8]) -> Result<String, String> {
    let mut child = git_cmd(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running git (is it installed?): {e}"))?;
    // Written from another thread while this one reads the output: an input and an output larger than a pipe's
    // buffer (`cat-file --batch-check` of thousands of ids) would otherwise block both processes.
    let si = child.stdin.take();
    let out = std::thread::scope(|s| {
        if let Some(mut si) = si {
            // git may exit early on error; the error shows in its status below.
            s.spawn(move || {
                let _ = si.write_all(stdin);
            });
        }
        child.wait_with_output()
    })
    .map_err(|e| format!("waiting for git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("git {args:?}: output is not UTF-8"))
}

/// Run git in `dir` with `args` and `stdin`; panic with its stderr if it fails; return stdout.
pub fn git_stdin(dir: &Path, args: &[&str], stdin: &[u8]) -> String {
    try_git(dir, args, stdin).unwrap_or_else(|e| panic!("{e}"))
}

/// Run git in `dir` with `args`; panic with its stderr if it fails; return stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_stdin(dir, args, b"")
}

/// `git init` (bare or not) with the given object format ("sha1" or "sha256") in a new temporary directory.
pub fn init_repo(object_format: &str, bare: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let fmt = format!("--object-format={object_format}");
    let mut args = vec!["init", "-q", fmt.as_str()];
    if bare {
        args.push("--bare");
    }
    args.push(".");
    git(dir.path(), &args);
    dir
}

/// Set the modification time of the objects directory of `repo` and of every directory in it (`pack/`, the
/// fan-out directories, `info/`) to `t`: an hour back, a listing made now trusts their timestamps, as in a
/// repository at rest; in the future, every listing is too recent to trust.
pub fn set_objects_dirs_mtime(repo: &Path, t: std::time::SystemTime) {
    let objects = objects_dir(repo);
    let mut dirs = vec![objects.clone()];
    for e in std::fs::read_dir(&objects).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            dirs.push(e.path());
        }
    }
    for d in dirs {
        std::fs::File::open(&d).unwrap().set_modified(t).unwrap();
    }
}

/// The objects directory of a repository made by [`init_repo`].
pub fn objects_dir(repo: &Path) -> PathBuf {
    let bare = repo.join("objects");
    if bare.is_dir() {
        bare
    } else {
        repo.join(".git/objects")
    }
}

/// Four blobs written loose by git, then their files replaced by what is named like a loose object but is not
/// one, in this order: an empty file, garbage, a dangling symbolic link, a directory. Returns each blob's hex id
/// and file path.
pub fn loose_names_that_are_not_objects(repo: &Path) -> Vec<(String, PathBuf)> {
    let made: Vec<(String, PathBuf)> = ["a", "b", "c", "d"]
        .iter()
        .map(|c| {
            let id = git_stdin(
                repo,
                &["hash-object", "-w", "--stdin"],
                format!("{c}\n").as_bytes(),
            );
            let id = id.trim().to_owned();
            let path = objects_dir(repo).join(&id[..2]).join(&id[2..]);
            std::fs::remove_file(&path).expect("remove the loose file");
            (id, path)
        })
        .collect();
    std::fs::write(&made[0].1, b"").unwrap();
    std::fs::write(&made[1].1, b"garbage\n").unwrap();
    std::os::unix::fs::symlink("/no/such/file", &made[2].1).unwrap();
    std::fs::create_dir(&made[3].1).unwrap();
    made
}

/// Import `n` distinct blobs (contents derived from `seed`) as one commit on `refs/heads/<branch>` with
/// `git fast-import`, which writes them into one new pack. Returns the fast-import stdout (empty).
pub fn fast_import_blobs(repo: &Path, n: usize, seed: u64, branch: &str) {
    let mut s = String::new();
    for i in 0..n {
        let data = format!("blob {seed} {i}\n");
        s.push_str(&format!(
            "blob\nmark :{}\ndata {}\n{}\n",
            i + 1,
            data.len(),
            data
        ));
    }
    let msg = format!("import {seed}");
    s.push_str(&format!(
        "commit refs/heads/{branch}\ncommitter odb-index <odb-index@example.invalid> 1700000000 +0000\ndata {}\n{}\n",
        msg.len(),
        msg
    ));
    for i in 0..n {
        s.push_str(&format!("M 100644 :{} f{}/{}\n", i + 1, i % 97, i));
    }
    s.push('\n');
    // unpackLimit=0: always write a pack, however few objects (git unpacks small imports into loose files).
    git_stdin(
        repo,
        &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
        s.as_bytes(),
    );
}

/// `commits` commits on `refs/heads/<branch>` (contents derived from `seed`), each changing three of 40 files of a
/// few KiB, so that repacks make deltas (fast-import's own pack holds OFS_DELTA entries), written by `git
/// fast-import`, with an annotated tag `t-<branch>` on the tip.
pub fn fast_import_history(repo: &Path, commits: usize, seed: u64, branch: &str) {
    let mut s = String::new();
    for c in 0..commits {
        let msg = format!("commit {seed} {c}");
        s.push_str(&format!(
            "commit refs/heads/{branch}\ncommitter t <t@example.invalid> {} +0000\ndata {}\n{msg}\n",
            1_700_000_000 + c,
            msg.len()
        ));
        for k in 0..3 {
            let f = (c * 7 + k * 13) % 40;
            let mut data = String::new();
            for line in 0..(60 + f * 3) {
                data.push_str(&format!(
                    "file {f} line {line}: the same text in every version\n"
                ));
                if line % 17 == (c + k) % 17 {
                    data.push_str(&format!("changed in commit {seed}.{c}\n"));
                }
            }
            s.push_str(&format!(
                "M 100644 inline d{}/f{f}\ndata {}\n{data}\n",
                f % 4,
                data.len()
            ));
        }
        s.push('\n');
    }
    git_stdin(repo, &["fast-import", "--quiet"], s.as_bytes());
    git(
        repo,
        &[
            "tag",
            "-a",
            "-m",
            &format!("tag {seed}"),
            &format!("t-{branch}"),
            branch,
        ],
    );
}

/// Every object id in the repository, as `git cat-file --batch-all-objects --batch-check` lists them.
pub fn all_objects(repo: &Path) -> Vec<String> {
    git(
        repo,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// `(id, offset)` for every entry of a pack index file, as `git show-index` reads it.
pub fn show_index(idx: &Path, object_format: &str) -> Vec<(String, u64)> {
    let data = std::fs::read(idx).expect("read idx");
    let fmt = format!("--object-format={object_format}");
    let cwd = idx.parent().unwrap();
    git_stdin(cwd, &["show-index", fmt.as_str()], &data)
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            let off = it.next().unwrap().parse().unwrap();
            let id = it.next().unwrap().to_owned();
            (id, off)
        })
        .collect()
}

/// The `.idx` files in `objects/pack`, sorted by name.
pub fn idx_files(objects: &Path) -> Vec<PathBuf> {
    pack_files(objects, "idx")
}

/// The files in `objects/pack` whose extension is `ext` (`"idx"`, `"rev"`, ...), sorted by name.
pub fn pack_files(objects: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(objects.join("pack"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

/// Rename the `.idx` and `.pack` (and drop the `.rev`) of the pack whose index is `idx` to `<prefix><stem>.*`
/// (`prefix` any bytes: git reads a pack whose name is not UTF-8); returns the new `.idx` path.
pub fn rename_pack(idx: &Path, prefix: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = idx.parent().expect("a pack directory");
    let stem = idx.file_stem().expect("a file name").as_bytes();
    let name = |ext: &str| {
        let mut n = prefix.to_vec();
        n.extend_from_slice(stem);
        n.extend_from_slice(ext.as_bytes());
        dir.join(std::ffi::OsStr::from_bytes(&n))
    };
    for ext in [".idx", ".pack"] {
        std::fs::rename(idx.with_extension(&ext[1..]), name(ext)).expect("rename the pack's files");
    }
    let _ = std::fs::remove_file(idx.with_extension("rev"));
    name(".idx")
}

/// Deterministic pseudo-random ids that are (with overwhelming probability) absent from any repository.
pub fn absent_ids(n: usize, hex_len: usize, seed: u64) -> Vec<String> {
    let mut x = seed ^ 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            let mut s = String::with_capacity(hex_len);
            while s.len() < hex_len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                s.push_str(&format!("{x:016x}"));
            }
            s.truncate(hex_len);
            s
        })
        .collect()
}

/// Write a stub `.pack` at `path` for an index a test wrote by hand: the 12-byte header (`PACK`, version 2,
/// `objects`), zeros (a sparse hole) up to `len - checksum.len()`, then `checksum`, the pack checksum the index
/// records. The store compares a pack's last bytes with that checksum and checks every offset against the
/// pack's length (`12 <= offset < len - checksum.len()`), so `len` must exceed the largest offset the index
/// gives by more than the checksum's length.
pub fn write_stub_pack(path: &Path, objects: u32, len: u64, checksum: &[u8]) {
    use std::io::{Seek as _, SeekFrom, Write as _};
    let min = 12 + checksum.len() as u64;
    assert!(len >= min, "a pack is at least {min} bytes");
    let mut f = std::fs::File::create(path).expect("create stub pack");
    f.write_all(b"PACK\0\0\0\x02").unwrap();
    f.write_all(&objects.to_be_bytes()).unwrap();
    f.set_len(len).unwrap();
    f.seek(SeekFrom::Start(len - checksum.len() as u64))
        .unwrap();
    f.write_all(checksum).unwrap();
}

/// The cargo registry's unpacked sources (`$CARGO_HOME/registry/src/*`, `~/.cargo` by default; the registry
/// directory with the most crates), if any: real source trees for fixtures.
pub fn registry_src() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    // The registry with the most crates (a second registry directory may hold only a few).
    let mut dirs: Vec<(usize, PathBuf)> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .map(|p| (std::fs::read_dir(&p).map_or(0, |d| d.count()), p))
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, p)| p)
}

/// Import the first `max_files` files (by path, each at most 64 KiB) under `root` into `refs/heads/<branch>`
/// with `git fast-import`: one commit holding them all, then `rounds` commits each appending a line to a
/// rotating third of them (so that a `git repack -adf` afterwards makes deltas of both kinds of chain). Returns
/// how many files were imported.
pub fn import_tree(
    repo: &Path,
    root: &Path,
    max_files: usize,
    rounds: usize,
    branch: &str,
) -> usize {
    let mut files = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() && e.metadata().is_ok_and(|m| m.len() <= 64 * 1024) {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files.truncate(max_files);
    let mut s = Vec::new();
    for round in 0..=rounds {
        let msg = format!("round {round}");
        write!(
            s,
            "commit refs/heads/{branch}\ncommitter c <c@example.invalid> {} +0000\ndata {}\n{msg}\n",
            1_700_000_000 + round,
            msg.len()
        )
        .expect("to a Vec");
        for (i, f) in files.iter().enumerate() {
            if round > 0 && i % 3 != round % 3 {
                continue;
            }
            let Ok(mut data) = std::fs::read(f) else {
                continue;
            };
            if round > 0 {
                data.extend_from_slice(format!("\n{msg}\n").as_bytes());
            }
            let path = f
                .strip_prefix(root)
                .unwrap_or(f)
                .to_string_lossy()
                .replace(['\n', '"'], "_");
            write!(s, "M 100644 inline \"{path}\"\ndata {}\n", data.len()).expect("to a Vec");
            s.extend_from_slice(&data);
            s.push(b'\n');
        }
        s.push(b'\n');
    }
    git_stdin(repo, &["fast-import", "--quiet"], &s);
    files.len()
}

/// git's t5319.94 ("reader bounds-checks large offset table"), built the way t5319 builds it: a bare SHA-1
/// repository of 63 loose-free blobs in one pack written with `--index-version=2,0x40` (every offset from 0x40 on
/// in the 64-bit table), one 64-bit offset of that `.idx` given the byte `\x02` (t5319's `corrupt_data $idx64
/// $(test_oid idxoff) "\02"`: the offset is then about 2^33, past the pack's end), a multi-pack-index written by
/// `git multi-pack-index write` (which copies that offset into its `LOFF` chunk), then `LOFF` cleared
/// ([`crate::clear_chunk`], checksum not recomputed, as t5319). Returns the repository and the id whose entries
/// cannot be used (its `.idx` entry is past the pack's end, its multi-pack-index entry names a `LOFF` row that is
/// not there).
pub fn t5319_cleared_large_offsets() -> (tempfile::TempDir, String) {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    let input: String = (1..=63).map(|i| format!("blob{i}\n")).collect();
    let mut ids = String::new();
    for line in input.lines() {
        ids.push_str(&git_stdin(
            r,
            &["hash-object", "-w", "--stdin"],
            format!("{line}\n").as_bytes(),
        ));
    }
    let objects = objects_dir(r);
    let hash = git_stdin(
        r,
        &[
            "pack-objects",
            "-q",
            "--index-version=2,0x40",
            &format!("{}/pack/pack", objects.display()),
        ],
        ids.as_bytes(),
    );
    git(r, &["prune-packed"]);
    let idx = objects.join(format!("pack/pack-{}.idx", hash.trim()));
    let mut bytes = std::fs::read(&idx).expect("read idx");
    let n = 63;
    // Byte 3 of the 64-bit table's row 25 (t5319's idxoff, 2999, for 63 SHA-1 objects).
    let at = 8 + 1024 + n * (20 + 4 + 4) + 8 * 25 + 3;
    assert_eq!(at, 2999);
    bytes[at] = 2;
    // Which entry uses row 25: the one whose 32-bit word is 0x8000_0019.
    let words = 8 + 1024 + n * 24;
    let entry = (0..n)
        .find(|&i| bytes[words + 4 * i..words + 4 * i + 4] == 0x8000_0019u32.to_be_bytes())
        .expect("an entry uses row 25");
    let bad: String = bytes[8 + 1024 + 20 * entry..8 + 1024 + 20 * entry + 20]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::remove_file(&idx).expect("remove idx (read-only)");
    std::fs::write(&idx, &bytes).expect("write idx");
    git(r, &["multi-pack-index", "write"]);
    let midx = objects.join("pack/multi-pack-index");
    let cleared = crate::clear_chunk(&std::fs::read(&midx).expect("read midx"), b"LOFF");
    std::fs::remove_file(&midx).expect("remove midx");
    std::fs::write(&midx, cleared).expect("write midx");
    (repo, bad)
}

/// git's t5313.3 ("pack with bad object count" header): a bare SHA-1 repository of one `fast-import` pack of
/// `n` blobs whose header's object count is set to 0xff000000. Returns the repository and the pack's ids (as
/// `git show-index` lists them).
pub fn t5313_bad_header_count(n: usize) -> (tempfile::TempDir, Vec<String>) {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), n, 5313, "b");
    let idx = idx_files(&objects_dir(repo.path())).remove(0);
    let ids = show_index(&idx, "sha1")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let pack = idx.with_extension("pack");
    let mut bytes = std::fs::read(&pack).expect("read pack");
    bytes[8..12].copy_from_slice(b"\xff\0\0\0");
    std::fs::remove_file(&pack).expect("remove pack (read-only)");
    std::fs::write(&pack, &bytes).expect("write pack");
    (repo, ids)
}
