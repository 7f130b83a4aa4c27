//! Hostile and odd object directories, corrupt index files, and files truncated or rewritten in place under
//! `LoadMode::Read`: the store serves what it can (compared with `git cat-file --batch-check`), reports what it
//! cannot, and never panics. See docs/RELIABILITY.md.
use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use odb_index::idx::write::{Entry, write_idx};
use odb_index::{
    Error, HashKind, LoadMode, Location, ObjectId, Options, Problem, RefreshMode, Store,
};
use odb_index_testkit::*;

/// A bare repository with three packs (60 blobs plus trees and commits) and two loose blobs.
struct Fixture {
    repo: tempfile::TempDir,
    format: &'static str,
    /// Every object, as git lists it.
    all: Vec<String>,
    /// Ids listed by each `.idx` (sorted by path), with their offsets.
    packs: BTreeMap<PathBuf, BTreeMap<String, u64>>,
    /// The loose objects.
    loose: Vec<String>,
}

impl Fixture {
    fn new(format: &'static str) -> Fixture {
        let repo = init_repo(format, true);
        for p in 0..3 {
            fast_import_blobs(repo.path(), 20, 100 + p, &format!("b{p}"));
        }
        let loose: Vec<String> = (0..2)
            .map(|i| {
                git_stdin(
                    repo.path(),
                    &["hash-object", "-w", "--stdin"],
                    format!("loose {i}\n").as_bytes(),
                )
                .trim()
                .to_owned()
            })
            .collect();
        let mut f = Fixture {
            all: all_objects(repo.path()),
            repo,
            format,
            packs: BTreeMap::new(),
            loose,
        };
        f.reread_packs();
        assert_eq!(f.packs.len(), 3);
        f
    }

    fn reread_packs(&mut self) {
        self.packs = idx_files(&self.objects())
            .into_iter()
            .map(|p| {
                let ids = show_index(&p, self.format).into_iter().collect();
                (p, ids)
            })
            .collect();
    }

    fn path(&self) -> &Path {
        self.repo.path()
    }

    fn objects(&self) -> PathBuf {
        objects_dir(self.repo.path())
    }

    fn pack_dir(&self) -> PathBuf {
        self.objects().join("pack")
    }

    fn kind(&self) -> HashKind {
        self.format.parse().unwrap()
    }

    fn hex_len(&self) -> usize {
        self.kind().hex_len()
    }

    /// The `n`th `.idx` (by name).
    fn idx(&self, n: usize) -> PathBuf {
        self.packs.keys().nth(n).unwrap().clone()
    }

    /// Ids listed only by the `n`th `.idx`.
    fn only_in(&self, n: usize) -> Vec<String> {
        let me = self.idx(n);
        self.packs[&me]
            .keys()
            .filter(|id| {
                self.packs
                    .iter()
                    .all(|(p, ids)| *p == me || !ids.contains_key(*id))
            })
            .cloned()
            .collect()
    }

    fn absent(&self) -> Vec<String> {
        absent_ids(50, self.hex_len(), 0xabad_1dea)
    }
}

/// Which of `ids` git finds (`git cat-file --batch-check`).
fn git_has(repo: &Path, ids: &[String]) -> Vec<bool> {
    let input: String = ids.iter().map(|i| format!("{i}\n")).collect();
    let out = git_stdin(repo, &["cat-file", "--batch-check"], input.as_bytes());
    let answers: Vec<bool> = out.lines().map(|l| !l.ends_with(" missing")).collect();
    assert_eq!(answers.len(), ids.len(), "git answered {out}");
    answers
}

fn oid(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// Look up every id of `ids` and check the store says "present" exactly when git does, with no error, and
/// that every packed location is one that the named pack's index lists.
fn assert_agrees_with_git(f: &Fixture, store: &Arc<Store>, ids: &[String]) {
    let expected = git_has(f.path(), ids);
    let mut h = store.handle();
    for (id, &present) in ids.iter().zip(&expected) {
        let got = h.locate(&oid(id));
        match (&got, present) {
            (Ok(Some(loc)), true) => check_location(f, store, id, *loc),
            (Ok(None), false) => {}
            _ => panic!("{id}: git says present={present}, the store says {got:?}"),
        }
    }
}

/// A location is right if the pack it names lists `id` at that offset (or `id` is a loose file).
fn check_location(f: &Fixture, store: &Store, id: &str, loc: Location) {
    match loc {
        Location::Packed { pack, offset } => {
            let pack = store.pack_path(pack).expect("pack of a fresh location");
            let idx = pack.with_extension("idx");
            let listed = show_index(&idx, f.format);
            assert!(
                listed.iter().any(|(i, o)| i == id && *o == offset),
                "{id} reported in {} at {offset}, which that index does not say",
                idx.display()
            );
        }
        Location::Loose { dir } => {
            let d = &store.objects_dirs()[dir];
            assert!(
                d.join(&id[..2]).join(&id[2..]).is_file(),
                "{id} reported loose in {} but no such file",
                d.display()
            );
        }
    }
}

/// Replace `path` with `bytes` the way git does: write a temporary file, then rename it over the old name.
fn replace_by_rename(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(format!(
        "tmp_replace_{}",
        path.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Every id the fixture knows, loose and absent ones included.
fn everything(f: &Fixture) -> Vec<String> {
    let mut v = f.all.clone();
    v.extend(f.absent());
    v
}

fn open(f: &Fixture) -> Arc<Store> {
    Store::open(f.path(), Options::default()).unwrap()
}

/// Our answers for every object of the fixture (packed, loose, absent): found where the files say, absent as
/// `None`. (git itself may refuse to run with a broken multi-pack-index, so this does not ask it.)
fn assert_serves_everything(f: &Fixture, store: &Arc<Store>) {
    let mut h = store.handle();
    for id in &f.all {
        let loc = h
            .locate(&oid(id))
            .unwrap_or_else(|e| panic!("{id}: {e}"))
            .unwrap_or_else(|| panic!("{id} reported missing"));
        check_location(f, store, id, loc);
    }
    for id in f.absent() {
        assert_eq!(h.locate(&oid(&id)).unwrap(), None);
    }
}

/// `Error::Incomplete` naming `path`.
fn assert_incomplete_naming(r: &Result<Option<Location>, Error>, path: &Path) {
    match r {
        Err(Error::Incomplete { failed }) => assert!(
            failed.iter().any(|(p, _)| p == path),
            "Incomplete does not name {}: {failed:?}",
            path.display()
        ),
        other => panic!(
            "expected Incomplete naming {}, got {other:?}",
            path.display()
        ),
    }
}

/// A multi-pack-index that the store could not use (at listing or at load), worked around by the `.idx` files.
fn is_midx_problem(p: &odb_index::Problem) -> bool {
    matches!(
        p,
        odb_index::Problem::MultiPackIndexIgnored { .. }
            | odb_index::Problem::MultiPackIndexNotLoaded { .. }
    )
}

mod corrupt;
mod in_place;
mod odd_dirs;
