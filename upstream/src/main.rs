//! gix-odb 0.87.0, the same with the pull requests of `docs/upstream/` applied (`upstream/series-087.sh`;
//! `gix-odb-patched`, built by `upstream/build-patched.sh`), and odb-index, side by side. See `docs/UPSTREAM.md`.
//!
//! ```text
//! gix-odb-compare race [--arm ARM] [--threads N] [--seconds S]
//!     a fresh store per round, its pack directory read but no index loaded; N threads (handles made before the
//!     round) look up one object of the fixture's only pack at once; counts the lookups that say "missing"
//!     (false misses)
//! gix-odb-compare bench
//!     misses, hits, two threads, and waiters' CPU (one load held in flight by a delayed open of the .idx)
//! gix-odb-compare misses --arm ARM --n N
//!     N misses after warm-up, nothing else (run under `valgrind --tool=callgrind --collect-bus=yes`)
//! ARM: gix087 | patched | odb (default: all three, in turn)
//! ```
//!
//! The fixture is made with `git fast-import` in a temporary directory: one pack of blobs, nothing loose.

use std::ffi::CStr;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

type Id = [u8; 20];

/// One object database implementation under test.
trait Arm: Sized {
    const NAME: &'static str;
    type H: Send + 'static;
    fn open(objects: &Path) -> Self;
    /// Read the pack directory without loading any index (gix-odb does that on first use otherwise).
    fn init(&self);
    /// A handle for one thread.
    fn handle(&self) -> Self::H;
    fn contains(h: &mut Self::H, id: &Id) -> bool;
}

/// gix-odb as the benchmark in the root package uses it: `refresh_never()`, no pack cache.
macro_rules! gix_arm {
    ($ty:ident, $krate:ident, $name:expr) => {
        struct $ty($krate::HandleArc);
        impl Arm for $ty {
            const NAME: &'static str = $name;
            type H = $krate::HandleArc;
            fn open(objects: &Path) -> Self {
                let mut h = $krate::at(objects, gix_hash::Kind::Sha1)
                    .and_then(|h| h.into_arc())
                    .unwrap_or_else(|e| panic!("{}: {e}", objects.display()));
                h.refresh_never();
                h.set_pack_cache(|| Box::new($krate::pack::cache::Never));
                $ty(h)
            }
            fn init(&self) {
                // `Store::structure` initialises the slot map (consolidate_with_disk_state(needs_init: true,
                // load_new_index: false)) and loads no index.
                self.0
                    .store_ref()
                    .structure()
                    .unwrap_or_else(|e| panic!("{}: {e}", Self::NAME));
            }
            fn handle(&self) -> Self::H {
                self.0.clone()
            }
            fn contains(h: &mut Self::H, id: &Id) -> bool {
                use $krate::pack::Find as _;
                h.contains(gix_hash::oid::from_bytes_unchecked(id))
            }
        }
    };
}

gix_arm!(Gix087, gix_odb, "gix-odb 0.87.0");
gix_arm!(Patched, gix_odb_patched, "gix-odb 0.87.0 patched");

struct Odb(Arc<odb_index::Store>);

impl Arm for Odb {
    const NAME: &'static str = "odb-index";
    type H = odb_index::Handle;
    fn open(objects: &Path) -> Self {
        let options = odb_index::Options::default()
            .refresh(odb_index::RefreshMode::Never)
            .hash_kind(odb_index::HashKind::Sha1);
        Odb(odb_index::Store::open(objects, options).unwrap_or_else(|e| panic!("{e}")))
    }
    fn init(&self) {
        // `Store::open` has listed the pack directory already.
    }
    fn handle(&self) -> Self::H {
        self.0.handle()
    }
    fn contains(h: &mut Self::H, id: &Id) -> bool {
        let id = odb_index::ObjectId::from_bytes(id).expect("20 bytes");
        h.contains(&id).unwrap_or_else(|e| panic!("{e}"))
    }
}

// ---------------------------------------------------------------------------------------------------------------
// A delayed open of `.idx` files, to hold one index load in flight for a known time (waiters' CPU). The three arms
// open index files with `std::fs::File::open`, which calls the C library's `open64`; this definition takes its
// place in this executable (it is the only open64 the static linker sees) and forwards to the `openat` syscall.

static DELAY_IDX_OPEN_MS: AtomicU64 = AtomicU64::new(0);
static DELAYED_OPENS: AtomicUsize = AtomicUsize::new(0);

/// # Safety
/// Called as the C library's `open64(path, flags, mode)`: `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open64(
    path: *const libc::c_char,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> libc::c_int {
    let ms = DELAY_IDX_OPEN_MS.load(Ordering::Relaxed);
    // SAFETY: the caller passes a NUL-terminated path, as open64's contract requires.
    if ms != 0
        && unsafe { CStr::from_ptr(path) }
            .to_bytes()
            .ends_with(b".idx")
    {
        DELAYED_OPENS.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(ms));
    }
    // SAFETY: openat with the caller's arguments; the result (fd or -1 with errno set) is what open64 returns.
    unsafe { libc::syscall(libc::SYS_openat, libc::AT_FDCWD, path, flags, mode) as libc::c_int }
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

// ---------------------------------------------------------------------------------------------------------------
// Fixture.

struct Fixture {
    dir: PathBuf,
    objects: PathBuf,
    hits: Vec<Id>,
    misses: Vec<Id>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("-C")
        .arg(dir)
        .args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"]);
    c
}

fn hex_to_id(hex: &str) -> Id {
    let mut id = [0u8; 20];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex object id");
    }
    id
}

/// A bare repository holding one pack of `n` blobs.
fn fixture(n: usize) -> Fixture {
    let dir = std::env::temp_dir().join(format!("gix-odb-compare-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ok = git(&dir)
        .args(["init", "-q", "--bare"])
        .status()
        .expect("git");
    assert!(ok.success(), "git init");
    let mut child = git(&dir)
        .args(["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    {
        let mut stdin = std::io::BufWriter::new(child.stdin.take().expect("stdin"));
        for i in 0..n {
            let data = format!("blob number {i}\n");
            write!(stdin, "blob\ndata {}\n{data}\n", data.len()).expect("write to fast-import");
        }
    }
    assert!(
        child.wait().expect("fast-import").success(),
        "git fast-import"
    );
    let out = git(&dir)
        .args([
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ])
        .output()
        .expect("git cat-file");
    let hits: Vec<Id> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(hex_to_id)
        .collect();
    assert_eq!(hits.len(), n, "one pack with every blob");
    let packs = std::fs::read_dir(dir.join("objects/pack"))
        .expect("pack dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "idx"))
        })
        .count();
    assert_eq!(packs, 1, "fast-import wrote one pack");
    // Ids that are not there: a fixed xorshift sequence (a collision with 20 random bytes is not a concern).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let misses = (0..n)
        .map(|_| {
            let mut id = [0u8; 20];
            for chunk in id.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
            }
            id
        })
        .collect();
    let objects = dir.join("objects");
    Fixture {
        dir,
        objects,
        hits,
        misses,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// race

fn race<A: Arm>(fx: &Fixture, threads: usize, seconds: f64) {
    let want = fx.hits[fx.hits.len() / 2];
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let (mut rounds, mut lookups, mut false_misses) = (0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        let store = A::open(&fx.objects);
        store.init();
        let handles: Vec<A::H> = (0..threads).map(|_| store.handle()).collect();
        let barrier = Barrier::new(threads);
        let missed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for mut h in handles {
                let (barrier, missed) = (&barrier, &missed);
                s.spawn(move || {
                    barrier.wait();
                    if !A::contains(&mut h, &want) {
                        missed.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        rounds += 1;
        lookups += threads as u64;
        false_misses += missed.load(Ordering::Relaxed) as u64;
    }
    println!(
        "race {:<24} threads {threads:>2}  rounds {rounds:>7}  lookups {lookups:>8}  false misses {false_misses:>5}  per million lookups {:>8.1}",
        A::NAME,
        false_misses as f64 * 1e6 / lookups as f64
    );
}

// ---------------------------------------------------------------------------------------------------------------
// bench

/// Nanoseconds per lookup of `n` lookups cycling through `ids` (after all indices are loaded), and how many hit.
fn timed<A: Arm>(h: &mut A::H, ids: &[Id], n: usize) -> (f64, usize) {
    let start = Instant::now();
    let mut found = 0;
    for i in 0..n {
        if A::contains(h, black_box(&ids[i % ids.len()])) {
            found += 1;
        }
    }
    (start.elapsed().as_nanos() as f64 / n as f64, found)
}

fn bench<A: Arm>(fx: &Fixture) {
    const N: usize = 200_000;
    const RUNS: usize = 5;
    let store = A::open(&fx.objects);
    let mut h = store.handle();
    assert!(A::contains(&mut h, &fx.hits[0]), "warm-up loads the pack");
    let best = |h: &mut A::H, ids: &[Id], expect: usize| {
        (0..RUNS)
            .map(|_| {
                let (ns, found) = timed::<A>(h, ids, N);
                assert_eq!(found, expect, "{}: hits", A::NAME);
                ns
            })
            .fold(f64::INFINITY, f64::min)
    };
    let miss = best(&mut h, &fx.misses, 0);
    let hit = best(&mut h, &fx.hits, N);
    // Two threads, each its own handle, misses at the same time.
    let two = (0..RUNS)
        .map(|_| {
            let hs: Vec<A::H> = (0..2).map(|_| store.handle()).collect();
            let barrier = Barrier::new(2);
            let per_thread: Vec<f64> = std::thread::scope(|s| {
                let joins: Vec<_> = hs
                    .into_iter()
                    .map(|mut h| {
                        let (barrier, misses) = (&barrier, &fx.misses);
                        s.spawn(move || {
                            barrier.wait();
                            timed::<A>(&mut h, misses, N).0
                        })
                    })
                    .collect();
                joins
                    .into_iter()
                    .map(|j| j.join().expect("thread"))
                    .collect()
            });
            per_thread.into_iter().fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min);
    let (waiter_cpu, waited) = waiters::<A>(fx, 3, 200);
    println!(
        "bench {:<24} miss {miss:>7.1} ns  hit {hit:>6.1} ns  two threads (miss) {two:>7.1} ns  waiters' CPU {:>6.2} ms per waiter for a {:.0} ms wait",
        A::NAME,
        waiter_cpu.as_secs_f64() * 1e3,
        waited.as_secs_f64() * 1e3,
    );
}

/// One thread loads the only index, its open delayed by `delay_ms`; `waiters` threads start 20 ms later, look up
/// the same object and must wait for that load. Returns the mean CPU time of a waiter and the mean wall time it
/// waited.
fn waiters<A: Arm>(fx: &Fixture, waiters: usize, delay_ms: u64) -> (Duration, Duration) {
    let want = fx.hits[0];
    let store = A::open(&fx.objects);
    let mut handles: Vec<A::H> = (0..=waiters).map(|_| store.handle()).collect();
    let mut loader = handles.remove(0);
    DELAYED_OPENS.store(0, Ordering::Relaxed);
    DELAY_IDX_OPEN_MS.store(delay_ms, Ordering::Relaxed);
    let results: Vec<(Duration, Duration)> = std::thread::scope(|s| {
        let l = s.spawn(move || assert!(A::contains(&mut loader, &want), "loader finds it"));
        std::thread::sleep(Duration::from_millis(20));
        let joins: Vec<_> = handles
            .into_iter()
            .map(|mut h| {
                s.spawn(move || {
                    let (cpu, wall) = (thread_cpu(), Instant::now());
                    assert!(A::contains(&mut h, &want), "waiter finds it");
                    (thread_cpu() - cpu, wall.elapsed())
                })
            })
            .collect();
        let r = joins
            .into_iter()
            .map(|j| j.join().expect("waiter"))
            .collect();
        l.join().expect("loader");
        r
    });
    DELAY_IDX_OPEN_MS.store(0, Ordering::Relaxed);
    assert_eq!(
        DELAYED_OPENS.load(Ordering::Relaxed),
        1,
        "{}: exactly one .idx open, delayed (is open64 interposed?)",
        A::NAME
    );
    let n = results.len() as u32;
    let cpu = results.iter().map(|r| r.0).sum::<Duration>() / n;
    let wall = results.iter().map(|r| r.1).sum::<Duration>() / n;
    (cpu, wall)
}

// ---------------------------------------------------------------------------------------------------------------
// misses (for callgrind)

fn misses<A: Arm>(fx: &Fixture, n: usize) {
    let store = A::open(&fx.objects);
    let mut h = store.handle();
    assert!(A::contains(&mut h, &fx.hits[0]), "warm-up loads the pack");
    let (_, found) = timed::<A>(&mut h, &fx.misses, n);
    assert_eq!(found, 0);
    println!("misses {:<24} {n}", A::NAME);
}

// ---------------------------------------------------------------------------------------------------------------

fn for_arms(arm: Option<&str>, f: &mut dyn FnMut(&str)) {
    match arm {
        Some(a) => f(a),
        None => ["gix087", "patched", "odb"].into_iter().for_each(f),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cmd = args.next().unwrap_or_else(|| usage());
    let (mut arm, mut threads, mut seconds, mut n) =
        (None::<String>, 8usize, 20.0f64, 100_000usize);
    while let Some(a) = args.next() {
        let v = args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--arm" => arm = Some(v),
            "--threads" => threads = v.parse().unwrap_or_else(|_| usage()),
            "--seconds" => seconds = v.parse().unwrap_or_else(|_| usage()),
            "--n" => n = v.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let fx = fixture(if cmd == "race" { 64 } else { 12_000 });
    for_arms(arm.as_deref(), &mut |a| match (cmd.as_str(), a) {
        ("race", "gix087") => race::<Gix087>(&fx, threads, seconds),
        ("race", "patched") => race::<Patched>(&fx, threads, seconds),
        ("race", "odb") => race::<Odb>(&fx, threads, seconds),
        ("bench", "gix087") => bench::<Gix087>(&fx),
        ("bench", "patched") => bench::<Patched>(&fx),
        ("bench", "odb") => bench::<Odb>(&fx),
        ("misses", "gix087") => misses::<Gix087>(&fx, n),
        ("misses", "patched") => misses::<Patched>(&fx, n),
        ("misses", "odb") => misses::<Odb>(&fx, n),
        _ => usage(),
    });
}

fn usage() -> ! {
    eprintln!(
        "usage: gix-odb-compare race|bench|misses [--arm gix087|patched|odb] [--threads N] [--seconds S] [--n N]"
    );
    std::process::exit(2)
}
