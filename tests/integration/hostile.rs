//! Hostile files beside real git repositories (issue 13): index files whose structure and checksums are valid
//! but whose offsets lie, packs that do not match their index, multi-pack-indices whose entries lie, FIFOs,
//! sockets and devices where files should be, an index claiming 2^31 objects in a sparse file, and unreadable
//! pack directories and alternates. For each: no wrong location, no hang, no panic, a typed error naming the
//! file, and every object present in a good pack still found; compared with what `git` does where it can be.
//! See docs/RELIABILITY.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use odb_index::data::{FileKind, FileProblem, file_problem};
use odb_index::idx::{IdxProblem, PackIndex};
use odb_index::midx::{MidxProblem, MultiPackIndex};
use odb_index::testing::PackIndexExt;
use odb_index::{
    Error, HashKind, IncompleteMode, LoadMode, Location, MidxCheck, ObjectId, Options, Problem,
    RefreshMode, Store,
};
use odb_index_testkit::*;

mod idx_lies;
mod midx_lies;
mod sparse_idx;
mod special_files;
mod unreadable;

pub(crate) use midx_lies::{chunk_range, resize_chunk};

// ---------------------------------------------------------------------------------------------------------
// The generator: a real repository, and hostile edits of its files.
// ---------------------------------------------------------------------------------------------------------

/// A bare repository made by git: three packs (20 blobs each, with trees and commits) and two loose blobs.
struct Repo {
    dir: tempfile::TempDir,
    format: &'static str,
    /// Every object, as git lists it.
    all: Vec<String>,
    /// The loose objects.
    loose: Vec<String>,
    /// For each `.idx` (sorted by path), the ids it lists in order, with their offsets, read with
    /// `git show-index` before any file was touched.
    packs: BTreeMap<PathBuf, Vec<(String, u64)>>,
}

impl Repo {
    fn new(format: &'static str) -> Repo {
        let dir = init_repo(format, true);
        for p in 0..3 {
            fast_import_blobs(dir.path(), 20, 300 + p, &format!("b{p}"));
        }
        let loose = (0..2)
            .map(|i| {
                git_stdin(
                    dir.path(),
                    &["hash-object", "-w", "--stdin"],
                    format!("hostile loose {i}\n").as_bytes(),
                )
                .trim()
                .to_owned()
            })
            .collect();
        let packs = idx_files(&objects_dir(dir.path()))
            .into_iter()
            .map(|p| {
                let ids = show_index(&p, format);
                (p, ids)
            })
            .collect::<BTreeMap<_, _>>();
        assert_eq!(packs.len(), 3);
        Repo {
            all: all_objects(dir.path()),
            dir,
            format,
            loose,
            packs,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn pack_dir(&self) -> PathBuf {
        objects_dir(self.path()).join("pack")
    }

    fn kind(&self) -> HashKind {
        self.format.parse().unwrap()
    }

    fn idx(&self, n: usize) -> PathBuf {
        self.packs.keys().nth(n).unwrap().clone()
    }

    /// Ids listed by the `n`th `.idx` only.
    fn only_in(&self, n: usize) -> Vec<String> {
        let me = self.idx(n);
        self.packs[&me]
            .iter()
            .map(|(id, _)| id)
            .filter(|id| {
                self.packs
                    .iter()
                    .all(|(p, ids)| *p == me || !ids.iter().any(|(i, _)| i == *id))
            })
            .cloned()
            .collect()
    }

    /// Every object not in `except`.
    fn all_but(&self, except: &[String]) -> Vec<String> {
        self.all
            .iter()
            .filter(|id| !except.contains(id))
            .cloned()
            .collect()
    }

    fn absent(&self) -> Vec<String> {
        absent_ids(20, self.kind().hex_len(), 0x5eed_0013)
    }

    /// A location is right if the pack it names listed `id` at that offset when the repository was made (so an
    /// index copied over another cannot vouch for itself), or `id` is a loose file.
    fn check_location(&self, store: &Store, id: &str, loc: Location) {
        match loc {
            Location::Packed { pack, offset } => {
                let idx = store.pack_path(pack).unwrap().with_extension("idx");
                let listed = self.packs.get(&idx).unwrap_or_else(|| {
                    panic!(
                        "{id}: reported in {}, not a pack of the repository",
                        idx.display()
                    )
                });
                assert!(
                    listed.iter().any(|(i, o)| i == id && *o == offset),
                    "{id} reported in {} at {offset}, where git's index does not put it",
                    idx.display()
                );
            }
            Location::Loose { dir } => {
                let d = &store.objects_dirs()[dir];
                assert!(
                    d.join(&id[..2]).join(&id[2..]).is_file(),
                    "{id} not loose in {}",
                    d.display()
                );
            }
        }
    }

    /// Every id of `ids` is found, at a right location.
    fn assert_found(&self, store: &Arc<Store>, ids: &[String]) {
        let mut h = store.handle();
        for id in ids {
            let loc = h
                .locate(&oid(id))
                .unwrap_or_else(|e| panic!("{id}: {e}"))
                .unwrap_or_else(|| panic!("{id} reported missing"));
            self.check_location(store, id, loc);
        }
    }
}

fn oid(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// What `git cat-file --batch-check` says of each of `ids` ("missing", or the type and size), its exit status
/// and its standard error. git is run with a timeout-free pipe: only for cases where it cannot hang.
fn git_batch_check(repo: &Path, ids: &[String]) -> (Vec<String>, bool, String) {
    let input: String = ids.iter().map(|i| format!("{i}\n")).collect();
    let mut child = git_cmd(repo)
        .args(["cat-file", "--batch-check"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut si = child.stdin.take().unwrap();
        let _ = si.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Which of `ids` git finds.
fn git_has(repo: &Path, ids: &[String]) -> Vec<bool> {
    let (lines, ok, err) = git_batch_check(repo, ids);
    assert!(ok, "git failed: {err}");
    lines.iter().map(|l| !l.ends_with(" missing")).collect()
}

/// Replace `path` by `bytes` the way git replaces files: write a temporary file, rename it over the old one.
pub(crate) fn replace_by_rename(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(format!(
        "tmp_hostile_{}",
        path.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Reseal a `.idx` or multi-pack-index after an edit: its last hash-length bytes are the hash of the rest.
pub(crate) fn reseal(bytes: &mut [u8], kind: HashKind) {
    let n = bytes.len() - kind.len();
    let sum = kind.digest(&bytes[..n]);
    bytes[n..].copy_from_slice(sum.as_bytes());
}

/// A version 2 `.idx` whose entry `pos` (in sorted order) has offset `offset`: a 32-bit offset, or, from 2^31
/// on, a new row of the 64-bit table. Structure and checksum stay valid.
fn idx_with_offset(idx: &[u8], kind: HashKind, pos: usize, offset: u64) -> Vec<u8> {
    let h = kind.len();
    let mut b = idx.to_vec();
    let n = u32::from_be_bytes(b[8 + 1020..8 + 1024].try_into().unwrap()) as usize;
    let table = 8 + 1024 + n * (h + 4);
    let word = if offset < 1 << 31 {
        offset as u32
    } else {
        let large_at = table + 4 * n;
        let rows = (b.len() - 2 * h - large_at) / 8;
        b.splice(
            large_at + 8 * rows..large_at + 8 * rows,
            offset.to_be_bytes(),
        );
        0x8000_0000 | rows as u32
    };
    b[table + 4 * pos..table + 4 * pos + 4].copy_from_slice(&word.to_be_bytes());
    reseal(&mut b, kind);
    b
}

/// The `Error::CorruptIndex` problem of `e`, checking it names `idx`.
#[track_caller]
fn corrupt_index_problem(e: &Error, idx: &Path) -> IdxProblem {
    match e {
        Error::CorruptIndex { path, problem } => {
            assert_eq!(path, idx, "{e}");
            assert!(e.to_string().contains(idx.to_str().unwrap()), "{e}");
            problem.clone()
        }
        other => panic!(
            "expected a corrupt index naming {}, got {other:?}",
            idx.display()
        ),
    }
}

/// The errors `Error::Incomplete` gives for `path`.
#[track_caller]
fn incomplete_for(r: &Result<Option<Location>, Error>, path: &Path) -> Arc<Error> {
    match r {
        Err(Error::Incomplete { failed }) => failed
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, e)| Arc::clone(e))
            .unwrap_or_else(|| panic!("Incomplete does not name {}: {failed:?}", path.display())),
        other => panic!(
            "expected Incomplete naming {}, got {other:?}",
            path.display()
        ),
    }
}

/// The `FileProblem` of an `Error::Io` naming `path`.
#[track_caller]
fn io_file_problem(e: &Error, path: &Path) -> FileProblem {
    match e {
        Error::Io { path: p, source } if p == path => file_problem(source)
            .cloned()
            .unwrap_or_else(|| panic!("{e}: no file problem")),
        other => panic!(
            "expected an I/O error naming {}, got {other:?}",
            path.display()
        ),
    }
}
