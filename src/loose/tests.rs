use super::*;

#[test]
fn rel_path_layout() {
    let id: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse().unwrap();
    let mut buf = [0xffu8; MAX_REL_PATH];
    let n = write_rel_path(&id, &mut buf);
    assert_eq!(&buf[..n], b"e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    assert_eq!(buf[n], 0);
    let id: ObjectId = "ab".repeat(32).parse().unwrap();
    let n = write_rel_path(&id, &mut buf);
    assert_eq!(n, 65);
    assert_eq!(&buf[..3], b"ab/");
    assert_eq!(buf[n], 0);
}

/// The unchecked C string of a probe, from memory (what Miri checks: `.ci/miri.sh`), for both hash kinds
/// and ids whose bytes span every hex digit: the same bytes as the checked constructor gives, the NUL only at
/// the end, and nothing read past it (a buffer filled with non-NUL bytes beforehand).
#[cfg(unix)]
#[test]
fn rel_cstr_is_the_written_path() {
    for hex in [
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".to_owned(),
        "0123456789abcdef".repeat(4),
        "f".repeat(40),
        "00".repeat(32),
    ] {
        let id: ObjectId = hex.parse().unwrap();
        let mut buf = [0xffu8; MAX_REL_PATH];
        let n = write_rel_path(&id, &mut buf);
        let rel = rel_cstr(&buf, n);
        assert_eq!(
            rel,
            std::ffi::CStr::from_bytes_with_nul(&buf[..n + 1]).unwrap()
        );
        assert_eq!(rel.to_bytes().len(), hex.len() + 1);
        assert_eq!(
            rel.to_str().unwrap(),
            format!("{}/{}", &hex[..2], &hex[2..])
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "real files (Miri cannot open them: rustix's open flags)"
)]
fn cache_skips_odd_entries_and_finds_real_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let objects = tmp.path();
    let fan = objects.join("ab");
    std::fs::create_dir_all(&fan).unwrap();
    let good = "cd".repeat(19);
    std::fs::write(fan.join(&good), b"").unwrap();
    std::fs::write(fan.join("short"), b"").unwrap();
    std::fs::write(fan.join("tmp_obj_XXXXXX"), b"").unwrap();
    std::fs::write(fan.join("zz".repeat(19)), b"").unwrap();
    std::fs::write(fan.join(format!("{good}0")), b"").unwrap();
    std::fs::create_dir(fan.join("ef".repeat(19))).unwrap(); // a directory with an object's name
    let db = LooseDb::open(objects, HashKind::Sha1).unwrap();
    let cache = LooseCache::new(db);
    let id: ObjectId = format!("ab{good}").parse().unwrap();
    assert!(cache.contains(&id).unwrap());
    let other: ObjectId = format!("ab{}", "00".repeat(19)).parse().unwrap();
    assert!(!cache.contains(&other).unwrap());
    // git counts any entry with an object's name; so does the cache.
    let dir_named: ObjectId = format!("ab{}", "ef".repeat(19)).parse().unwrap();
    assert!(cache.contains(&dir_named).unwrap());
    // Missing fan-out directory: absent, not an error.
    let elsewhere: ObjectId = "11".repeat(20).parse().unwrap();
    assert!(!cache.contains(&elsewhere).unwrap());
    // Wrong hash kind: absent.
    let sha256: ObjectId = "ab".repeat(32).parse().unwrap();
    assert!(!cache.contains(&sha256).unwrap());
    assert!(!cache.db().contains(&sha256).unwrap());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "real files (Miri cannot open them: rustix's open flags)"
)]
fn fanout_that_is_a_file_is_empty() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("ab"), b"not a dir").unwrap();
    let db = LooseDb::open(tmp.path(), HashKind::Sha1).unwrap();
    let id: ObjectId = format!("ab{}", "cd".repeat(19)).parse().unwrap();
    assert!(!db.contains(&id).unwrap());
    assert!(!LooseCache::new(db).contains(&id).unwrap());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "real files (Miri cannot open them: rustix's open flags)"
)]
fn open_errors_name_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    match LooseDb::open(&missing, HashKind::Sha1) {
        Err(Error::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("unexpected {other:?}"),
    }
    let file = tmp.path().join("file");
    std::fs::write(&file, b"").unwrap();
    assert!(matches!(
        LooseDb::open(&file, HashKind::Sha1),
        Err(Error::Io { .. })
    ));
}

/// Writes an empty file named like a loose object `hex` under `objects`.
fn touch(objects: &Path, hex: &str) {
    let fan = objects.join(&hex[..2]);
    std::fs::create_dir_all(&fan).unwrap();
    std::fs::write(fan.join(&hex[2..]), b"").unwrap();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "real files (Miri cannot open them: rustix's open flags)"
)]
fn threads_race_first_listings_and_see_refreshes() {
    let tmp = tempfile::tempdir().unwrap();
    let objects = tmp.path();
    // Present ids spread over many fan-out directories; absent ids share their fan-out directories.
    let present: Vec<ObjectId> = (0..200u32)
        .map(|i| {
            let hex = format!("{:02x}{:038x}", (i * 7) % 256, i);
            touch(objects, &hex);
            hex.parse().unwrap()
        })
        .collect();
    let absent: Vec<ObjectId> = (0..200u32)
        .map(|i| {
            format!("{:02x}{:038x}", (i * 7) % 256, i + 1_000_000)
                .parse()
                .unwrap()
        })
        .collect();
    let mut cache = LooseCache::new(LooseDb::open(objects, HashKind::Sha1).unwrap());
    for round in 0..20u32 {
        let hex = format!("{:02x}{:038x}", (round * 13) % 256, round + 2_000_000);
        let new: ObjectId = hex.parse().unwrap();
        // List its bucket first, then write it: stale until refresh.
        assert!(!cache.contains(&new).unwrap());
        touch(objects, &hex);
        // Four threads race for the first listing of every other bucket (the cache was refreshed).
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for id in &present {
                        assert!(cache.contains(id).unwrap(), "{id} lost");
                    }
                    for id in &absent {
                        assert!(!cache.contains(id).unwrap(), "{id} invented");
                    }
                    assert!(
                        !cache.contains(&new).unwrap(),
                        "{new} seen without a refresh"
                    );
                });
            }
        });
        cache.refresh();
        assert!(
            cache.contains(&new).unwrap(),
            "{new} not seen after refresh"
        );
        std::fs::remove_file(objects.join(&hex[..2]).join(&hex[2..])).unwrap();
        assert!(cache.contains(&new).unwrap(), "deleted but still listed");
        cache.refresh();
        assert!(!cache.contains(&new).unwrap());
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "real files (Miri cannot open them: rustix's open flags)"
)]
fn failed_load_is_retried_and_wakes_nobody_forever() {
    // A fan-out "directory" that cannot be listed (a symlink loop): every lookup fails with an I/O error,
    // nothing is cached, and concurrent lookups all return (none waits on a bucket left LOADING).
    #[cfg(unix)]
    {
        let tmp = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("ab", tmp.path().join("ab")).unwrap();
        let cache = LooseCache::new(LooseDb::open(tmp.path(), HashKind::Sha1).unwrap());
        let id: ObjectId = format!("ab{}", "cd".repeat(19)).parse().unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        assert!(matches!(cache.contains(&id), Err(Error::Io { .. })));
                    }
                });
            }
        });
        assert!(cache.buckets[0xab].listing.get().is_none());
        // Once fixed, the next lookup lists it.
        std::fs::remove_file(tmp.path().join("ab")).unwrap();
        touch(tmp.path(), &id.to_string());
        assert!(cache.contains(&id).unwrap());
    }
}

#[test]
fn cache_is_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<LooseCache>();
    check::<LooseDb>();
}
