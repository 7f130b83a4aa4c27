//! Scenarios 3 and 6: two threads missing at once, and waiters for an in-flight load on one pinned core.

use super::*;

/// Aggregate throughput of two threads missing at once vs one thread, per arm kind.
pub(super) fn two_threads(
    objects: &Path,
    kinds: &[Kind],
    ids: &Ids,
    n: usize,
    runs: usize,
) -> Result<Vec<Row>, String> {
    // Two warm handles per kind, reused by every run.
    let mut pairs = Vec::new();
    for &k in kinds {
        let mut a = Arm::open(k, objects)?;
        let mut b = a.another();
        a.run(ids, ids.len());
        b.run(ids, ids.len());
        pairs.push((k, a, b));
    }
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    let mut dual: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    // Each thread times itself; the aggregate wall time is from the first start to the last end.
    let timed = |a: &mut Arm| {
        let t = Instant::now();
        black_box(a.run(ids, n));
        (t, Instant::now())
    };
    for run in 0..runs {
        for (i, (_, a, b)) in pairs.iter_mut().enumerate() {
            let (s, e) = std::thread::scope(|sc| sc.spawn(|| timed(a)).join())
                .map_err(|_| "bench thread panicked".to_owned())?;
            single[i].push((e - s).as_nanos() as f64 / n as f64);
            let (r1, r2) = std::thread::scope(|sc| {
                let h1 = sc.spawn(|| timed(a));
                let h2 = sc.spawn(|| timed(b));
                (h1.join(), h2.join())
            });
            let ((s1, e1), (s2, e2)) = (
                r1.map_err(|_| "bench thread panicked".to_owned())?,
                r2.map_err(|_| "bench thread panicked".to_owned())?,
            );
            let wall = e1.max(e2) - s1.min(s2);
            dual[i].push(wall.as_nanos() as f64 / (2 * n) as f64);
        }
        eprintln!(
            "bench: miss-2threads: run {}/{runs} of {} arms done",
            run + 1,
            kinds.len()
        );
    }
    let mut rows = Vec::new();
    for (i, &k) in kinds.iter().enumerate() {
        let (smin, smed) = min_median(&single[i]);
        let (dmin, dmed) = min_median(&dual[i]);
        let ratio = smed / dmed;
        let ratio_min = smin / dmin;
        rows.push(Row {
            ns_min: Some(dmin),
            ns_median: Some(dmed),
            runs,
            lookups: 2 * n,
            note: format!(
                "aggregate of 2 threads; 1 thread {smed:.1} ns (min {smin:.1}); throughput {ratio:.2}x (of mins {ratio_min:.2}x)"
            ),
            ..Row::new("miss-2threads", k.name())
        }
        .with("ns_per_lookup_1thread_median", Val::Num(smed))
        .with("ns_per_lookup_1thread_min", Val::Num(smin))
        .with("ratio_vs_1thread", Val::Num(ratio))
        .with("ratio_vs_1thread_of_mins", Val::Num(ratio_min)));
    }
    Ok(rows)
}

/// CPU time of the calling thread from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (the scheduler's exact
/// runtime).
pub(super) fn thread_clock() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CPU time (user + system) of the calling thread from `getrusage(RUSAGE_THREAD)` (libc: rustix has no
/// `getrusage`).
pub(super) fn thread_cpu() -> Duration {
    // SAFETY: getrusage writes a `rusage` into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_THREAD is Linux's per-thread usage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Pin the calling thread (and the threads it spawns afterwards) to the first CPU it may run on.
pub(super) fn pin_to_one_cpu() -> Result<usize, String> {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    let set = sched_getaffinity(None).map_err(|e| format!("sched_getaffinity: {e}"))?;
    let cpu = (0..CpuSet::MAX_CPU)
        .find(|&c| set.is_set(c))
        .ok_or("no CPU in the affinity mask")?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one).map_err(|e| format!("sched_setaffinity: {e}"))?;
    Ok(cpu)
}

/// One thread loads the big index cold (read into memory, so the load takes milliseconds) while three others
/// look up an absent id and must wait for it; all on one pinned core. CPU time per thread from
/// clock_gettime(CLOCK_THREAD_CPUTIME_ID), and from getrusage(RUSAGE_THREAD) beside it.
pub(super) fn waiters(big: &Path, absent_id: ObjectId, runs: usize) -> Result<Vec<Row>, String> {
    let big = big.to_path_buf();
    std::thread::spawn(move || -> Result<Vec<Row>, String> {
        let cpu = pin_to_one_cpu()?;
        let mut loader_cpu = Vec::new();
        let mut waiter_cpu = Vec::new();
        let mut waiter_wall = Vec::new();
        let mut loader_wall = Vec::new();
        let mut waited = 0usize;
        let mut loader_ru = Vec::new();
        let mut waiter_ru = Vec::new();
        for _ in 0..runs {
            let ([lc, lru, lw, wc, wru, ww], w) = waiters_run(&big, absent_id)?;
            waited += w;
            loader_ru.push(lru);
            waiter_ru.push(wru);
            loader_cpu.push(lc);
            loader_wall.push(lw);
            waiter_cpu.push(wc);
            waiter_wall.push(ww);
        }
        let (_, lc) = min_median(&loader_cpu);
        let (wcmin, wc) = min_median(&waiter_cpu);
        let (_, lw) = min_median(&loader_wall);
        let (_, ww) = min_median(&waiter_wall);
        let (_, lru) = min_median(&loader_ru);
        let (_, wru) = min_median(&waiter_ru);
        eprintln!("bench: waiters-1core done");
        Ok(vec![Row {
            runs,
            note: format!(
                "CPU {cpu} only; 3 waiters used {:.1} us CPU in all (min {:.1}; getrusage {:.0} us) while the loader used {:.1} us (getrusage {:.0} us); {waited} of {} waiter lookups waited (up to {:.2} ms) for the load ({:.2} ms wall)",
                wc / 1e3,
                wcmin / 1e3,
                wru / 1e3,
                lc / 1e3,
                lru / 1e3,
                3 * runs,
                ww / 1e6,
                lw / 1e6,
            ),
            ..Row::new("waiters-1core", "odb-index loose=none")
        }
        .with("waiters_cpu_ns_median", Val::Num(wc))
        .with("loader_cpu_ns_median", Val::Num(lc))
        .with("waiters_vs_loader_cpu", Val::Num(wc / lc))
        .with("waiters_rusage_ns_median", Val::Num(wru))
        .with("loader_rusage_ns_median", Val::Num(lru))
        .with("waiter_wall_ns_median", Val::Num(ww))
        .with("loader_wall_ns_median", Val::Num(lw))
        .with("waiter_lookups_that_waited", Val::Num(waited as f64))
        .with("waiter_lookups", Val::Num((3 * runs) as f64))])
    })
    .join()
    .map_err(|_| "waiters scenario panicked".to_owned())?
}

/// One run of [`waiters`] (on the pinned thread): a fresh store, three waiters and the loader; in ns, the
/// loader's CPU (clock, rusage) and wall time, the waiters' CPU in all (clock, rusage) and the slowest waiter's
/// wall time; and how many waiters waited.
fn waiters_run(big: &Path, absent_id: ObjectId) -> Result<([f64; 6], usize), String> {
    let mut waited = 0usize;
    let store = Store::open(big, odb_options(Kind::OdbNone).load(LoadMode::Read))
        .map_err(|e| e.to_string())?;
    // Waiters start their lookup once the loader has begun loading (the store counts an index
    // load when it starts); polling with sleeps happens before their CPU clocks are read.
    let one = |waiter: bool| {
        let store = store.clone();
        move || {
            let mut h = store.handle();
            if !waiter {
                // The loader runs at nice 19, so the scheduler lets a waking waiter preempt it at once
                // and the waiters arrive while the load is in flight.
                // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value.
                let tid = rustix::thread::gettid();
                let _ = rustix::process::setpriority_process(Some(tid), 19);
            }
            while waiter && store.metrics().index_loads == 0 {
                std::thread::sleep(Duration::from_micros(50));
            }
            let (c0, r0) = (thread_clock(), thread_cpu());
            let t = Instant::now();
            let r = h.contains(&absent_id);
            (thread_clock() - c0, thread_cpu() - r0, t.elapsed(), r.ok())
        }
    };
    let ws: Vec<_> = (0..3).map(|_| std::thread::spawn(one(true))).collect();
    let loader = std::thread::spawn(one(false));
    let (lc, lru, lw, lr) = loader.join().map_err(|_| "loader panicked")?;
    let mut wc = Duration::ZERO;
    let mut wru = Duration::ZERO;
    let mut ww = Duration::ZERO;
    for w in ws {
        let (c, ru, wall, r) = w.join().map_err(|_| "waiter panicked")?;
        if r != Some(false) {
            return Err(format!("waiter: lookup of an absent id gave {r:?}"));
        }
        wc += c;
        wru += ru;
        ww = ww.max(wall);
        // A waiter that arrived after the load finished did a plain miss (a few microseconds at most,
        // the first lookup of a handle included); one that waited took at least 50 us.
        if wall >= Duration::from_micros(50) {
            waited += 1;
        }
    }
    if lr != Some(false) || store.metrics().index_loads != 1 {
        return Err(format!(
            "loader: {lr:?}, {} index loads",
            store.metrics().index_loads
        ));
    }
    let ns = |d: Duration| d.as_nanos() as f64;
    Ok(([ns(lc), ns(lru), ns(lw), ns(wc), ns(wru), ns(ww)], waited))
}
