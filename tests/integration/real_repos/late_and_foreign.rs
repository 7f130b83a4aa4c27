//! Objects written after the store opened, and index files of the other hash kind.

use super::*;

/// A loose object written after the store was opened: found at once in probe mode; in cached mode, once its
/// fan-out directory has been listed, only after `store.refresh()`.
#[test]
fn loose_object_written_after_open() {
    for format in ["sha1", "sha256"] {
        let repo = init_repo(format, true);
        let r = repo.path();
        fast_import_blobs(r, 20, 90, "main");
        write_loose(r, "early", 5);
        for refresh in [RefreshMode::Never, RefreshMode::OnMiss] {
            let probe = Store::open(r, Options::default().refresh(refresh)).unwrap();
            let cached = Store::open(
                r,
                Options::default().refresh(refresh).loose(LooseMode::Cached),
            )
            .unwrap();
            let (mut hp, mut hc) = (probe.handle(), cached.handle());
            let tag = format!("late {refresh:?}");
            // The id before the object exists: both stores miss (the cached one lists its fan-out directory).
            let late_id: ObjectId = {
                let files = tempfile::tempdir().unwrap();
                let p = files.path().join("f0");
                std::fs::write(&p, format!("loose {tag} 0\n")).unwrap();
                git(r, &["hash-object", "--no-filters", p.to_str().unwrap()])
                    .trim()
                    .parse()
                    .unwrap()
            };
            assert_eq!(hp.locate(&late_id).unwrap(), None);
            assert_eq!(hc.locate(&late_id).unwrap(), None);
            let written = write_loose(r, &tag, 1);
            assert_eq!(written[0], late_id.to_string());
            assert_eq!(
                hp.locate(&late_id).unwrap(),
                Some(Location::Loose { dir: 0 }),
                "probe mode sees a new loose object at once"
            );
            assert_eq!(
                hc.locate(&late_id).unwrap(),
                None,
                "cached mode answers from its listing until refreshed"
            );
            cached.refresh().unwrap();
            assert_eq!(
                hc.locate(&late_id).unwrap(),
                Some(Location::Loose { dir: 0 })
            );
            let dirs = [objects_dir(r)];
            check(r, &probe, format, &dirs, 90);
            check(r, &cached, format, &dirs, 91);
        }
    }
}

/// Copy the `.idx` and `.pack` of `from`'s first pack into `to`'s pack directory; return the copied `.idx`.
fn copy_pack(from: &Path, to: &Path) -> PathBuf {
    let idx = idx_files(&objects_dir(from))[0].clone();
    let dest = objects_dir(to).join("pack").join(idx.file_name().unwrap());
    std::fs::copy(idx.with_extension("pack"), dest.with_extension("pack")).unwrap();
    std::fs::copy(&idx, &dest).unwrap();
    canon(&dest)
}

/// An index file of the other hash kind in the pack directory: the objects of the healthy packs are found, and
/// a miss is `Error::Incomplete` naming the foreign file (the store cannot claim "missing" without it).
#[test]
fn index_of_the_other_hash_kind_in_the_pack_directory() {
    for (own, foreign) in [("sha1", "sha256"), ("sha256", "sha1")] {
        let repo = init_repo(own, true);
        let r = repo.path();
        fast_import_blobs(r, 20, 100, "main");
        let healthy: Vec<ObjectId> = show_index(&idx_files(&objects_dir(r))[0], own)
            .into_iter()
            .map(|(i, _)| i.parse().unwrap())
            .collect();
        let other = init_repo(foreign, true);
        fast_import_blobs(other.path(), 20, 101, "main");
        let copied = copy_pack(other.path(), r);
        let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
        let mut h = store.handle();
        for id in &healthy {
            assert!(
                matches!(h.locate(id), Ok(Some(Location::Packed { .. }))),
                "{id}"
            );
        }
        let absent: ObjectId = absent_ids(1, hex_len(own), 100)[0].parse().unwrap();
        match h.locate(&absent) {
            Err(Error::Incomplete { failed }) => {
                assert_eq!(failed.len(), 1, "{failed:?}");
                assert_eq!(canon(&failed[0].0), copied);
                let inner = &*failed[0].1;
                println!("{own} repository, {foreign} .idx: {inner:?} / {inner}");
                let names_file = match inner {
                    Error::WrongHashKind { path, .. } | Error::CorruptIndex { path, .. } => {
                        canon(path) == copied
                    }
                    _ => false,
                };
                assert!(names_file, "unexpected inner error {inner:?}");
            }
            other => panic!(
                "expected Incomplete naming {}, got {other:?}",
                copied.display()
            ),
        }
    }
}

/// A multi-pack-index of the other hash kind: ignored with a problem reported, every object still found
/// through the `.idx` files.
#[test]
fn multi_pack_index_of_the_other_hash_kind() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 20, 110, "a");
    fast_import_blobs(r, 20, 111, "b");
    let other = init_repo("sha256", true);
    fast_import_blobs(other.path(), 20, 112, "main");
    write_midx(other.path(), &idx_files(&objects_dir(other.path())));
    std::fs::copy(
        objects_dir(other.path()).join("pack/multi-pack-index"),
        objects_dir(r).join("pack/multi-pack-index"),
    )
    .unwrap();
    let store = Store::open(r, Options::default().refresh(RefreshMode::Never)).unwrap();
    let problems = store.problems();
    println!("sha256 multi-pack-index in a sha1 repository: {problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, Problem::MultiPackIndexIgnored { .. })),
        "{problems:?}"
    );
    let mut h = store.handle();
    let mut n = 0;
    for idx in idx_files(&objects_dir(r)) {
        for (id, off) in show_index(&idx, "sha1") {
            let Some(Location::Packed { pack, offset }) = h.locate(&id.parse().unwrap()).unwrap()
            else {
                panic!("{id} not found")
            };
            assert_eq!(
                (canon(&store.pack_path(pack).unwrap()), offset),
                (canon(&idx.with_extension("pack")), off)
            );
            n += 1;
        }
    }
    assert!(n > 40);
    for hex in absent_ids(ABSENT, 40, 113) {
        assert_eq!(h.locate(&hex.parse().unwrap()).unwrap(), None);
    }
}
