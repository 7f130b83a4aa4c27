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

// ---------------------------------------------------------------------------------------------------------
// Odd directories: the store answers exactly as git does, without errors.
// ---------------------------------------------------------------------------------------------------------

#[test]
fn idx_without_its_pack_is_ignored_like_git() {
    for format in ["sha1", "sha256"] {
        let f = Fixture::new(format);
        let gone = f.only_in(1);
        std::fs::remove_file(f.idx(1).with_extension("pack")).unwrap();
        let store = open(&f);
        assert_eq!(
            store.packs().len(),
            2,
            "{format}: an idx without a pack listed"
        );
        assert_agrees_with_git(&f, &store, &everything(&f));
        // The objects of the lost pack are missing for git, too: not an error.
        assert!(git_has(f.path(), &gone).iter().all(|p| !p));
        assert_eq!(
            store.metrics().index_loads,
            2,
            "{format}: the orphan idx was opened"
        );
    }
}

#[test]
fn pack_without_its_idx_is_ignored_like_git() {
    let f = Fixture::new("sha1");
    std::fs::remove_file(f.idx(0)).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 2);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert!(store.problems().is_empty(), "{:?}", store.problems());
}

#[test]
fn temporary_and_auxiliary_files_are_ignored() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let stem = f.idx(0).file_stem().unwrap().to_str().unwrap().to_owned();
    // What git leaves around: temporaries of an interrupted index-pack or repack, and per-pack side files.
    let garbage: &[u8] = b"\xff\x74\x4f\x63 this is not an index";
    for name in [
        "tmp_pack_XqZ3a1".to_owned(),
        "tmp_idx_XqZ3a1".to_owned(),
        "tmp_rev_XqZ3a1".to_owned(),
        ".tmp-1234-pack-deadbeef.idx".to_owned(),
        "multi-pack-index.lock".to_owned(),
        format!("{stem}.keep"),
        format!("{stem}.promisor"),
        format!("{stem}.rev"),
        format!("{stem}.bitmap"),
        format!("{stem}.mtimes"),
        format!("{stem}.idx.lock"),
        format!("{stem}.idx~"),
        "pack-.idx".to_owned(),
    ] {
        std::fs::write(d.join(&name), garbage).unwrap();
    }
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert!(store.problems().is_empty(), "{:?}", store.problems());
    assert_eq!(store.metrics().index_loads, 3);
}

#[test]
fn directories_named_like_pack_files_are_skipped() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let fake = format!("pack-{}", "ab".repeat(20));
    // An idx that is a directory, with a real-looking pack; and a real-looking idx whose pack is a directory.
    std::fs::create_dir(d.join(format!("{fake}.idx"))).unwrap();
    std::fs::write(d.join(format!("{fake}.pack")), b"PACK").unwrap();
    let fake2 = format!("pack-{}", "cd".repeat(20));
    std::fs::copy(f.idx(0), d.join(format!("{fake2}.idx"))).unwrap();
    std::fs::create_dir(d.join(format!("{fake2}.pack"))).unwrap();
    std::fs::create_dir(d.join("multi-pack-index.d")).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    // git 2.47 itself dies here ("fatal: mmap failed: No such device" on the directory named like an idx), so
    // the answers are checked against the index files, not against git.
    assert_serves_everything(&f, &store);
    assert_eq!(store.metrics().index_loads, 3);
}

#[test]
fn multi_pack_index_that_is_a_directory_is_reported_not_fatal() {
    let f = Fixture::new("sha1");
    std::fs::create_dir(f.pack_dir().join("multi-pack-index")).unwrap();
    let store = open(&f);
    // git dies on this one ("fatal: mmap failed"): checked against the index files instead.
    assert_serves_everything(&f, &store);
    let problems = store.problems();
    assert!(problems.iter().any(is_midx_problem), "{problems:?}");
}

#[cfg(unix)]
#[test]
fn symlinked_pack_directory_is_followed() {
    let f = Fixture::new("sha1");
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("real-pack-dir");
    std::fs::rename(f.pack_dir(), &target).unwrap();
    std::os::unix::fs::symlink(&target, f.pack_dir()).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
}

#[cfg(unix)]
#[test]
fn symlinked_idx_and_pack_files_are_followed() {
    let f = Fixture::new("sha1");
    let elsewhere = tempfile::tempdir().unwrap();
    let idx = f.idx(2);
    for p in [idx.clone(), idx.with_extension("pack")] {
        let t = elsewhere.path().join(p.file_name().unwrap());
        std::fs::rename(&p, &t).unwrap();
        std::os::unix::fs::symlink(&t, &p).unwrap();
    }
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
}

#[cfg(unix)]
#[test]
fn dangling_symlink_named_like_an_idx_is_skipped() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let fake = format!("pack-{}", "ef".repeat(20));
    std::os::unix::fs::symlink(d.join("no-such-file.idx"), d.join(format!("{fake}.idx"))).unwrap();
    std::fs::write(d.join(format!("{fake}.pack")), b"PACK").unwrap();
    // And a real idx whose pack is a dangling symlink.
    let pack = f.idx(1).with_extension("pack");
    std::fs::remove_file(&pack).unwrap();
    std::os::unix::fs::symlink(d.join("no-such-file.pack"), &pack).unwrap();
    // And a dangling symlink named like the multi-pack-index.
    std::os::unix::fs::symlink(d.join("no-such-midx"), d.join("multi-pack-index")).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 2);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert_eq!(store.metrics().index_loads, 2);
}

#[test]
fn empty_repository_answers_none() {
    for format in ["sha1", "sha256"] {
        for bare in [true, false] {
            let repo = init_repo(format, bare);
            let kind: HashKind = format.parse().unwrap();
            for path in [repo.path().to_path_buf(), objects_dir(repo.path())] {
                let store = Store::open(&path, Options::default()).unwrap();
                assert_eq!(store.hash_kind(), kind, "{}", path.display());
                let mut h = store.handle();
                for id in absent_ids(20, kind.hex_len(), 5) {
                    assert_eq!(h.locate(&oid(&id)).unwrap(), None);
                }
                assert!(store.packs().is_empty());
                assert!(!store.refresh().unwrap());
            }
        }
    }
}

#[test]
fn missing_pack_directory_serves_loose_objects_then_finds_packs_after_refresh() {
    let f = Fixture::new("sha1");
    let aside = f.objects().join("pack-aside");
    std::fs::rename(f.pack_dir(), &aside).unwrap();
    let store = open(&f);
    assert!(store.packs().is_empty());
    assert_agrees_with_git(&f, &store, &everything(&f));
    let mut h = store.handle();
    for id in &f.loose {
        assert_eq!(
            h.locate(&oid(id)).unwrap(),
            Some(Location::Loose { dir: 0 })
        );
    }
    // The directory comes back (with its packs): an explicit refresh sees it.
    std::fs::rename(&aside, f.pack_dir()).unwrap();
    assert!(store.refresh().unwrap());
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert_eq!(store.packs().len(), 3);
}

#[test]
fn objects_directory_opened_directly_works_without_pack_and_info() {
    let f = Fixture::new("sha1");
    std::fs::remove_dir_all(f.pack_dir()).unwrap();
    std::fs::remove_dir_all(f.objects().join("info")).unwrap();
    // Still an objects directory: it has fan-out directories of the loose objects.
    let store = Store::open(f.objects(), Options::default()).unwrap();
    assert_agrees_with_git(&f, &store, &everything(&f));
}

// ---------------------------------------------------------------------------------------------------------
// Corrupt files, replaced the way git replaces files (new inode): reported, and the rest still answers.
// ---------------------------------------------------------------------------------------------------------

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

#[test]
fn truncated_idx_is_reported_and_the_other_packs_still_answer() {
    for format in ["sha1", "sha256"] {
        let f = Fixture::new(format);
        let bad = f.idx(0);
        let lost = f.only_in(0);
        let bytes = std::fs::read(&bad).unwrap();
        for cut in [0, 7, 8 + 1024 - 1, bytes.len() / 2, bytes.len() - 1] {
            replace_by_rename(&bad, &bytes[..cut]);
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(f.path(), Options::default().load(load)).unwrap();
                let mut h = store.handle();
                for id in &f.all {
                    let r = h.locate(&oid(id));
                    if lost.contains(id) {
                        assert_incomplete_naming(&r, &bad);
                        let msg = r.unwrap_err().to_string();
                        assert!(msg.contains("corrupt pack index"), "{msg}");
                    } else {
                        let loc = r.unwrap_or_else(|e| panic!("{format} cut {cut}: {id}: {e}"));
                        check_location(&f, &store, id, loc.expect("present"));
                    }
                }
                for id in f.absent() {
                    assert_incomplete_naming(&h.locate(&oid(&id)), &bad);
                }
            }
        }
    }
}

#[test]
fn garbage_multi_pack_index_falls_back_to_the_idx_files() {
    let f = Fixture::new("sha1");
    git(f.path(), &["multi-pack-index", "write"]);
    let midx = f.pack_dir().join("multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let mut variants: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("text", b"this is not a multi-pack-index\n".repeat(40)),
        ("truncated header", good[..10].to_vec()),
        ("truncated in the chunk table", good[..30].to_vec()),
        ("half", good[..good.len() / 2].to_vec()),
    ];
    let mut bad_version = good.clone();
    bad_version[4] = 9;
    variants.push(("unknown version", bad_version));
    let mut bad_pnam = good.clone();
    let pnam = chunk_offset(&good, *b"PNAM");
    bad_pnam[pnam] = b'/';
    variants.push(("pack name with a slash", bad_pnam));
    for (what, bytes) in variants {
        replace_by_rename(&midx, &bytes);
        let store = open(&f);
        assert_serves_everything(&f, &store);
        let problems = store.problems();
        assert!(
            problems.iter().any(is_midx_problem),
            "{what}: not reported: {problems:?}"
        );
    }
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

/// Offset of the chunk `id` in a multi-pack-index (from its chunk table).
fn chunk_offset(midx: &[u8], id: [u8; 4]) -> usize {
    let chunks = usize::from(midx[6]);
    (0..chunks)
        .map(|i| 12 + 12 * i)
        .find(|&at| midx[at..at + 4] == id)
        .map(|at| u64::from_be_bytes(midx[at + 4..at + 12].try_into().unwrap()) as usize)
        .expect("chunk present")
}

/// The fallback itself, for two kinds of corrupt body and both load modes, and the report.
#[test]
fn multi_pack_index_with_a_corrupt_body_falls_back_to_the_idx_files() {
    let f = Fixture::new("sha1");
    git(f.path(), &["multi-pack-index", "write"]);
    let midx = f.pack_dir().join("multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let oidf = chunk_offset(&good, *b"OIDF");
    let ooff = chunk_offset(&good, *b"OOFF");
    let mut fanout = good.clone();
    fanout[oidf..oidf + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut pack_int = good.clone();
    pack_int[ooff..ooff + 4].copy_from_slice(&77u32.to_be_bytes());
    // The fanout is checked when the file is opened; an object's pack int id only when that object is looked up
    // (opening is O(packs), not O(objects)): that entry never gives a location; the object is answered from the
    // packs' own .idx files, the entry is reported naming the file, and every other object is served.
    let first = {
        let oidl = chunk_offset(&good, *b"OIDL");
        ObjectId::from_bytes(&good[oidl..oidl + 20]).unwrap()
    };
    replace_by_rename(&midx, &pack_int);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        let store = Store::open(f.path(), Options::default().load(load)).unwrap();
        let mut h = store.handle();
        let loc = h
            .locate(&first)
            .unwrap()
            .expect("found through the .idx files");
        check_location(&f, &store, &first.to_string(), loc);
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| matches!(
                p,
                Problem::MultiPackIndexEntryWrong { path, error }
                    if *path == midx
                        && matches!(**error, Error::CorruptMultiPackIndex { .. })
                        && error.to_string().contains("pack 77")
            )),
            "{problems:?}"
        );
        for id in f.all.iter().filter(|i| **i != first.to_string()) {
            let loc = h.locate(&oid(id)).unwrap().expect("present");
            check_location(&f, &store, id, loc);
        }
        for id in f.absent() {
            assert_eq!(h.locate(&oid(&id)).unwrap(), None);
        }
    }
    for (what, bytes) in [("fanout", fanout)] {
        replace_by_rename(&midx, &bytes);
        for load in [LoadMode::Mmap, LoadMode::Read] {
            let store = Store::open(f.path(), Options::default().load(load)).unwrap();
            assert_serves_everything(&f, &store);
            // Under `LoadMode::Read` the listing reads (and so validates) the whole file instead of mapping
            // it for its pack names, so the broken file is rejected there and never becomes a slot.
            let expected = if load == LoadMode::Read { 3 } else { 4 };
            assert_eq!(
                store.metrics().index_loads,
                expected,
                "{what}: the midx (unless rejected at listing) and the three .idx"
            );
            let problems = store.problems();
            assert!(
                problems.iter().any(is_midx_problem),
                "{what}: the broken multi-pack-index is not reported: {problems:?}"
            );
        }
    }
}

#[test]
fn idx_of_the_wrong_hash_kind_is_reported() {
    for (format, other) in [("sha1", HashKind::Sha256), ("sha256", HashKind::Sha1)] {
        let f = Fixture::new(format);
        // A well-formed index of the other hash kind, with a pack beside it.
        let entries: Vec<Entry> = (0..10u32)
            .map(|i| Entry {
                id: other.digest(format!("other {i}").as_bytes()),
                offset: 12 + u64::from(i) * 50,
                crc32: i,
            })
            .collect();
        let bytes = write_idx(2, other, &entries, &other.digest(b"pack")).unwrap();
        let stem = format!("pack-{}", "0f".repeat(f.kind().len()));
        let bad = f.pack_dir().join(format!("{stem}.idx"));
        std::fs::write(&bad, bytes).unwrap();
        std::fs::write(bad.with_extension("pack"), b"PACK").unwrap();
        let store = open(&f);
        let mut h = store.handle();
        for id in &f.all {
            let loc = h.locate(&oid(id)).unwrap().expect("present");
            check_location(&f, &store, id, loc);
        }
        for id in f.absent() {
            assert_incomplete_naming(&h.locate(&oid(&id)), &bad);
        }
        // An id of the other kind is refused, not searched.
        assert!(matches!(
            h.locate(&entries[0].id),
            Err(Error::WrongIdHashKind { .. })
        ));
    }
}

#[test]
fn multi_pack_index_of_the_wrong_hash_kind_is_reported() {
    let f = Fixture::new("sha1");
    let other = Fixture::new("sha256");
    git(other.path(), &["multi-pack-index", "write"]);
    let bytes = std::fs::read(other.pack_dir().join("multi-pack-index")).unwrap();
    std::fs::write(f.pack_dir().join("multi-pack-index"), bytes).unwrap();
    let store = open(&f);
    assert_serves_everything(&f, &store);
    let problems = store.problems();
    assert!(
        problems
            .iter()
            .any(|p| is_midx_problem(p) && p.to_string().contains("sha256")),
        "{problems:?}"
    );
}

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

/// A multi-pack-index that the store could not use (at listing or at load), worked around by the `.idx` files.
fn is_midx_problem(p: &odb_index::Problem) -> bool {
    matches!(
        p,
        odb_index::Problem::MultiPackIndexIgnored { .. }
            | odb_index::Problem::MultiPackIndexNotLoaded { .. }
    )
}
