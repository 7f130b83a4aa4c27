//! A covered pack or index changed, recreated or swapped under the store.

use super::*;

/// A covered pack's `.pack` (or `.idx`) removed, truncated, or replaced by a FIFO or a link to `/dev/zero` after
/// the listing and before the first lookup that meets its entries (the length the listing did not read): every
/// lookup ends (no hang, no panic); an object of another pack is found where its `.idx` lists it; an object of
/// the changed pack is a miss, a typed error, or its location as the original `.idx` listed it (the file it names
/// is then gone or short: `locate_again` with it answers a miss or an error, never that location again in a file
/// that does not hold it). Iteration ends too, with git's objects of the untouched packs.
#[cfg(unix)]
#[test]
fn a_covered_pack_changed_before_its_first_lookup_is_never_a_wrong_answer() {
    for change in [
        Change::PackRemoved,
        Change::PackTruncatedToZero,
        Change::PackTruncatedToHalf,
        Change::PackFifo,
        Change::PackDevZero,
        Change::PackAndIdxFifo,
        Change::PackAndIdxDevZero,
        Change::IdxRemoved,
    ] {
        for mode in [odb_index::LoadMode::Mmap, odb_index::LoadMode::Read] {
            let what = format!("{change:?} {mode:?}");
            let repo = packs_repo(2, 300);
            let r = repo.path();
            git(r, &["multi-pack-index", "write"]);
            let t = packed_truth(r);
            let idx = idx_files(&objects_dir(r))[0].clone();
            let victim = canon(&idx.with_extension("pack"));
            let (in_victim, elsewhere): (Vec<String>, Vec<String>) = all_objects(r)
                .into_iter()
                .partition(|id| t[id].iter().all(|(p, _)| *p == victim));
            assert!(!in_victim.is_empty() && !elsewhere.is_empty());
            let store = Store::open(r, Options::default().load(mode)).unwrap();
            let mut h = store.handle();
            apply(change, &idx);
            for id in &elsewhere {
                let Ok(Some(Location::Packed { pack, offset })) = h.locate(&oid(id)) else {
                    panic!("{what}: {id} of an untouched pack not found")
                };
                let at = (canon(&h.pack_path(pack).unwrap()), offset);
                assert!(t[id].contains(&at), "{what}: {id} at {at:?}");
            }
            for id in &in_victim {
                match h.locate(&oid(id)) {
                    Ok(None) | Err(_) => {}
                    Ok(Some(Location::Loose { .. })) => panic!("{what}: {id} loose"),
                    Ok(Some(loc @ Location::Packed { pack, offset })) => {
                        let path = h.pack_path(pack).unwrap_or_else(|e| {
                            panic!("{what}: {id} located in a pack the handle does not list: {e}")
                        });
                        assert_eq!(path.file_name(), victim.file_name(), "{what}: {id}");
                        assert!(
                            t[id].iter().any(|(_, o)| *o == offset),
                            "{what}: {id} at {offset}, where the .idx did not list it"
                        );
                        if !holds(&path, offset) {
                            match h.locate_again(&oid(id), loc) {
                                Ok(None) | Err(_) => {}
                                Ok(Some(again)) => {
                                    let Location::Packed { pack, offset } = again else {
                                        panic!("{what}: {id} loose")
                                    };
                                    let p = h.pack_path(pack).unwrap();
                                    assert!(
                                        holds(&p, offset),
                                        "{what}: {id} located again at {offset} in {}, which does not hold it",
                                        p.display()
                                    );
                                }
                            }
                        }
                    }
                }
            }
            // Iteration ends; the untouched pack's objects are all listed.
            let mut listed = HashSet::new();
            let walked = h.for_each_object(|id, _| {
                listed.insert(id.to_string());
                std::ops::ControlFlow::Continue(())
            });
            if walked.is_ok() {
                for id in &elsewhere {
                    assert!(listed.contains(id), "{what}: iteration lost {id}");
                }
            }
        }
    }
}

/// The inode number of `path` (not following links).
#[cfg(unix)]
fn ino(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path).unwrap().ino()
}

/// Same-inode reuse: a covered pack's files are deleted and files with other contents are created under the same
/// names (a writer that does not rename over them; ext4 and tmpfs hand a freed inode number to the next file
/// made), with a new multi-pack-index. The pack's id must not be carried over: a location the store gave for the
/// old files is stale (`Store::is_pack_live` false, so a front end drops what it cached for that id: the adapter
/// keeps the old `.pack` mapped per id), and every object git now has is found where the new `.idx` lists it.
#[cfg(unix)]
#[test]
fn a_covered_pack_recreated_under_its_name_with_its_inode_gets_a_new_id() {
    let repo = packs_repo(2, 400);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let objects = objects_dir(r);
    let idx = idx_files(&objects)[0].clone();
    let pack_file = idx.with_extension("pack");
    // Other contents for the same names: the pack of another repository's objects.
    let other = packs_repo(1, 500);
    let other_idx = idx_files(&objects_dir(other.path()))[0].clone();
    let new_idx = std::fs::read(&other_idx).unwrap();
    let new_pack = std::fs::read(other_idx.with_extension("pack")).unwrap();

    let store = Store::open(r, Options::default()).unwrap();
    let mut h = store.handle();
    let old: Vec<(String, Location)> = all_objects(r)
        .into_iter()
        .map(|id| {
            let loc = h.locate(&oid(&id)).unwrap().unwrap();
            (id, loc)
        })
        .collect();
    let Location::Packed { pack: old_id, .. } = old
        .iter()
        .map(|(_, l)| *l)
        .find(|l| matches!(l, Location::Packed { pack, .. } if store.pack_path(*pack).unwrap() == pack_file))
        .unwrap()
    else {
        unreachable!()
    };

    // Delete, then create under the same names (the .idx first, so that it takes the inode just freed).
    let (old_ino, old_size) = (ino(&idx), std::fs::metadata(&idx).unwrap().len());
    std::fs::remove_file(&idx).unwrap();
    std::fs::write(&idx, &new_idx).unwrap();
    std::fs::remove_file(&pack_file).unwrap();
    std::fs::write(&pack_file, &new_pack).unwrap();
    std::fs::remove_file(objects.join("pack/multi-pack-index")).unwrap();
    git(r, &["multi-pack-index", "write"]);
    let reused = ino(&idx) == old_ino;
    eprintln!(
        "inode reused: {reused} ({old_ino}); .idx size {old_size} -> {}",
        new_idx.len()
    );

    agrees_with_git(&mut h, r, "recreated under its name");
    let Some((_, Location::Packed { pack: new_id, .. })) = all_objects(r)
        .iter()
        .map(|id| (id, h.locate(&oid(id)).unwrap().unwrap()))
        .find(|(_, l)| matches!(l, Location::Packed { pack, .. } if store.pack_path(*pack).unwrap() == pack_file))
    else {
        panic!("no object in the recreated pack")
    };
    assert_ne!(
        new_id, old_id,
        "the recreated pack (inode reused: {reused}) kept the old pack's id: a location given for the old file \
         is not stale, and a front end's cache of the old .pack answers for the new one"
    );
    assert!(!store.is_pack_live(old_id));
}

/// The type and size in the header of the pack entry at `offset` of `pack` (git's packed object header), or
/// `None` if the file cannot be read there (deleted by a repack since the lookup: `locate_again`'s case).
fn entry_header(pack: &Path, offset: u64) -> Option<(u8, u64)> {
    use std::os::unix::fs::FileExt as _;
    let f = std::fs::File::open(pack).ok()?;
    let mut buf = [0u8; 16];
    let n = f.read_at(&mut buf, offset).ok()?;
    let b = buf.get(..n)?;
    let first = *b.first()?;
    let kind = (first >> 4) & 7;
    let mut size = u64::from(first & 15);
    let mut shift = 4;
    let mut i = 0;
    while b.get(i)? & 0x80 != 0 {
        i += 1;
        size |= u64::from(b.get(i)? & 0x7f) << shift;
        shift += 7;
    }
    Some((kind, size))
}

/// Two threads look up every object (`locate`, and `locate_many` in batches) while the main thread runs git's
/// multi-pack-index maintenance in a loop: a new pack and `multi-pack-index write`, `repack -ad --write-midx`,
/// `repack -d --write-midx` and `multi-pack-index expire`. Every answer is a location (no miss, no error), and a
/// location in a file that still exists has the object's own header there (its type and size as git has them,
/// or a delta): never another object's place.
#[cfg(unix)]
#[test]
fn lookups_during_multi_pack_index_maintenance_are_never_wrong() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};
    let repo = packs_repo(3, 600);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let input = all_objects(r).join("\n") + "\n";
    let base: Vec<(ObjectId, u8, u64)> = git_stdin(
        r,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
        input.as_bytes(),
    )
    .lines()
    .map(|l| {
        let mut it = l.split(' ');
        let id = oid(it.next().unwrap());
        let kind = match it.next().unwrap() {
            "commit" => 1,
            "tree" => 2,
            "blob" => 3,
            _ => 4,
        };
        (id, kind, it.next().unwrap().parse().unwrap())
    })
    .collect();
    let store = Store::open(r, Options::default()).unwrap();
    let secs = stress_secs(6);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (stop, lookups, failures) = (
        AtomicBool::new(false),
        AtomicU64::new(0),
        FirstFailures::default(),
    );
    let mut steps = 0u64;
    std::thread::scope(|s| {
        let _stop = StopOnDrop(&stop);
        for t in 0..2usize {
            let (store, base, stop, lookups, failures) =
                (&store, &base, &stop, &lookups, &failures);
            s.spawn(move || {
                let mut h = store.handle();
                let ids: Vec<ObjectId> = base.iter().map(|b| b.0).collect();
                let mut out = Vec::new();
                let mut round = 0u64;
                while !stop.load(Ordering::Relaxed) && round < 100_000 {
                    round += 1;
                    let answers: Vec<Result<Option<Location>, String>> = if (round + t as u64).is_multiple_of(2) {
                        ids.iter()
                            .map(|id| h.locate(id).map_err(|e| e.to_string()))
                            .collect()
                    } else {
                        match h.locate_many(&ids, &mut out) {
                            Ok(()) => out.iter().map(|l| Ok(*l)).collect(),
                            Err(e) => vec![Err(e.to_string())],
                        }
                    };
                    for ((id, kind, size), got) in base.iter().zip(answers) {
                        lookups.fetch_add(1, Ordering::Relaxed);
                        match got {
                            Ok(Some(Location::Packed { pack, offset })) => {
                                let Ok(path) = h.pack_path(pack) else {
                                    continue;
                                };
                                match entry_header(&path, offset) {
                                    None | Some((6 | 7, _)) => {}
                                    Some(header) if header == (*kind, *size) => {}
                                    Some(header) => failures.push(format!(
                                        "thread {t} round {round}: {id} at {offset} in {}: header {header:?}, \
                                         git: {:?}",
                                        path.display(),
                                        (kind, size)
                                    )),
                                }
                            }
                            Ok(Some(Location::Loose { .. })) => {}
                            Ok(None) => failures.push(format!("thread {t} round {round}: {id} missing")),
                            Err(e) => failures.push(format!("thread {t} round {round}: {id}: {e}")),
                        }
                    }
                }
            });
        }
        // At least one cycle whatever the time: every kind of step runs under the lookups.
        while (Instant::now() < deadline || steps < 3) && steps < 200 * secs.max(1) {
            match steps % 3 {
                0 => {
                    import(r, 10_000 + steps);
                    git(r, &["multi-pack-index", "write"]);
                }
                1 => {
                    git(r, &["repack", "-adq", "--write-midx"]);
                }
                _ => {
                    import(r, 10_000 + steps);
                    git(r, &["repack", "-dq", "--write-midx"]);
                    git(r, &["multi-pack-index", "expire"]);
                }
            }
            steps += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    let lookups = lookups.load(Ordering::Relaxed);
    println!("{secs} s, {steps} maintenance steps, {lookups} lookups");
    assert!(steps >= 3 && lookups > 0);
    let failures = failures.list();
    assert!(failures.is_empty(), "{failures:#?}");
    agrees_with_git(&mut store.handle(), r, "after the maintenance");
}

/// A covered pack's own `.idx` loads only when its multi-pack-index does not (here refused: a flipped bit under
/// `Options::midx_checksum(true)`); the listing did not `stat` that `.idx`, so a FIFO or a `/dev/zero` link renamed
/// over it after the listing is first met by that load. It must be refused there (an error naming the file for
/// the objects only that pack has, never a hang), and every other object is found where its `.idx` lists it.
#[cfg(unix)]
#[test]
fn a_covered_idx_swapped_for_a_fifo_or_device_is_refused_when_the_multi_pack_index_fails() {
    for swap in ["fifo", "device"] {
        for mode in [odb_index::LoadMode::Mmap, odb_index::LoadMode::Read] {
            let what = format!("{swap} {mode:?}");
            let repo = packs_repo(2, 700);
            let r = repo.path();
            git(r, &["multi-pack-index", "write"]);
            let midx = objects_dir(r).join("pack/multi-pack-index");
            let mut bytes = std::fs::read(&midx).unwrap();
            // The byte before the trailer: the last object's offset (git writes OOFF last).
            let at = bytes.len() - 20 - 1;
            bytes[at] ^= 1;
            std::fs::write(&midx, bytes).unwrap();
            let t = packed_truth(r);
            let idx = idx_files(&objects_dir(r))[0].clone();
            let victim = canon(&idx.with_extension("pack"));
            let (in_victim, elsewhere): (Vec<String>, Vec<String>) = all_objects(r)
                .into_iter()
                .partition(|id| t[id].iter().all(|(p, _)| *p == victim));
            let options = Options::default().load(mode).midx_checksum(true);
            let store = Store::open(r, options).unwrap();
            let mut h = store.handle();
            if swap == "fifo" {
                odb_index_testkit::fifo_over(&idx);
            } else {
                let tmp = idx.with_file_name("tmp_zero_link");
                std::os::unix::fs::symlink("/dev/zero", &tmp).unwrap();
                std::fs::rename(&tmp, &idx).unwrap();
            }
            for id in &elsewhere {
                let got = h.locate(&oid(id));
                let Ok(Some(Location::Packed { pack, offset })) = got else {
                    panic!("{what}: {id} of the other pack: {got:?}")
                };
                let at = (canon(&h.pack_path(pack).unwrap()), offset);
                assert!(t[id].contains(&at), "{what}: {id} at {at:?}");
            }
            for id in &in_victim {
                match h.locate(&oid(id)) {
                    Err(e) => assert!(
                        e.to_string().contains(idx.to_str().unwrap()),
                        "{what}: {id}: the error does not name {}: {e}",
                        idx.display()
                    ),
                    other => {
                        panic!("{what}: {id}: expected an error naming the .idx, got {other:?}")
                    }
                }
            }
            // The path under test: the multi-pack-index was refused, so the packs' own indices answered.
            assert!(
                store.problems().iter().any(|p| p.path() == midx),
                "{what}: {:?}",
                store.problems()
            );
        }
    }
}
