//! Fixtures shared by the API tests (`prefix`, `iter`, `chain`): repositories with several packs, duplicates,
//! loose objects and an alternate, built with git; and git's answers to compare with.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use odb_index::ObjectId;
use odb_index_testkit::*;

pub const FORMATS: [&str; 2] = ["sha1", "sha256"];

/// Write `n` blobs (contents derived from `tag`) as loose objects with `git hash-object -w`; return their ids.
///
/// git does not write an object that it already has (packed, loose, or in an alternate), so write into a
/// repository before it gets alternates that hold the same object.
pub fn write_loose(repo: &Path, tag: &str, n: usize) -> Vec<String> {
    let files = tempfile::tempdir().unwrap();
    let mut paths = String::new();
    for i in 0..n {
        let p = files.path().join(format!("f{i}"));
        std::fs::write(&p, format!("loose {tag} {i}\n")).unwrap();
        paths.push_str(p.to_str().unwrap());
        paths.push('\n');
    }
    let ids: Vec<String> = git_stdin(
        repo,
        &["hash-object", "-w", "--no-filters", "--stdin-paths"],
        paths.as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert_eq!(ids.len(), n);
    for id in &ids {
        let objects = objects_dir(repo);
        assert!(
            objects.join(&id[..2]).join(&id[2..]).is_file(),
            "{id} was not written loose into {}",
            objects.display()
        );
    }
    ids
}

/// Pack `ids` into a new pack (duplicates of packed objects are fine); return its `.idx`.
pub fn pack_objects(repo: &Path, ids: &[String]) -> PathBuf {
    let objects = objects_dir(repo);
    let base = objects.join("pack/pack");
    let mut list = ids.join("\n");
    list.push('\n');
    let hash = git_stdin(
        repo,
        &["pack-objects", "-q", base.to_str().unwrap()],
        list.as_bytes(),
    );
    objects.join(format!("pack/pack-{}.idx", hash.trim()))
}

/// A repository of `format` with three packs (one holding copies of objects of another), loose objects (some
/// also packed) and nothing else. About 1 700 objects: 4-digit prefixes collide.
pub fn mixed_repo(format: &str) -> tempfile::TempDir {
    let repo = init_repo(format, true);
    fast_import_blobs(repo.path(), 700, 1, "a");
    fast_import_blobs(repo.path(), 600, 2, "b");
    let loose = write_loose(repo.path(), "x", 300);
    // A pack of some loose objects and some objects of the first pack: duplicates across packs and loose.
    let mut dup: Vec<String> = loose[..100].to_vec();
    dup.extend(all_objects(repo.path()).into_iter().step_by(7).take(100));
    pack_objects(repo.path(), &dup);
    repo
}

/// What the files hold: for each id, the packs (path, offset) and the loose objects directories.
#[derive(Default)]
pub struct Truth {
    pub packed: HashMap<String, HashSet<(PathBuf, u64)>>,
    pub loose: HashMap<String, HashSet<PathBuf>>,
}

pub fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Read the `.idx` files (with `git show-index`) and loose directories of `dirs`.
pub fn truth(dirs: &[PathBuf], format: &str) -> Truth {
    let mut t = Truth::default();
    let name_len = if format == "sha256" { 62 } else { 38 };
    for dir in dirs {
        let dir = canon(dir);
        for idx in idx_files(&dir) {
            let pack = canon(&idx.with_extension("pack"));
            for (id, off) in show_index(&idx, format) {
                t.packed.entry(id).or_default().insert((pack.clone(), off));
            }
        }
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let fan = entry.file_name().to_str().unwrap().to_owned();
            if fan.len() != 2 || !fan.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            for obj in std::fs::read_dir(entry.path()).unwrap() {
                let name = obj.unwrap().file_name().to_str().unwrap().to_owned();
                if name.len() == name_len {
                    t.loose
                        .entry(format!("{fan}{name}"))
                        .or_default()
                        .insert(dir.clone());
                }
            }
        }
    }
    t
}

/// git's `cat-file --batch-check=%(objectname)` answer for each line of `names`.
pub fn git_batch_check(repo: &Path, names: &[String]) -> Vec<String> {
    let mut input = names.join("\n");
    input.push('\n');
    git_stdin(
        repo,
        &["cat-file", "--batch-check=%(objectname)"],
        input.as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// Every object's id (hex), as [`Handle::objects_sorted`](odb_index::Handle::objects_sorted) lists them: what
/// `git cat-file --batch-all-objects` lists.
pub fn sorted_ids(h: &mut odb_index::Handle) -> Vec<String> {
    h.objects_sorted()
        .unwrap()
        .iter()
        .map(|(id, _)| id.to_string())
        .collect()
}

pub fn oid(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}
