//! N threads look up the one object of a one-pack store opened fresh each round; counts "missing" answers.
//! Usage: gix-odb-087-false-miss [--refresh default] [--threads N] [--seconds S]   (default: Never, 8, 60)
use gix_odb::pack::Find as _;
use std::{process::Command, sync::Barrier, time::{Duration, Instant}};

fn git(dir: &std::path::Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write as _;
    let mut c = Command::new("git").env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("-C").arg(dir).args(args).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped())
        .spawn().expect("git");
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let never = opt("--refresh").as_deref() != Some("default");
    let threads: usize = opt("--threads").map_or(8, |s| s.parse().unwrap());
    let seconds: u64 = opt("--seconds").map_or(60, |s| s.parse().unwrap());
    let dir = std::env::temp_dir().join(format!("gix-odb-087-false-miss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "--bare"], "");
    // With one blob, fast-import writes a loose object unless unpackLimit is 0: the object must be in a pack.
    git(&dir, &["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"], "blob\ndata 6\nhello\n\n");
    let hex = git(&dir, &["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], "");
    let id = gix_hash::ObjectId::from_hex(hex.trim().as_bytes()).unwrap();
    assert!(!dir.join("objects").join(&hex[..2]).exists(), "the object must be packed, not loose");
    let (deadline, mut lookups, mut misses) = (Instant::now() + Duration::from_secs(seconds), 0u64, 0u64);
    while Instant::now() < deadline {
        let mut store = gix_odb::at(dir.join("objects"), gix_hash::Kind::Sha1).unwrap().into_arc().unwrap();
        if never {
            store.refresh_never();
        }
        store.store_ref().structure().unwrap(); // lists the pack directory, loads no index
        let barrier = Barrier::new(threads);
        misses += std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads).map(|_| {
                let (h, barrier) = (store.clone(), &barrier);
                s.spawn(move || { barrier.wait(); !h.contains(&id) })
            }).collect();
            workers.into_iter().map(|w| w.join().unwrap() as u64).sum::<u64>()
        });
        lookups += threads as u64;
    }
    let load = String::from_utf8(Command::new("uptime").output().unwrap().stdout).unwrap();
    println!("refresh {} threads {threads} {seconds} s: {misses} missing in {lookups} lookups ({:.1} per million); uptime:{}",
        if never { "Never" } else { "default" }, misses as f64 * 1e6 / lookups as f64,
        load.trim().split("load").nth(1).map_or(String::new(), |l| format!(" load{l}")));
    let _ = std::fs::remove_dir_all(&dir);
}
