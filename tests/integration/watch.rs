//! Change detection by inotify (`LooseMode::Watched` and `RefreshMode::OnMiss`, the default on Linux): an
//! object written by another process before a lookup begins is found, and every way events can be incomplete
//! (queue overflow, a directory replaced, a fan-out directory created after open, alternates) ends in a rescan
//! or a fallback to `stat`, never in a stale miss. The `ENOSPC` fallback is a unit test in `src/store/watch.rs`.
#![cfg(any(target_os = "linux", target_os = "android"))]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use odb_index::{Location, ObjectId, Options, Store};
use odb_index_testkit::*;

/// A writer process: for each line `FROM TO` on its stdin it renames FROM to TO (in a child `mv`, whose
/// `rename` returns before it exits), then writes one line to its stdout (the signal).
struct Writer {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Writer {
    fn spawn() -> Writer {
        let mut child = Command::new("sh")
            .args([
                "-c",
                r#"while read a b; do mv "$a" "$b" || exit 1; echo done; done"#,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        Writer { child, out }
    }

    /// Have the writer rename `from` to `to`; returns once it has signalled.
    fn rename(&mut self, from: &Path, to: &Path) {
        let stdin = self.child.stdin.as_mut().expect("piped");
        writeln!(stdin, "{} {}", from.display(), to.display()).expect("to the writer");
        stdin.flush().expect("to the writer");
        let mut line = String::new();
        self.out.read_line(&mut line).expect("from the writer");
        assert_eq!(line, "done\n", "the writer failed to rename {from:?}");
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Rounds of the writer test: `ODB_WATCH_ROUNDS` (the recorded run used 100 000), else 3 000.
fn rounds() -> usize {
    std::env::var("ODB_WATCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn loose_path(objects: &Path, hex: &str) -> PathBuf {
    objects.join(&hex[..2]).join(&hex[2..])
}

/// Write a file named like loose object `hex` (its content is never read by a lookup).
fn write_loose(objects: &Path, hex: &str) {
    std::fs::create_dir_all(objects.join(&hex[..2])).unwrap();
    std::fs::write(loose_path(objects, hex), b"x").unwrap();
}

/// Miss `id` twice: a handle's first miss in a fan-out directory only probes it (one `fstatat`); the second
/// watches and lists the directory, the state these tests are about (a later write must come from an event).
fn miss_until_listed(h: &mut odb_index::Handle, id: &ObjectId) {
    for _ in 0..2 {
        assert_eq!(h.locate(id).unwrap(), None);
    }
}

/// Import `n` blobs into a new pack (one `git fast-import`, branch `b<seed>`): the first object of that pack.
fn import_pack(repo: &Path, n: usize, seed: u64) -> ObjectId {
    let objects = objects_dir(repo);
    let before = idx_files(&objects);
    fast_import_blobs(repo, n, seed, &format!("b{seed}"));
    let idx = idx_files(&objects)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("a new pack");
    show_index(&idx, "sha1")[0].0.parse().unwrap()
}

/// The first object of the repository's only pack, and that pack's `.idx`.
fn packed_object(repo: &Path) -> (ObjectId, PathBuf) {
    let idx = idx_files(&objects_dir(repo)).pop().expect("one pack");
    let first = show_index(&idx, "sha1")[0].0.parse().unwrap();
    (first, idx)
}

/// The writer test: a process renames a loose object (or a pack's `.idx`) into place, then signals over a
/// pipe; the reader's next lookup must find it. Every eighth round makes a pack appear instead (and then
/// disappear: a miss's re-listing keeps it, its index loaded, as git does; `locate_again` then sees it gone).
/// 0 misses.
#[test]
fn object_written_by_another_process_before_the_signal_is_found() {
    writer_rounds(Options::default().change_events_after(0), true);
}

/// The same rounds under the default, where events are set up only after the store's first misses
/// ([`Options::change_events_after`], here half-way through the rounds): found before, across and after the
/// switch from `stat` and probes to events.
#[test]
fn object_written_before_the_signal_is_found_across_the_switch_to_events() {
    let after = 256 + rounds() / 2;
    writer_rounds(
        Options::default().change_events_after(u32::try_from(after).unwrap()),
        false,
    );
}

fn writer_rounds(options: Options, events_at_open: bool) {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 1, 77, "main");
    let objects = objects_dir(repo.path());
    let (in_pack, idx) = packed_object(repo.path());
    let held = objects.join("pack/tmp_idx_held");
    std::fs::rename(&idx, &held).unwrap();
    for b in 0..=255u8 {
        std::fs::create_dir_all(objects.join(format!("{b:02x}"))).unwrap();
    }
    let store = Store::open(repo.path(), options).unwrap();
    assert_eq!(
        store.change_events(),
        events_at_open,
        "inotify is not in use here, or not deferred"
    );
    let mut h = store.handle();
    let n = rounds();
    let hex = absent_ids(n, 40, 9);
    let probe: ObjectId = absent_ids(1, 40, 10)[0].parse().unwrap();
    // One miss in every fan-out directory first: the first only probes, so every round's miss below lists.
    for b in 0..=255u8 {
        let id: ObjectId = format!("{b:02x}{}", "0".repeat(38)).parse().unwrap();
        assert_eq!(h.locate(&id).unwrap(), None);
    }
    let mut writer = Writer::spawn();
    let (mut misses, mut stale) = (0, 0);
    for (k, hex) in hex.iter().enumerate() {
        if k % 8 == 7 {
            assert_eq!(h.locate(&in_pack).unwrap(), None);
            writer.rename(&held, &idx);
            match h.locate(&in_pack).unwrap() {
                Some(Location::Packed { .. }) => {}
                _ => misses += 1,
            }
            writer.rename(&idx, &held);
            // A miss refreshes (the pack directory changed). Its index is loaded: the re-listing keeps it, as git
            // keeps a pack it has opened (issue 38, 5); `locate_again` (what a reader that cannot open it calls)
            // lists again keeping nothing: then the pack is gone for good.
            assert_eq!(h.locate(&probe).unwrap(), None);
            match h.locate(&in_pack).unwrap() {
                Some(at) => {
                    if h.locate_again(&in_pack, at).unwrap().is_some() {
                        stale += 1;
                    }
                }
                None => misses += 1,
            }
            continue;
        }
        let id: ObjectId = hex.parse().unwrap();
        // Listed (and watched) before the write: the hit below must come from the event.
        assert_eq!(h.locate(&id).unwrap(), None);
        let tmp = objects.join(format!("tmp_obj_{k}"));
        std::fs::write(&tmp, b"x").unwrap();
        writer.rename(&tmp, &loose_path(&objects, hex));
        match h.locate(&id).unwrap() {
            Some(Location::Loose { dir: 0 }) => {}
            _ => misses += 1,
        }
    }
    assert_eq!(
        (misses, stale),
        (0, 0),
        "false misses / stale hits in {n} rounds"
    );
    assert!(store.change_events(), "events were set up");
}

/// More events than the queue holds (`IN_Q_OVERFLOW`): the write whose event was dropped is still found (every
/// listing is read again), and the store keeps using events.
#[test]
fn queue_overflow_rescans() {
    let repo = init_repo("sha1", true);
    let objects = objects_dir(repo.path());
    let hex = &absent_ids(1, 40, 21)[0];
    let id: ObjectId = hex.parse().unwrap();
    std::fs::create_dir_all(objects.join(&hex[..2])).unwrap();
    let store = Store::open(repo.path(), Options::default().change_events_after(0)).unwrap();
    assert!(store.change_events());
    let mut h = store.handle();
    miss_until_listed(&mut h, &id);
    let max: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16384);
    // Each creation is one event on the objects directory's watch.
    for i in 0..max + 16 {
        std::fs::File::create(objects.join(format!("j{i}"))).unwrap();
    }
    // Its event is dropped: the queue is full.
    write_loose(&objects, hex);
    assert_eq!(h.locate(&id).unwrap(), Some(Location::Loose { dir: 0 }));
    assert!(
        store.change_events(),
        "an overflow is a rescan, not a fallback"
    );
}

/// A pack directory replaced (renamed away, a new one made): events from the new one never come, so the store
/// falls back to `stat` and finds packs written there, then and later.
#[test]
fn replaced_pack_directory_falls_back_to_stat() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 2, 1, "a");
    let objects = objects_dir(repo.path());
    let store = Store::open(repo.path(), Options::default().change_events_after(0)).unwrap();
    assert!(store.change_events());
    let mut h = store.handle();
    let absent: ObjectId = absent_ids(1, 40, 5)[0].parse().unwrap();
    assert_eq!(h.locate(&absent).unwrap(), None);
    std::fs::rename(objects.join("pack"), objects.join("pack.old")).unwrap();
    std::fs::create_dir(objects.join("pack")).unwrap();
    fast_import_blobs(repo.path(), 2, 2, "b");
    let (first, _) = packed_object(repo.path());
    assert!(matches!(
        h.locate(&first).unwrap(),
        Some(Location::Packed { .. })
    ));
    assert!(
        !store.change_events(),
        "a replaced pack directory is a fallback"
    );
    // Written after the fallback, in the unwatched directory: found by `stat`.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let later = import_pack(repo.path(), 2, 3);
    assert!(matches!(
        h.locate(&later).unwrap(),
        Some(Location::Packed { .. })
    ));
}

/// A fan-out directory replaced (`git prune` removes empty ones; here renamed away and made again) and one
/// created after it was first listed as missing: objects written in either are found.
#[test]
fn fanout_directory_replaced_or_created_later_is_seen() {
    let repo = init_repo("sha1", true);
    let objects = objects_dir(repo.path());
    let hex = absent_ids(4, 40, 33);
    let store = Store::open(repo.path(), Options::default().change_events_after(0)).unwrap();
    assert!(store.change_events());
    let mut h = store.handle();
    let id = |i: usize| -> ObjectId { hex[i].parse().unwrap() };
    // Created after open, after the lookup that listed it as missing.
    assert!(!objects.join(&hex[0][..2]).exists());
    miss_until_listed(&mut h, &id(0));
    write_loose(&objects, &hex[0]);
    assert_eq!(h.locate(&id(0)).unwrap(), Some(Location::Loose { dir: 0 }));
    // Replaced: renamed away (taking the object with it), made again, then written in.
    let fan = objects.join(&hex[0][..2]);
    std::fs::rename(&fan, objects.join("old-fanout")).unwrap();
    assert_eq!(h.locate(&id(0)).unwrap(), None);
    std::fs::create_dir(&fan).unwrap();
    std::fs::write(fan.join(&hex[0][2..]), b"x").unwrap();
    assert_eq!(h.locate(&id(0)).unwrap(), Some(Location::Loose { dir: 0 }));
    // And watched again: a later write in the new directory is seen.
    let mut same_fan = hex[1].clone();
    same_fan.replace_range(..2, &hex[0][..2]);
    let other: ObjectId = same_fan.parse().unwrap();
    assert_eq!(h.locate(&other).unwrap(), None);
    write_loose(&objects, &same_fan);
    assert_eq!(h.locate(&other).unwrap(), Some(Location::Loose { dir: 0 }));
    // Removed outright (the objects directory's watch sees it go).
    std::fs::remove_file(loose_path(&objects, &same_fan)).unwrap();
    std::fs::remove_file(loose_path(&objects, &hex[0])).unwrap();
    std::fs::remove_dir(&fan).unwrap();
    assert_eq!(h.locate(&other).unwrap(), None);
    assert!(store.change_events());
}

/// Three objects directories (two alternates): a loose object written into an alternate after it was listed
/// is found, one `ioctl` standing for all three.
#[test]
fn alternates_are_watched_too() {
    let main = init_repo("sha1", true);
    let alts: Vec<_> = (0..2).map(|_| init_repo("sha1", true)).collect();
    let list: Vec<String> = alts
        .iter()
        .map(|a| objects_dir(a.path()).display().to_string())
        .collect();
    std::fs::write(
        objects_dir(main.path()).join("info/alternates"),
        list.join("\n") + "\n",
    )
    .unwrap();
    let store = Store::open(main.path(), Options::default().change_events_after(0)).unwrap();
    assert!(store.change_events());
    assert_eq!(store.objects_dirs().len(), 3);
    let mut h = store.handle();
    let hex = absent_ids(2, 40, 44);
    for (k, alt) in alts.iter().enumerate() {
        let id: ObjectId = hex[k].parse().unwrap();
        miss_until_listed(&mut h, &id);
        write_loose(&objects_dir(alt.path()), &hex[k]);
        assert_eq!(h.locate(&id).unwrap(), Some(Location::Loose { dir: k + 1 }));
    }
}

/// The default defers events ([`Options::change_events_after`]): until the store's handles have reported that
/// many misses it stats and probes (no inotify descriptor: `change_events` is false), and the miss that
/// reaches the count lists the pack directories again with events set up. A pack and a loose object written
/// just before that miss, and others written after it, are all found.
#[test]
fn deferred_events_are_set_up_by_the_miss_that_reaches_the_count() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 3, 1, "a");
    let objects = objects_dir(repo.path());
    let store = Store::open(repo.path(), Options::default().change_events_after(64)).unwrap();
    let mut h = store.handle();
    let absent: Vec<ObjectId> = absent_ids(64, 40, 61)
        .iter()
        .map(|x| x.parse().unwrap())
        .collect();
    // A handle reports its misses 64 at a time: 63 are not counted yet.
    for id in &absent[..63] {
        assert_eq!(h.locate(id).unwrap(), None);
    }
    assert!(!store.change_events(), "events set up before the count");
    let listings = store.metrics().listings;
    let new_pack = |seed: u64| import_pack(repo.path(), 3, seed);
    let loose = absent_ids(2, 40, 62);
    let packed_before = new_pack(2);
    write_loose(&objects, &loose[0]);
    // The 64th miss: reported, the count is reached, the lookup refreshes with events.
    assert_eq!(h.locate(&absent[63]).unwrap(), None);
    assert!(
        store.metrics().listings > listings,
        "no listing at the switch"
    );
    assert!(store.change_events(), "events not set up at the count");
    assert!(matches!(
        h.locate(&packed_before).unwrap(),
        Some(Location::Packed { .. })
    ));
    let loose0: ObjectId = loose[0].parse().unwrap();
    assert_eq!(h.locate(&loose0).unwrap(), Some(Location::Loose { dir: 0 }));
    // After the switch: events find new writes, in this handle and in a new one.
    let loose1: ObjectId = loose[1].parse().unwrap();
    miss_until_listed(&mut h, &loose1);
    let packed_after = new_pack(3);
    write_loose(&objects, &loose[1]);
    for h in [&mut h, &mut store.handle()] {
        assert!(matches!(
            h.locate(&packed_after).unwrap(),
            Some(Location::Packed { .. })
        ));
        assert_eq!(h.locate(&loose1).unwrap(), Some(Location::Loose { dir: 0 }));
    }
    assert!(store.change_events());
}
