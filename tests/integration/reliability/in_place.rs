//! Files truncated or rewritten in place (same inode) under `LoadMode::Read`. Never under the default mmap mode:
//! there that is SIGBUS, and the store relies on git's write-temporary-then-rename discipline.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// Files truncated or rewritten in place (same inode) under LoadMode::Read. Never under the default mmap mode:
// there that is SIGBUS, and the store relies on git's write-temporary-then-rename discipline.
// ---------------------------------------------------------------------------------------------------------

/// Truncate (and optionally rewrite) `path` in place, keeping its inode.
fn rewrite_in_place(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
}

/// Give `path` a modification time distinct from any it had (file timestamps are coarse: two writes within
/// one clock tick can leave the same mtime, and a rewrite of the same size would then look unchanged).
fn bump_mtime(path: &Path, secs: u64) {
    let f = OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(secs))
        .unwrap();
}

/// Where the store said each object was before anything changed: `(pack path, offset)` or loose.
fn snapshot_locations(
    store: &Arc<Store>,
    ids: &[String],
) -> BTreeMap<String, Option<(PathBuf, u64)>> {
    let mut h = store.handle();
    ids.iter()
        .map(|id| {
            let loc = h.locate(&oid(id)).unwrap().expect("present at start");
            let v = match loc {
                Location::Packed { pack, offset } => Some((store.pack_path(pack).unwrap(), offset)),
                Location::Loose { .. } => None,
            };
            (id.clone(), v)
        })
        .collect()
}

#[test]
fn read_mode_survives_in_place_truncation_and_rereads_after_refresh() {
    for format in ["sha1", "sha256"] {
        let f = Fixture::new(format);
        let store = Store::open(
            f.path(),
            Options::default()
                .load(LoadMode::Read)
                .refresh(RefreshMode::OnMiss),
        )
        .unwrap();
        let before = snapshot_locations(&store, &f.all);
        assert_eq!(store.metrics().index_loads, 3);
        let victim = f.idx(0);
        let lost = f.only_in(0);
        let idx_bytes = std::fs::read(&victim).unwrap();
        let pack_bytes = std::fs::read(victim.with_extension("pack")).unwrap();
        let mut h = store.handle();
        // Truncate the idx and the pack in place, to several lengths: everything already loaded is served from
        // memory, exactly as before.
        for cut in [idx_bytes.len() - 1, 1100, 0] {
            rewrite_in_place(&victim, &idx_bytes[..cut]);
            rewrite_in_place(&victim.with_extension("pack"), b"");
            for id in &f.all {
                let loc = h.locate(&oid(id)).unwrap().expect("present");
                if let Location::Packed { pack, offset } = loc {
                    assert_eq!(
                        Some((h.pack_path(pack).unwrap(), offset)),
                        before[id],
                        "{format}: {id} moved without a refresh"
                    );
                }
            }
        }
        // After a refresh the truncated index (new size, new stamp) is read again and reported as corrupt; the
        // other packs still answer, and nothing is ever reported in the wrong place.
        assert!(
            store.refresh().unwrap(),
            "{format}: the stamp change was not seen"
        );
        assert_eq!(store.metrics().index_loads, 3);
        let mut h = store.handle();
        for id in &f.all {
            let r = h.locate(&oid(id));
            if lost.contains(id) {
                assert_incomplete_naming(&r, &victim);
            } else {
                let loc = r.unwrap().expect("present");
                check_location(&f, &store, id, loc);
            }
        }
        assert_eq!(
            store.metrics().index_loads,
            4,
            "{format}: the changed idx re-read once"
        );
        for id in f.absent() {
            assert_incomplete_naming(&h.locate(&oid(&id)), &victim);
        }
        // Rewritten in place with its full contents again (and its pack): read once more after a refresh, all
        // found again.
        rewrite_in_place(&victim, &idx_bytes);
        rewrite_in_place(&victim.with_extension("pack"), &pack_bytes);
        bump_mtime(&victim, 10);
        assert!(store.refresh().unwrap());
        let mut h = store.handle();
        for id in &f.all {
            let loc = h.locate(&oid(id)).unwrap().expect("present");
            check_location(&f, &store, id, loc);
        }
        assert_eq!(store.metrics().index_loads, 5);
        for id in f.absent() {
            assert_eq!(h.locate(&oid(&id)).unwrap(), None);
        }
    }
}

/// A rewrite in place with different, valid contents (another index version, other offsets): old answers come
/// from the old contents until a refresh; after it, from the new contents, never from a mix.
#[test]
fn read_mode_rewrite_in_place_with_new_contents_is_seen_after_refresh() {
    let f = Fixture::new("sha1");
    let store = Store::open(f.path(), Options::default().load(LoadMode::Read)).unwrap();
    let before = snapshot_locations(&store, &f.all);
    let victim = f.idx(1);
    let listed = &f.packs[&victim];
    // The same objects at shifted offsets (still inside the pack), as a version 1 index of the same pack.
    let shift = 1;
    let pack_sum = odb_index::idx::PackIndex::open(&victim, HashKind::Sha1)
        .unwrap()
        .pack_checksum();
    let entries: Vec<Entry> = listed
        .iter()
        .map(|(id, off)| Entry {
            id: oid(id),
            offset: off + shift,
            crc32: 0,
        })
        .collect();
    let new = write_idx(1, HashKind::Sha1, &entries, &pack_sum).unwrap();
    rewrite_in_place(&victim, &new);
    bump_mtime(&victim, 20);
    let mut h = store.handle();
    for id in &f.all {
        if let Location::Packed { pack, offset } = h.locate(&oid(id)).unwrap().unwrap() {
            assert_eq!(Some((h.pack_path(pack).unwrap(), offset)), before[id]);
        }
    }
    assert!(store.refresh().unwrap());
    let mut h = store.handle();
    let only: BTreeSet<String> = f.only_in(1).into_iter().collect();
    for id in &f.all {
        let loc = h.locate(&oid(id)).unwrap().expect("present");
        if only.contains(id) {
            let Location::Packed { pack, offset } = loc else {
                panic!("{id} not packed")
            };
            assert_eq!(
                store.pack_path(pack).unwrap(),
                victim.with_extension("pack")
            );
            assert_eq!(offset, listed[id] + shift, "{id}: not the new contents");
        }
    }
}

/// The limit of stamps: a rewrite in place that keeps size, inode and modification time looks unchanged, so
/// the store keeps serving the copy it read (a consistent old answer, never a torn one).
#[test]
fn read_mode_rewrite_with_an_identical_stamp_keeps_the_old_copy() {
    let f = Fixture::new("sha1");
    let store = Store::open(f.path(), Options::default().load(LoadMode::Read)).unwrap();
    let before = snapshot_locations(&store, &f.all);
    let victim = f.idx(2);
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let len = std::fs::metadata(&victim).unwrap().len() as usize;
    rewrite_in_place(&victim, &vec![0xa5; len]);
    OpenOptions::new()
        .write(true)
        .open(&victim)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert!(!store.refresh().unwrap(), "same stamp: nothing changed");
    let mut h = store.handle();
    for id in &f.all {
        if let Location::Packed { pack, offset } = h.locate(&oid(id)).unwrap().unwrap() {
            assert_eq!(Some((h.pack_path(pack).unwrap(), offset)), before[id]);
        }
    }
    assert_eq!(store.metrics().index_loads, 3);
}

/// A stale pack id (its pack deleted by a repack) is recognised, never turned into another pack's path.
#[test]
fn location_of_a_deleted_pack_is_stale_after_refresh() {
    let f = Fixture::new("sha1");
    let store = open(&f);
    let mut h = store.handle();
    let id = f.only_in(0)[0].clone();
    let Some(Location::Packed { pack, .. }) = h.locate(&oid(&id)).unwrap() else {
        panic!("not packed")
    };
    git(f.path(), &["repack", "-adq"]);
    assert!(store.refresh().unwrap());
    assert!(matches!(
        store.pack_path(pack),
        Err(Error::StalePack { pack: p }) if p == pack
    ));
    // Locating again gives a fresh, valid location.
    let mut f2 = f;
    f2.reread_packs();
    let loc = h.locate(&oid(&id)).unwrap().expect("present");
    check_location(&f2, &store, &id, loc);
}

/// "Refresh, then locate again" is the documented recovery from a stale location (P5). A handle made before
/// a refresh, whose first lookup after the refresh finds the object among the indices its (now retired) map had
/// already loaded, returns that location without noticing the map is retired: it names a pack the refresh saw
/// deleted, and `store.pack_path` calls it stale.
#[test]
fn handle_made_before_refresh_does_not_report_a_pack_the_refresh_saw_deleted() {
    let f = Fixture::new("sha1");
    let store = open(&f);
    let id = oid(&f.only_in(0)[0]);
    // The store loads the object's index through one handle; another handle exists but has looked nothing up.
    let mut loader = store.handle();
    let mut idle = store.handle();
    let Some(Location::Packed { pack: old, .. }) = loader.locate(&id).unwrap() else {
        panic!("not packed")
    };
    git(f.path(), &["repack", "-adq"]);
    assert!(store.refresh().unwrap());
    assert!(matches!(store.pack_path(old), Err(Error::StalePack { .. })));
    // Locate again, after the refresh: a location in a pack that exists.
    let loc = idle.locate(&id).unwrap().expect("present");
    let Location::Packed { pack, .. } = loc else {
        panic!("not packed")
    };
    assert_ne!(pack, old, "located in the pack the refresh saw deleted");
    store.pack_path(pack).expect("a current pack");
}

/// The same, without the idle handle: the refreshing handle itself recovers (its next lookup is a snapshot
/// hit, which checks for retirement).
#[test]
fn handle_that_looked_up_before_refresh_recovers_after_it() {
    let f = Fixture::new("sha1");
    let store = open(&f);
    let id = oid(&f.only_in(0)[0]);
    let mut h = store.handle();
    let Some(Location::Packed { pack: old, .. }) = h.locate(&id).unwrap() else {
        panic!("not packed")
    };
    git(f.path(), &["repack", "-adq"]);
    assert!(store.refresh().unwrap());
    let Some(Location::Packed { pack, .. }) = h.locate(&id).unwrap() else {
        panic!("not packed")
    };
    assert_ne!(pack, old);
    store.pack_path(pack).expect("a current pack");
}

/// Write a pack named `pack-<stem>` with `ids` (at offsets `base + i`) into `pack_dir` with `write_idx` and
/// a dummy `.pack`; return its entries for a multi-pack-index.
fn write_named_pack(
    pack_dir: &Path,
    stem: &str,
    ids: &[ObjectId],
    base: u64,
) -> odb_index::midx::write::PackEntries {
    let entries: Vec<Entry> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| Entry {
            id,
            offset: base + i as u64,
            crc32: 0,
        })
        .collect();
    let name = format!("pack-{stem}.idx");
    let bytes = write_idx(
        2,
        HashKind::Sha1,
        &entries,
        &HashKind::Sha1.digest(stem.as_bytes()),
    )
    .unwrap();
    write_stub_pack(
        &pack_dir.join(format!("pack-{stem}.pack")),
        ids.len() as u32,
        base + ids.len() as u64 + 20,
        HashKind::Sha1.digest(stem.as_bytes()).as_bytes(),
    );
    replace_by_rename(&pack_dir.join(&name), &bytes);
    odb_index::midx::write::PackEntries {
        name,
        entries: entries.iter().map(|e| (e.id, e.offset)).collect(),
    }
}

/// The multi-pack-index is listed (its pack names read) when the store lists the directory, but loaded lazily,
/// on the first lookup that needs it, from whatever file has that name by then. If git rewrote it in between
/// (`git multi-pack-index write` after a fetch: a rename over the old file, with a new pack whose name sorts
/// first), the loaded file's pack int ids are translated with the old file's pack list: objects are reported in
/// the wrong pack (a wrong answer), or missed.
#[test]
fn multi_pack_index_replaced_between_listing_and_loading_is_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let objects = dir.path().join("objects");
    let pack_dir = objects.join("pack");
    std::fs::create_dir_all(&pack_dir).unwrap();
    let kind = HashKind::Sha1;
    let id = |s: &str| kind.digest(s.as_bytes());
    let (b_ids, c_ids, a_ids) = (
        [id("b0"), id("b1")],
        [id("c0"), id("c1")],
        [id("a0"), id("a1")],
    );
    let b = write_named_pack(&pack_dir, &"bb".repeat(20), &b_ids, 100);
    let c = write_named_pack(&pack_dir, &"cc".repeat(20), &c_ids, 200);
    let midx = pack_dir.join("multi-pack-index");
    replace_by_rename(
        &midx,
        &odb_index::midx::write::write_midx(1, kind, &[b.clone(), c.clone()]).unwrap(),
    );
    let store = Store::open(
        &objects,
        Options::default()
            .hash_kind(kind)
            .refresh(RefreshMode::Never),
    )
    .unwrap();
    // A fetch adds a pack whose name sorts first, and the multi-pack-index is rewritten: pack int ids shift.
    let a = write_named_pack(&pack_dir, &"aa".repeat(20), &a_ids, 300);
    replace_by_rename(
        &midx,
        &odb_index::midx::write::write_midx(1, kind, &[a, b, c]).unwrap(),
    );
    let mut h = store.handle();
    let mut wrong = Vec::new();
    for (ids, stem, base) in [(&b_ids, "bb", 100), (&c_ids, "cc", 200)] {
        for (i, id) in ids.iter().enumerate() {
            let expected = pack_dir.join(format!("pack-{}.pack", stem.repeat(20)));
            match h.locate(id) {
                Ok(Some(Location::Packed { pack, offset }))
                    if store.pack_path(pack).ok() == Some(expected.clone())
                        && offset == base + i as u64 => {}
                other => wrong.push(format!(
                    "{id} (in {stem} at {}): {other:?} = {:?}",
                    base + i as u64,
                    other.as_ref().ok().and_then(|l| match l {
                        Some(Location::Packed { pack, .. }) => store.pack_path(*pack).ok(),
                        _ => None,
                    })
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "misread through the replaced multi-pack-index: {wrong:#?}"
    );
}

/// An `.idx` that cannot be read (permission denied): the other packs and the loose objects still answer, and a
/// lookup that could have been answered by the unreadable file is `Incomplete`, naming it, with the I/O error.
/// Root reads every file whatever its mode, so as root (as in CI) this case cannot be made with `chmod`: the
/// test then says so and checks nothing.
#[cfg(unix)]
#[test]
fn unreadable_idx_is_reported_and_the_other_packs_still_answer() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = Fixture::new("sha1");
    let bad = f.idx(0);
    let lost = f.only_in(0);
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&bad).is_ok() {
        eprintln!(
            "running as root: a mode-000 file is still readable, so this case cannot be made here"
        );
        return;
    }
    for load in [LoadMode::Mmap, LoadMode::Read] {
        let store = Store::open(f.path(), Options::default().load(load)).unwrap();
        let mut h = store.handle();
        for id in &f.all {
            let r = h.locate(&oid(id));
            if lost.contains(id) {
                assert_incomplete_naming(&r, &bad);
                let msg = r.unwrap_err().to_string();
                assert!(msg.to_lowercase().contains("permission denied"), "{msg}");
            } else {
                let loc = r.unwrap_or_else(|e| panic!("{id}: {e}"));
                check_location(&f, &store, id, loc.expect("present"));
            }
        }
        for id in f.absent() {
            assert_incomplete_naming(&h.locate(&oid(&id)), &bad);
        }
    }
}
