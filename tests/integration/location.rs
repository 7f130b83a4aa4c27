//! From a `Location` to the file: pack information (`.keep`, `.promisor`, size), loose paths whose directory
//! numbers survive a change of alternates, packs that are gone (`StalePack`), `GIT_ALTERNATE_OBJECT_DIRECTORIES`
//! as git reads it, and the `IncompleteMode` contract with a corrupt `.idx`.

use std::ffi::OsStr;

use odb_index::repo::{AlternateProblem, alternates_with_env};
use odb_index::{Error, IncompleteMode, Location, LooseMode, Options, Problem, RefreshMode, Store};
use odb_index_testkit::*;

use crate::api_common::*;

#[test]
fn keep_and_promisor_markers() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 50, 1, "a");
    fast_import_blobs(repo.path(), 50, 2, "b");
    let idx = idx_files(&objects_dir(repo.path()));
    std::fs::write(idx[0].with_extension("keep"), "").unwrap();
    std::fs::write(idx[1].with_extension("promisor"), "").unwrap();
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let infos = store.pack_infos();
    assert_eq!(infos.len(), 2);
    for info in &infos {
        let is0 = info.idx_path == canon(&idx[0]) || info.idx_path == idx[0];
        assert_eq!(info.keep, is0, "{info:?}");
        assert_eq!(info.promisor, !is0, "{info:?}");
        assert_eq!(info.size, std::fs::metadata(&info.pack_path).unwrap().len());
        assert_eq!(info.objects_dir, 0);
        assert_eq!(store.pack(info.id).unwrap(), *info);
    }
}

#[test]
fn gone_pack_is_stale_and_never_another() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 50, 1, "a");
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let id = oid(&all_objects(repo.path())[0]);
    let Some(Location::Packed { pack, .. }) = h.locate(&id).unwrap() else {
        panic!("packed")
    };
    assert!(store.is_pack_live(pack));
    fast_import_blobs(repo.path(), 50, 2, "b");
    git(repo.path(), &["repack", "-q", "-a", "-d"]);
    store.refresh().unwrap();
    assert!(!store.is_pack_live(pack));
    assert!(matches!(store.pack(pack), Err(Error::StalePack { pack: p }) if p == pack));
    // Locate again: a new pack, with its own id.
    let Some(Location::Packed { pack: new, .. }) = h.locate(&id).unwrap() else {
        panic!("packed")
    };
    assert_ne!(new, pack);
    assert!(h.pack(new).unwrap().pack_path.is_file());
    assert!(matches!(h.pack(pack), Err(Error::StalePack { .. })));
    assert!(matches!(
        h.locate_in_pack(pack, &id),
        Err(Error::StalePack { .. })
    ));
}

#[test]
fn loose_directory_numbers_survive_new_alternates() {
    let alt1 = init_repo("sha1", true);
    let alt2 = init_repo("sha1", true);
    let in2 = write_loose(alt2.path(), "two", 1).remove(0);
    let in1 = write_loose(alt1.path(), "one", 1).remove(0);
    let repo = init_repo("sha1", true);
    let info = objects_dir(repo.path()).join("info");
    std::fs::create_dir_all(&info).unwrap();
    let alts = info.join("alternates");
    std::fs::write(&alts, format!("{}\n", objects_dir(alt2.path()).display())).unwrap();
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let Some(Location::Loose { dir }) = h.locate(&oid(&in2)).unwrap() else {
        panic!()
    };
    assert_eq!(dir, 1);
    // alt1 is now searched first: alt2 keeps its number, alt1 gets a new one.
    std::fs::write(
        &alts,
        format!(
            "{}\n{}\n",
            objects_dir(alt1.path()).display(),
            objects_dir(alt2.path()).display()
        ),
    )
    .unwrap();
    store.refresh().unwrap();
    assert_eq!(
        h.locate(&oid(&in2)).unwrap(),
        Some(Location::Loose { dir: 1 })
    );
    assert_eq!(
        h.locate(&oid(&in1)).unwrap(),
        Some(Location::Loose { dir: 2 })
    );
    let p = h.loose_path(1, &oid(&in2)).unwrap();
    assert_eq!(
        p,
        canon(&objects_dir(alt2.path()))
            .join(&in2[..2])
            .join(&in2[2..])
    );
    assert!(store.loose_path(2, &oid(&in1)).unwrap().is_file());
    assert_eq!(store.loose_path(3, &oid(&in1)), None);
}

/// `GIT_ALTERNATE_OBJECT_DIRECTORIES`: colon-separated, C-quoted entries allowed, searched before
/// `info/alternates`; git finds objects through the same value.
#[test]
fn environment_alternates_as_git_reads_them() {
    let a = init_repo("sha1", true);
    let b = tempfile::tempdir().unwrap();
    // A directory whose name holds a colon: only reachable quoted.
    let b_objects = b.path().join("odd:dir/objects");
    std::fs::create_dir_all(&b_objects).unwrap();
    let in_a = write_loose(a.path(), "a", 1).remove(0);
    let repo = init_repo("sha1", true);
    let bq = format!("\"{}\"", b_objects.display());
    let value = format!("{}:{bq}:/no/such/dir", objects_dir(a.path()).display());
    let alts = alternates_with_env(&objects_dir(repo.path()), Some(OsStr::new(&value))).unwrap();
    assert_eq!(
        alts.dirs,
        vec![canon(&objects_dir(a.path())), canon(&b_objects)]
    );
    assert!(
        matches!(&alts.problems[..], [AlternateProblem::Missing { path, .. }] if path.ends_with("no/such/dir"))
    );
    // git agrees: the object is found through the variable, and not without it; and, like the store, it reports
    // the entry that names no directory, and only that one.
    let ok = git_cmd(repo.path())
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &value)
        .args(["cat-file", "-e", &in_a])
        .output()
        .unwrap();
    assert!(ok.status.success());
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert!(
        !stderr.is_empty()
            && stderr
                .lines()
                .all(|l| l.starts_with("error: ") && l.ends_with("/no/such/dir")),
        "git should report /no/such/dir alone: {stderr:?}"
    );
    let without = git_cmd(repo.path())
        .args(["cat-file", "-e", &in_a])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!without.success());
}

/// A corrupt `.idx`: under `IncompleteMode::Error` a miss is `Incomplete`; under `Miss` it is `Ok(None)` as in
/// git; both report the file in `problems()`, and hits in other packs are answered either way.
#[test]
fn incomplete_contract() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 50, 1, "a");
    let good = all_objects(repo.path());
    fast_import_blobs(repo.path(), 50, 2, "b");
    let idx = idx_files(&objects_dir(repo.path()));
    let bad = idx
        .iter()
        .find(|i| !show_index(i, "sha1").iter().any(|(id, _)| id == &good[0]))
        .unwrap()
        .clone();
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[8..12].copy_from_slice(&[0xff; 4]); // fan-out no longer monotonic
    std::fs::write(&bad, bytes).unwrap();
    let absent = oid(&absent_ids(1, 40, 5)[0]);
    for mode in [IncompleteMode::Error, IncompleteMode::Miss] {
        let opts = Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None)
            .incomplete(mode);
        let store = Store::open(repo.path(), opts).unwrap();
        let mut h = store.handle();
        h.load_indices();
        let problems = store.problems();
        assert!(
            matches!(&problems[..], [Problem::IndexNotLoaded { path, .. }] if *path == canon(&bad)),
            "{problems:?}"
        );
        assert!(h.locate(&oid(&good[0])).unwrap().is_some());
        let miss = h.locate(&absent);
        match mode {
            IncompleteMode::Error => assert!(matches!(miss, Err(Error::Incomplete { .. }))),
            _ => assert_eq!(miss.unwrap(), None),
        }
        assert_eq!(
            h.objects_sorted().is_ok(),
            mode == IncompleteMode::Miss,
            "iteration follows the same contract"
        );
    }
    // git answers the same: a miss, with an error message about the file.
    let out = git_batch_check(repo.path(), &[absent.to_string(), good[0].clone()]);
    assert_eq!(out, vec![format!("{absent} missing"), good[0].clone()]);
}
