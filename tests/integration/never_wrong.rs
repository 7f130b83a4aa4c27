//! Issue 21's reproductions at the library level: abbreviated ids and iteration follow `locate`'s order
//! (packs, loose, refresh when a pack directory changed or an index vanished, packs again); a loose fan-out
//! directory that cannot be read does not fail a prefix whose object is packed; one loose fan-out reader (git's
//! names only).

use std::path::{Path, PathBuf};

use odb_index::PrefixLookup;
use odb_index::{
    Error, HashKind, IncompleteMode, Location, LooseMode, Options, Prefix, Problem, Store,
};
use odb_index_testkit::*;

use crate::api_common::{canon, oid, sorted_ids, truth};

/// Three commits, each repacked into its own pack (the reproduction).
fn three_packs() -> tempfile::TempDir {
    let dir = init_repo("sha1", false);
    for i in 1..=3 {
        std::fs::write(dir.path().join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(dir.path(), &["add", &format!("f{i}")]);
        git(dir.path(), &["commit", "-qm", &i.to_string()]);
        git(dir.path(), &["repack", "-dq"]);
    }
    dir
}

/// A bare repository of three `fast-import` packs of `per_pack` blobs each (seeds `seed`, `seed + 1`, `seed + 2`)
/// under a multi-pack-index git wrote: the repository, the file's path and its bytes.
pub(crate) fn three_packs_under_a_midx(
    per_pack: usize,
    seed: u64,
) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let repo = init_repo("sha1", true);
    for p in 0..3 {
        fast_import_blobs(repo.path(), per_pack, seed + p, &format!("b{p}"));
    }
    git(repo.path(), &["multi-pack-index", "write"]);
    let midx = objects_dir(repo.path()).join("pack/multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    (repo, midx, good)
}

fn prefix(hex: &str) -> Prefix {
    Prefix::from_hex(hex, HashKind::Sha1).unwrap()
}

fn head(repo: &Path) -> String {
    git(repo, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// What git and the packs' own `.idx` files say of a repository, read while its files are intact: every object
/// git lists (`git cat-file --batch-check` finds each), where `git show-index` puts it, and absent ids.
pub(crate) struct Known {
    pub(crate) truth: crate::api_common::Truth,
    pub(crate) ids: Vec<String>,
    pub(crate) absent: Vec<String>,
}

/// What a store answered for the known objects and absent ids.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// A location no `.idx` gives for that id, or an absent id found.
    pub(crate) wrong: usize,
    /// A known object answered `None`.
    pub(crate) missing: usize,
    /// Lookups that failed (the first few).
    pub(crate) errors: Vec<String>,
}

pub(crate) fn known(repo: &Path) -> Known {
    let ids = all_objects(repo);
    assert!(ids.len() >= 9, "{ids:?}");
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let git_says = git_stdin(
        repo,
        &["cat-file", "--batch-check=%(objectname) %(objecttype)"],
        input.as_bytes(),
    );
    assert!(!git_says.contains("missing"), "{git_says}");
    Known {
        truth: truth(&[objects_dir(repo)], "sha1"),
        ids,
        absent: absent_ids(50, 40, 0x21e),
    }
}

pub(crate) fn tally(store: &std::sync::Arc<Store>, k: &Known) -> Tally {
    let mut h = store.handle();
    let mut t = Tally::default();
    for id in &k.ids {
        match h.locate(&oid(id)) {
            Ok(Some(Location::Packed { pack, offset })) => {
                let at = (canon(&store.pack_path(pack).unwrap()), offset);
                if !k.truth.packed.get(id).is_some_and(|s| s.contains(&at)) {
                    t.wrong += 1;
                }
            }
            Ok(Some(Location::Loose { .. })) => {
                if !k.truth.loose.contains_key(id) {
                    t.wrong += 1;
                }
            }
            Ok(None) => t.missing += 1,
            Err(e) => t.errors.push(format!("{id}: {e}")),
        }
    }
    for id in &k.absent {
        match h.locate(&oid(id)) {
            Ok(None) => {}
            Ok(Some(_)) => t.wrong += 1,
            Err(e) => t.errors.push(format!("{id} (absent): {e}")),
        }
    }
    t
}

/// Look up every known object and absent id in `store`. Returns the number of wrong answers (a location no
/// `.idx` gives for that id, or an absent id found) and of false misses. Lookup errors panic.
fn answers(store: &std::sync::Arc<Store>, k: &Known) -> (usize, usize) {
    let t = tally(store, k);
    assert!(t.errors.is_empty(), "{:?}", t.errors);
    (t.wrong, t.missing)
}

mod midx;
mod prefixes_and_names;
