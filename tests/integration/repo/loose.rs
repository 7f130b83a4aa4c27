//! Loose objects: paths, lookups, the loose cache.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// loose objects

fn loose_roundtrip(fmt: &str, kind: HashKind) {
    let t = init_repo(fmt, true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..40)
        .map(|i| write_blob(t.path(), &format!("loose {i}\n")))
        .collect();
    assert!(ids.iter().all(|i| i.kind() == kind));
    let db = LooseDb::open(&objects, kind).unwrap();
    assert_eq!(db.path(), objects);
    let cache = LooseCache::new(LooseDb::open(&objects, kind).unwrap());
    for i in &ids {
        assert!(db.contains(i).unwrap(), "{i}");
        assert!(cache.contains(i).unwrap(), "{i}");
    }
    for hex in absent_ids(200, kind.hex_len(), 42) {
        let a = id(&hex);
        assert!(!db.contains(&a).unwrap(), "{a}");
        assert!(!cache.contains(&a).unwrap(), "{a}");
    }
    // Each id's neighbours (last byte changed) are absent: the comparison uses every byte.
    for i in &ids {
        let mut b = i.as_bytes().to_vec();
        *b.last_mut().unwrap() ^= 1;
        let n = ObjectId::from_bytes(&b).unwrap();
        assert!(!db.contains(&n).unwrap());
        assert!(!cache.contains(&n).unwrap());
    }
}

#[test]
fn loose_sha1() {
    loose_roundtrip("sha1", HashKind::Sha1);
}

#[test]
fn loose_sha256() {
    loose_roundtrip("sha256", HashKind::Sha256);
}

#[test]
fn loose_written_after_open() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let mut cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());

    let x = hash_blob(t.path(), "x\n");
    // Loads x's fan-out directory (absent).
    assert!(!cache.contains(&x).unwrap());
    assert!(!db.contains(&x).unwrap());
    assert_eq!(write_blob(t.path(), "x\n"), x);
    assert!(
        db.contains(&x).unwrap(),
        "a probe sees a new object at once"
    );
    assert!(
        !cache.contains(&x).unwrap(),
        "the cache is stale until refresh"
    );

    // An object in a fan-out directory that the cache has not read yet is seen without refresh.
    let (y_content, y) = (0..)
        .map(|i| {
            let c = format!("y{i}\n");
            let h = hash_blob(t.path(), &c);
            (c, h)
        })
        .find(|(_, y)| y.first_byte() != x.first_byte())
        .unwrap();
    assert_eq!(write_blob(t.path(), &y_content), y);
    assert!(
        cache.contains(&y).unwrap(),
        "unread fan-out directory is read on first use"
    );

    cache.refresh();
    assert!(cache.contains(&x).unwrap(), "refresh makes it visible");

    // Deleted objects stay visible in the cache until refresh; a probe sees the deletion at once.
    let mut hex = x.to_string();
    let rest = hex.split_off(2);
    std::fs::remove_file(objects.join(&hex).join(&rest)).unwrap();
    assert!(!db.contains(&x).unwrap());
    assert!(cache.contains(&x).unwrap(), "deleted but still cached");
    cache.refresh();
    assert!(!cache.contains(&x).unwrap());
}

#[test]
fn loose_cache_ignores_odd_directory_contents() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..20)
        .map(|i| write_blob(t.path(), &format!("odd {i}\n")))
        .collect();
    for i in &ids {
        let fan = objects.join(&i.to_string()[..2]);
        std::fs::write(fan.join("tmp_obj_Ab12Cd"), b"junk").unwrap();
        std::fs::write(fan.join("short"), b"").unwrap();
        std::fs::write(fan.join("g".repeat(38)), b"").unwrap();
        std::fs::write(fan.join("a".repeat(39)), b"").unwrap();
        std::fs::write(fan.join("b".repeat(62)), b"").unwrap();
        std::fs::create_dir_all(fan.join("subdir")).unwrap();
    }
    // Files at the top level and an odd fan-out-looking file.
    std::fs::write(objects.join("zz"), b"").unwrap();
    std::fs::write(objects.join("ff"), b"a file where a directory belongs").unwrap();
    let cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    for i in &ids {
        assert!(cache.contains(i).unwrap());
    }
    for hex in absent_ids(300, 40, 9) {
        assert!(!cache.contains(&id(&hex)).unwrap());
    }
    // git is not bothered either.
    assert!(ids.iter().all(|i| git_has(t.path(), i)));
}

#[test]
fn loose_cache_from_many_threads() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..60)
        .map(|i| write_blob(t.path(), &format!("mt {i}\n")))
        .collect();
    let absent: Vec<ObjectId> = absent_ids(300, 40, 3).iter().map(|h| id(h)).collect();
    let mut cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    // `refresh` takes `&mut self`: refresh between rounds of four threads that race for the first listings.
    for _ in 0..4 {
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (cache, ids, absent) = (&cache, &ids, &absent);
                s.spawn(move || {
                    for _ in 0..5 {
                        for i in ids {
                            assert!(cache.contains(i).unwrap());
                        }
                        for a in absent {
                            assert!(!cache.contains(a).unwrap());
                        }
                    }
                });
            }
        });
        cache.refresh();
    }
}

#[cfg(unix)]
#[test]
fn loose_probe_error_names_the_path() {
    // A fan-out "directory" that is a symlink loop: fstatat fails with ELOOP, which is neither ENOENT nor
    // ENOTDIR, so it must surface as an error naming the object's path.
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    std::os::unix::fs::symlink("ab", objects.join("ab")).unwrap();
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let rest = "cd".repeat(19);
    let oid = id(&format!("ab{rest}"));
    match db.contains(&oid) {
        Err(Error::Io { path, .. }) => assert_eq!(path, objects.join("ab").join(&rest)),
        other => panic!("unexpected {other:?}"),
    }
    match LooseCache::new(db).contains(&oid) {
        Err(Error::Io { path, .. }) => assert_eq!(path, objects.join("ab")),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn loose_lookups_do_not_allocate() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let present: Vec<ObjectId> = (0..10)
        .map(|i| write_blob(t.path(), &format!("alloc {i}\n")))
        .collect();
    let absent: Vec<ObjectId> = absent_ids(10, 40, 77).iter().map(|h| id(h)).collect();
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    // Warm up the cache (loads the buckets: allocates).
    for i in present.iter().chain(&absent) {
        cache.contains(i).unwrap();
    }

    let before = allocations_on_this_thread();
    let mut hits = 0usize;
    for _ in 0..50 {
        for i in &present {
            hits += usize::from(db.contains(i).unwrap());
        }
        for a in &absent {
            hits += usize::from(db.contains(a).unwrap());
        }
    }
    let db_allocs = allocations_on_this_thread() - before;
    assert_eq!(hits, 500);

    let before = allocations_on_this_thread();
    let mut hits = 0usize;
    for _ in 0..50 {
        for i in present.iter().chain(&absent) {
            hits += usize::from(cache.contains(i).unwrap());
        }
    }
    let cache_allocs = allocations_on_this_thread() - before;
    assert_eq!(hits, 500);

    // The counter works: a Vec allocates.
    let before = allocations_on_this_thread();
    let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(16));
    drop(v);
    assert_eq!(
        allocations_on_this_thread() - before,
        1,
        "the counting allocator counts"
    );

    assert_eq!(db_allocs, 0, "LooseDb::contains allocated in 1000 probes");
    assert_eq!(
        cache_allocs, 0,
        "LooseCache::contains allocated in 1000 warm lookups"
    );
}
