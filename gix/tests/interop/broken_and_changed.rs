//! Corrupt and non-regular files as typed errors naming them, and packs a repack or refresh removed or made again.

use super::*;

#[test]
fn corrupt_pack_and_loose_object_give_typed_errors_naming_the_file() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 20, 5, "b5");
    git(r, &["repack", "-adq"]);
    let loose = git_stdin(r, &["hash-object", "-w", "--stdin"], b"x\n")
        .trim()
        .to_owned();
    let objects = Objects::open(r).unwrap();
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b5:d0/f0"]).trim().parse().unwrap();
    let place = objects.place(&blob).unwrap().unwrap();
    let Place::Packed { path, offset, .. } = &place else {
        panic!("packed expected")
    };
    // Overwrite the entry's compressed data (behind its header) with garbage.
    let mut data = std::fs::read(path).unwrap();
    for b in &mut data[*offset as usize + 2..*offset as usize + 40] {
        *b = 0xA5;
    }
    // A fresh store and adapter, so the pack is mapped after the change.
    std::fs::write(path, &data).unwrap();
    let objects = Objects::open(r).unwrap();
    let err = objects.read_at(&place, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(&err, Error::PackEntry { path: p, .. } if p == &**path),
        "{err}"
    );
    assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
    // Through gix's trait the error is gix's, carrying ours.
    let gix_err = objects
        .find(&oid_to_gix(&blob), &mut Vec::new())
        .unwrap_err();
    assert!(
        gix_err.to_string().contains(path.to_str().unwrap()),
        "{gix_err}"
    );

    let file = objects_dir(r).join(&loose[..2]).join(&loose[2..]);
    std::fs::write(&file, b"not zlib").unwrap();
    let place = objects
        .place(&loose.parse::<odb_index_gix::ObjectId>().unwrap())
        .unwrap()
        .unwrap();
    let err = objects.header_at(&place).unwrap_err();
    assert!(
        matches!(&err, Error::LooseCorrupt { path, .. } if *path == file),
        "{err}"
    );
}

#[test]
fn objects_is_send() {
    fn send<T: Send>() {}
    send::<Objects>();
}

#[test]
fn a_pack_removed_by_a_repack_between_lookup_and_read_is_looked_up_again() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 10, 6, "b6");
    git(r, &["repack", "-adq"]);
    let old_pack = odb_index_testkit::idx_files(&objects_dir(r))[0].with_extension("pack");
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b6:d0/f0"]).trim().parse().unwrap();
    // A store without `Options::pack_data` (which `Objects::open` sets: it maps each `.pack` with its index, and
    // would read the old pack's mapping here, as a git process that looked the blob up reads the pack it opened).
    let store = odb_index::Store::open(r, odb_index::Options::default()).unwrap();
    let objects = Objects::new(store.handle());
    // A miss loads every index: the store now answers from the old pack's .idx, whose .pack nobody opened yet.
    let absent: odb_index_gix::ObjectId = odb_index_testkit::absent_ids(1, 40, 1)
        .remove(0)
        .parse()
        .unwrap();
    assert!(objects.place(&absent).unwrap().is_none());
    git_stdin(r, &["hash-object", "-w", "--stdin"], b"new\n");
    git(r, &["repack", "-adq"]);
    assert!(!old_pack.exists(), "the repack should replace the pack");
    let info = objects.info(&blob).unwrap().unwrap();
    let Place::Packed { path, .. } = &info.place else {
        panic!("packed expected")
    };
    assert_ne!(&**path, old_pack.as_path());
    assert!(path.exists());
}

#[test]
fn packs_a_refresh_removed_are_dropped_once_the_listing_moves() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 10, 7, "b7");
    git(r, &["repack", "-adq"]);
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b7:d0/f0"]).trim().parse().unwrap();
    let objects = Objects::open(r).unwrap();
    // Placed (and its .pack mapped) before the repack.
    let old = objects.place(&blob).unwrap().unwrap();
    let Place::Packed { pack: old_pack, .. } = old else {
        panic!("packed expected")
    };
    assert!(objects.read_at(&old, &mut Vec::new()).is_ok());
    git_stdin(r, &["hash-object", "-w", "--stdin"], b"newer\n");
    git(r, &["repack", "-adq"]);
    let seen = objects.store().listing_version();
    assert!(objects.store().refresh().unwrap());
    assert!(objects.store().listing_version() > seen);
    assert!(!objects.store().is_pack_live(old_pack));
    // The next lookup notices the listing moved and drops the old pack: its place is stale from then on.
    let new = objects.place(&blob).unwrap().unwrap();
    assert!(matches!(new, Place::Packed { pack, .. } if pack != old_pack));
    let err = objects.read_at(&old, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(err, Error::Lookup(odb_index::Error::StalePack { pack }) if pack == old_pack),
        "{err}"
    );
    let mut data = Vec::new();
    assert_eq!(
        objects.read_at(&new, &mut data).unwrap(),
        gix_object::Kind::Blob
    );
}

/// A `.rev` that cannot be used (truncated, empty, version 2, a directory, a symlink loop, a FIFO, a symlink to
/// `/dev/zero`, a 1 GB sparse file) is reported once and every answer comes from the `.idx`, as git falls back
/// (never a hang, never a read of more than the format's length).
#[test]
fn broken_rev_files_are_reported_once_and_answers_come_from_the_idx() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 20, 1, "b1");
    git(r, &["-c", "pack.writeReverseIndex=true", "repack", "-adfq"]);
    let rev = odb_index_testkit::pack_files(&objects_dir(r), "rev")
        .pop()
        .expect("git wrote a .rev");
    let good = std::fs::read(&rev).unwrap();
    let ids = all_objects(r);
    let expected: Vec<String> = odb_index_testkit::git_stdin(
        r,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)",
        ],
        (ids.join("\n") + "\n").as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert!(
        expected.iter().any(|l| !l.ends_with(&"0".repeat(40))),
        "some deltas"
    );
    let (lines, problems) = disk_sizes_and_bases(r, &ids);
    assert_eq!(
        (lines, problems.len()),
        (expected.clone(), 0),
        "the good .rev"
    );
    let reset = || {
        let _ = std::fs::remove_file(&rev);
        let _ = std::fs::remove_dir(&rev);
    };
    let mut version2 = good.clone();
    version2[7] = 2;
    type Breakage<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let breakages: Vec<Breakage> = vec![
        (
            "truncated",
            Box::new(|| std::fs::write(&rev, &good[..good.len() - 7]).unwrap()),
        ),
        ("empty", Box::new(|| std::fs::write(&rev, b"").unwrap())),
        (
            "version 2",
            Box::new(|| std::fs::write(&rev, &version2).unwrap()),
        ),
        (
            "a directory",
            Box::new(|| std::fs::create_dir(&rev).unwrap()),
        ),
        (
            "a symlink loop",
            Box::new(|| std::os::unix::fs::symlink(&rev, &rev).unwrap()),
        ),
        (
            "a symlink to /dev/zero",
            Box::new(|| std::os::unix::fs::symlink("/dev/zero", &rev).unwrap()),
        ),
        (
            "a FIFO",
            Box::new(|| assert!(Command::new("mkfifo").arg(&rev).status().unwrap().success())),
        ),
        (
            "1 GB sparse",
            Box::new(|| {
                std::fs::File::create(&rev)
                    .unwrap()
                    .set_len(1 << 30)
                    .unwrap()
            }),
        ),
    ];
    for (what, brk) in &breakages {
        reset();
        brk();
        let (lines, problems) = disk_sizes_and_bases(r, &ids);
        assert_eq!(lines, expected, "{what}: the answers from the .idx");
        assert_eq!(problems.len(), 1, "{what}: reported once: {problems:?}");
        assert!(
            problems[0].contains(&*rev.to_string_lossy()),
            "{what}: names the file: {problems:?}"
        );
    }
    reset();
}

/// A loose object's header is read by streaming its first bytes (a large object is never read whole for its
/// type and size), and a loose object name that is not a regular file is a typed error, never a hang.
#[test]
fn loose_headers_stream_and_non_regular_loose_files_are_errors() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let big: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let id = git_stdin(r, &["hash-object", "-w", "--stdin"], &big);
    let objects = Objects::open(r).unwrap();
    let id: odb_index::ObjectId = id.trim().parse().unwrap();
    let info = objects.info(&id).unwrap().expect("present");
    assert_eq!(
        (info.kind, info.size),
        (gix_object::Kind::Blob, big.len() as u64)
    );
    let mut buf = Vec::new();
    assert_eq!(
        objects.read(&id, &mut buf).unwrap().map(|i| i.size),
        Some(big.len() as u64)
    );
    assert!(buf == big);
    let Place::Loose { path, .. } = info.place else {
        panic!("loose")
    };
    for (what, make) in [("/dev/zero", "ln"), ("a FIFO", "mkfifo")] {
        std::fs::remove_file(&path).unwrap();
        let st = if make == "ln" {
            Command::new("ln")
                .args(["-s", "/dev/zero"])
                .arg(&path)
                .status()
        } else {
            Command::new("mkfifo").arg(&path).status()
        };
        assert!(st.unwrap().success());
        match objects.info(&id) {
            Err(Error::LooseUnreadable { path: p, .. }) => assert_eq!(p, path, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert!(
            matches!(
                objects.read(&id, &mut buf),
                Err(Error::LooseUnreadable { .. })
            ),
            "{what}"
        );
    }
}

/// Issue 21, bullet 9, in the library: a file named like a loose object that is not one (empty, garbage, a
/// dangling symbolic link, a directory) is a typed error naming the file under `IncompleteMode::Error` (the
/// default), and under `IncompleteMode::Miss` git's answer (`None`) with the file in `Store::problems()`.
#[test]
fn files_named_like_loose_objects_that_are_not_ones() {
    use odb_index::{IncompleteMode, Options, Problem};
    let repo = init_repo("sha1", true);
    let r = repo.path();
    let made = odb_index_testkit::loose_names_that_are_not_objects(r);
    let ids: Vec<odb_index::ObjectId> = made.iter().map(|(id, _)| id.parse().unwrap()).collect();
    let file = |id: &odb_index::ObjectId| {
        made.iter()
            .find(|(h, _)| *h == id.to_string())
            .unwrap()
            .1
            .clone()
    };

    let strict = Objects::open(r).unwrap();
    for (i, id) in ids.iter().enumerate() {
        let err = strict.info(id).unwrap_err();
        let named = match &err {
            Error::LooseCorrupt { path, .. } if i < 2 => path,
            Error::LooseUnreadable { path, .. } if i >= 2 => path,
            other => panic!("{id}: {other:?}"),
        };
        assert_eq!(*named, file(id));
        assert!(err.is_not_a_loose_object());
        assert!(strict.read(id, &mut Vec::new()).is_err());
    }
    assert!(strict.store().problems().is_empty());

    let lenient =
        Objects::open_with(r, Options::default().incomplete(IncompleteMode::Miss)).unwrap();
    for id in &ids {
        assert!(lenient.info(id).unwrap().is_none(), "{id}");
        assert!(lenient.read(id, &mut Vec::new()).unwrap().is_none(), "{id}");
    }
    let problems = lenient.store().problems();
    assert_eq!(problems.len(), 4, "{problems:?}");
    for (id, p) in ids.iter().zip(&problems) {
        assert!(matches!(p, Problem::LooseObjectUnreadable { .. }), "{p:?}");
        assert_eq!(p.path(), file(id));
    }
}

/// The adapter answers from the store's `.idx` (`Handle::with_pack_index`), never a second mapping of it:
/// after the header, contents, disk size and delta base of every object (two packs, with deltas), each `.idx` is mapped exactly once (the store's) under `LoadMode::Mmap`, and not at all under
/// `LoadMode::Read`.
#[test]
fn the_adapter_maps_no_pack_index_a_second_time() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_history(r, 30, 1, "b1");
    git(r, &["repack", "-adfq"]);
    fast_import_history(r, 10, 2, "b2");
    git(r, &["repack", "-dq"]); // a second pack
    let idx_files = odb_index_testkit::idx_files(&objects_dir(r));
    assert_eq!(idx_files.len(), 2);
    for (load, want) in [
        (odb_index::LoadMode::Mmap, 1),
        (odb_index::LoadMode::Read, 0),
    ] {
        let objects = Objects::open_with(r, odb_index::Options::default().load(load)).unwrap();
        let mut buf = Vec::new();
        for hex in all_objects(r) {
            let id: odb_index::ObjectId = hex.parse().unwrap();
            let info = objects.read(&id, &mut buf).unwrap().expect("present");
            objects.disk_size(&info.place).unwrap();
            objects.delta_base(&info.place).unwrap();
        }
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for idx in &idx_files {
            let idx = idx.canonicalize().unwrap();
            let n = maps
                .lines()
                .filter(|l| l.ends_with(idx.to_str().unwrap()))
                .count();
            assert_eq!(n, want, "{load:?}: {} mapped {n} times", idx.display());
        }
    }
}

/// Issue 32 (F6): a pack a multi-pack-index covers, deleted and made again under its name with other contents
/// (a writer that does not name packs by their contents; the file system hands the freed inode number to the new
/// `.idx`, as ext4 does at once), with a new multi-pack-index. The adapter caches each pack's mapped `.pack` by
/// its id: the store must give the new pack a new id, or the adapter reads the new offsets from the old file.
/// Every object's type and size must be git's.
#[cfg(unix)]
#[test]
fn a_covered_pack_made_again_under_its_name_is_read_from_the_new_file() {
    use std::os::unix::fs::MetadataExt as _;
    let repo = init_repo("sha1", true);
    let r = repo.path();
    odb_index_testkit::fast_import_blobs(r, 60, 401, "a");
    odb_index_testkit::fast_import_blobs(r, 60, 402, "b");
    git(r, &["multi-pack-index", "write"]);
    let objects_path = objects_dir(r);
    let idx = odb_index_testkit::idx_files(&objects_path)[0].clone();
    let pack = idx.with_extension("pack");
    let other = init_repo("sha1", true);
    odb_index_testkit::fast_import_blobs(other.path(), 60, 403, "c");
    let other_idx = odb_index_testkit::idx_files(&objects_dir(other.path()))[0].clone();

    let objects = Objects::open(r).unwrap();
    // Every object read once: the packs' .pack files are mapped and cached by id.
    for id in all_objects(r) {
        let id: odb_index_gix::ObjectId = id.parse().unwrap();
        assert!(objects.info(&id).unwrap().is_some());
    }
    let old_ino = std::fs::metadata(&idx).unwrap().ino();
    std::fs::remove_file(&idx).unwrap();
    std::fs::copy(&other_idx, &idx).unwrap();
    std::fs::remove_file(&pack).unwrap();
    std::fs::copy(other_idx.with_extension("pack"), &pack).unwrap();
    std::fs::remove_file(objects_path.join("pack/multi-pack-index")).unwrap();
    git(r, &["multi-pack-index", "write"]);
    eprintln!(
        "inode reused: {}",
        std::fs::metadata(&idx).unwrap().ino() == old_ino
    );
    let all = all_objects(r);
    let want = git_stdin(
        r,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
        (all.join("\n") + "\n").as_bytes(),
    );
    let mut got = String::new();
    for id in &all {
        let gid: odb_index_gix::ObjectId = id.parse().unwrap();
        match objects.info(&gid) {
            Ok(Some(info)) => got.push_str(&format!("{id} {} {}\n", info.kind, info.size)),
            Ok(None) => got.push_str(&format!("{id} missing\n")),
            Err(e) => got.push_str(&format!("{id} error {e}\n")),
        }
    }
    let wrong: Vec<(&str, &str)> = got
        .lines()
        .zip(want.lines())
        .filter(|(g, w)| g != w)
        .collect();
    assert!(
        wrong.is_empty() && got.lines().count() == want.lines().count(),
        "{} of {} objects answered otherwise than git after the pack was made again, e.g. (adapter, git): {:?}",
        wrong.len(),
        all.len(),
        &wrong[..wrong.len().min(3)]
    );
}
