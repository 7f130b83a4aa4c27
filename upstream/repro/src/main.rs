//! N threads look up the one object of a one-pack store opened fresh each round; counts "missing" answers.
//! Usage: gix-odb-087-false-miss [--refresh default] [--threads N] [--seconds S]   (default: Never, 8, 60)
use gix_odb::pack::Find as _;
use std::process::{Command, Stdio};
use std::sync::{atomic::AtomicU64, atomic::Ordering::Relaxed, Barrier};
use std::time::{Duration, Instant};
fn git(dir: &std::path::Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write as _;
    let mut c = Command::new("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").arg("-C").arg(dir).args(args);
    let mut c = c.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("git");
    c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    String::from_utf8(out.stdout).ok().filter(|_| out.status.success()).expect("git failed")
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
    let (deadline, mut lookups, misses) = (Instant::now() + Duration::from_secs(seconds), 0u64, AtomicU64::new(0));
    while Instant::now() < deadline {
        let mut store = gix_odb::at(dir.join("objects"), gix_hash::Kind::Sha1).unwrap().into_arc().unwrap();
        if never {
            store.refresh_never();
        }
        store.store_ref().structure().unwrap(); // lists the pack directory, loads no index
        let barrier = Barrier::new(threads);
        std::thread::scope(|s| {
            for h in (0..threads).map(|_| store.clone()) {
                let (barrier, misses) = (&barrier, &misses);
                s.spawn(move || {
                    barrier.wait();
                    if !h.contains(&id) {
                        misses.fetch_add(1, Relaxed);
                    }
                });
            }
        });
        lookups += threads as u64;
    }
    let (misses, mode) = (misses.load(Relaxed), if never { "Never" } else { "default" });
    let per = misses as f64 * 1e6 / lookups as f64;
    println!(
        "refresh {mode}, {threads} threads, {seconds} s: {misses} missing in {lookups} lookups ({per:.1}/million)"
    );
    Command::new("uptime").status().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
