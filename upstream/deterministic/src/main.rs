//! F1 and F3 with the timing forced by `delay-hook.diff`: the thread named "slow" sleeps 1 s in the gap, another
//! thread does what the interleaving needs meanwhile. Prints, per scenario, what the slow lookup answered on
//! gix-odb 0.87.0 and on the patched copy; exits 1 unless 0.87.0 answered "missing" and the patched copy "found"
//! (and, for F3's precondition, both "found" when the new pack is the larger one); and, for F1 through
//! `load_all_indices()`, unless 0.87.0 counted fewer than the pack's 200 objects and the patched copy all of them.
use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread::sleep,
    time::Duration,
};

type Id = gix_hash::ObjectId;

fn git(dir: &Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write as _;
    let mut c = Command::new("git")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("-C")
        .arg(dir)
        .args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git");
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A bare repository whose blobs (`data`) are in one pack (`unpackLimit=0`: never loose).
fn repo(dir: &Path, data: &[String]) -> Id {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "--bare"], "");
    let stream: String = data.iter().map(|d| format!("blob\ndata {}\n{d}\n", d.len())).collect();
    git(
        dir,
        &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"],
        &stream,
    );
    let id = git(dir, &["hash-object", "--stdin"], &data[0]);
    Id::from_hex(id.trim().as_bytes()).unwrap()
}

fn pack_files(objects: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(objects.join("pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort_by_key(|p| p.extension().is_some_and(|x| x == "idx")); // .pack before .idx
    v
}

macro_rules! scenarios {
    ($m:ident, $krate:ident) => {
        mod $m {
            use super::*;
            use $krate::pack::Find as _;

            fn open(objects: &Path, never: bool) -> $krate::HandleArc {
                let mut h = $krate::at(objects, gix_hash::Kind::Sha1)
                    .unwrap()
                    .into_arc()
                    .unwrap();
                if never {
                    h.refresh_never();
                }
                h
            }

            /// A lookup of `id` by a thread named "slow" (the hook's thread), given 500 ms to reach its gap (1 s).
            fn slow_lookup(h: &$krate::HandleArc, id: Id) -> std::thread::JoinHandle<bool> {
                let slow = h.clone();
                let t = std::thread::Builder::new()
                    .name("slow".into())
                    .spawn(move || slow.contains(&id))
                    .unwrap();
                sleep(Duration::from_millis(500));
                t
            }

            /// F1: a fresh store (slot list read, no index loaded); "slow" misses in its empty snapshot and sleeps
            /// between line 61 and 89; meanwhile another lookup loads the only index.
            pub fn f1(objects: &Path, id: Id, never: bool) -> bool {
                let h = open(objects, never);
                h.store_ref().structure().unwrap();
                let t = slow_lookup(&h, id);
                assert!(h.clone().contains(&id), "the other lookup finds it");
                t.join().unwrap()
            }

            /// F1 through `load_all_indices()` (always `RefreshMode::Never`): as `f1`, but "slow" asks
            /// `packed_object_count()` twice on one handle (the second answer comes from the handle's cache), or
            /// counts the objects `Store::iter()` yields; meanwhile another lookup loads the only index.
            pub fn f1_all(objects: &Path, id: Id, iter: bool) -> (u64, u64) {
                let h = open(objects, true);
                h.store_ref().structure().unwrap();
                let slow = h.clone();
                let t = std::thread::Builder::new()
                    .name("slow".into())
                    .spawn(move || {
                        if iter {
                            let n = slow.store_ref().iter().unwrap().count() as u64;
                            (n, n)
                        } else {
                            (slow.packed_object_count().unwrap(), slow.packed_object_count().unwrap())
                        }
                    })
                    .unwrap();
                sleep(Duration::from_millis(500));
                assert!(h.clone().contains(&id), "the other lookup finds it");
                t.join().unwrap()
            }

            /// F3: every index loaded; "slow" misses an object not yet on disk and sleeps between line 147 and 175;
            /// meanwhile `new_pack` (holding it) arrives and another lookup's refresh publishes and loads it. F3
            /// needs the new pack to sort last (the smallest .idx); `main` also runs it with a bigger one.
            pub fn f3(objects: &Path, new_pack: &[PathBuf], id: Id) -> bool {
                let h = open(objects, false);
                assert!(!h.contains(&id), "not on disk yet"); // loads every index, refreshes once
                let t = slow_lookup(&h, id);
                for f in new_pack {
                    std::fs::copy(f, objects.join("pack").join(f.file_name().unwrap())).unwrap();
                }
                assert!(h.clone().contains(&id), "the other lookup's refresh finds it");
                let found = t.join().unwrap();
                for f in new_pack {
                    std::fs::remove_file(objects.join("pack").join(f.file_name().unwrap())).unwrap();
                }
                found
            }
        }
    };
}

scenarios!(as_is, gix_odb_hooked);
scenarios!(patched, gix_odb_patched_hooked);

fn main() {
    let tmp = std::env::temp_dir().join(format!("gix-odb-deterministic-{}", std::process::id()));
    let blobs: Vec<String> = (0..200).map(|i| format!("blob {i}\n")).collect();
    let id = repo(&tmp.join("main"), &blobs);
    let objects = tmp.join("main/objects");
    let new_id = repo(&tmp.join("new"), &["arrives later\n".to_string()]);
    let new_pack = pack_files(&tmp.join("new/objects"));
    assert_eq!(new_pack.len(), 2, "one pack and its index");
    // F3's precondition: the same with a new pack bigger than the existing one (its .idx sorts first).
    let big: Vec<String> = std::iter::once("arrives later\n".to_string())
        .chain((0..400).map(|i| format!("big {i}\n")))
        .collect();
    let big_id = repo(&tmp.join("big"), &big);
    let big_pack = pack_files(&tmp.join("big/objects"));
    assert_eq!(big_id, new_id);
    let word = |found: bool| if found { "found" } else { "missing" };
    let mut ok = true;
    let mut report = |name: &str, env: &str, expect_as_is: bool, run: &dyn Fn(bool) -> bool| {
        std::env::set_var(env, "slow");
        let (a, p) = (run(false), run(true));
        std::env::remove_var(env);
        println!("{name}: 0.87.0: {} / patched: {}", word(a), word(p));
        ok &= a == expect_as_is && p;
    };
    report("F1 (RefreshMode::Never)", "GIX_ODB_DELAY_F1", false, &|p| {
        if p {
            patched::f1(&objects, id, true)
        } else {
            as_is::f1(&objects, id, true)
        }
    });
    report("F1 (default refresh mode)", "GIX_ODB_DELAY_F1", false, &|p| {
        if p {
            patched::f1(&objects, id, false)
        } else {
            as_is::f1(&objects, id, false)
        }
    });
    report("F3 (default refresh mode)", "GIX_ODB_DELAY_F3", false, &|p| {
        if p {
            patched::f3(&objects, &new_pack, new_id)
        } else {
            as_is::f3(&objects, &new_pack, new_id)
        }
    });
    // Not F3: the new pack sorts first, so the slot list changes order and the late refresh publishes again.
    report(
        "precondition: F3 with a new pack larger than the old",
        "GIX_ODB_DELAY_F3",
        true,
        &|p| {
            if p {
                patched::f3(&objects, &big_pack, new_id)
            } else {
                as_is::f3(&objects, &big_pack, new_id)
            }
        },
    );
    // F1's impact beyond lookups: `load_all_indices()` takes the same path (one pack of 200 objects).
    for (name, iter) in [("F1 via packed_object_count(), asked twice", false), ("F1 via Store::iter()", true)] {
        std::env::set_var("GIX_ODB_DELAY_F1", "slow");
        let (a, p) = (as_is::f1_all(&objects, id, iter), patched::f1_all(&objects, id, iter));
        std::env::remove_var("GIX_ODB_DELAY_F1");
        let show = |(first, again): (u64, u64)| if iter { format!("{first}") } else { format!("{first}, then {again}") };
        println!("{name}: 0.87.0: {} / patched: {}", show(a), show(p));
        ok &= a.0 < 200 && a.1 < 200 && p == (200, 200);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    std::process::exit(if ok { 0 } else { 1 });
}
