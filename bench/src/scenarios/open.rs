//! Open + first miss: the big index cold, the sparse 2^31-object index, and the hidden open modes.

use super::*;

/// Open + first miss on a sparse index claiming `objects` objects, in a child process (this binary's hidden
/// `--open-first-miss` mode) killed after 5 s; the child reports its time and its peak resident memory.
pub(super) fn sparse_open(dir: &Path, objects: u64, runs: usize) -> Result<Vec<Row>, String> {
    let sparse = fixture::sparse_index(dir, objects)?;
    let exe = crate::self_exe()?;
    let name = if objects == 1 << 31 {
        "2^31".to_owned()
    } else {
        format!("{objects}")
    };
    let (mut ns, mut rss) = (Vec::new(), Vec::new());
    let mut killed = false;
    for _ in 0..runs.max(1) {
        let Some((t, kib)) = sparse_child(&exe, &sparse)? else {
            killed = true;
            break;
        };
        ns.push(t);
        rss.push(kib);
    }
    let _ = std::fs::remove_dir_all(dir.join("sparse"));
    eprintln!("bench: open-first-miss-sparse done");
    let scenario = format!("open-first-miss-sparse-{name}-index");
    if killed {
        return Ok(vec![
            Row {
                runs: ns.len(),
                note: "Store::open + first miss did not finish within 5 s: killed".into(),
                ..Row::new(&scenario, "odb-index loose=none")
            }
            .with("killed", Val::Bool(true))
            .with("seconds", Val::Num(5.0)),
        ]);
    }
    let (min, med) = min_median(&ns);
    let (_, rss_med) = min_median(&rss);
    Ok(vec![Row {
        ns_min: Some(min),
        ns_median: Some(med),
        runs: ns.len(),
        lookups: 1,
        note: format!(
            "child process: Store::open + first lookup (a miss) {:.3} ms median, peak RSS {:.1} MB (the process's, whole)",
            med / 1e6,
            rss_med / 1024.0
        ),
        ..Row::new(&scenario, "odb-index loose=none")
    }
    .with("killed", Val::Bool(false))
    .with("peak_rss_mb", Val::Num(rss_med / 1024.0))])
}

/// One child process of [`sparse_open`]: its time (ns) and peak RSS (KiB), `None` if killed after 5 s.
fn sparse_child(exe: &Path, sparse: &Path) -> Result<Option<(f64, f64)>, String> {
    let mut child = std::process::Command::new(exe)
        .arg("--open-first-miss")
        .arg(sparse)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let t = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(st);
        }
        if t.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let Some(status) = status else {
        return Ok(None);
    };
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        use std::io::Read as _;
        let _ = o.read_to_string(&mut out);
    }
    let v: Vec<f64> = out
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if !status.success() || v.len() != 2 {
        return Err(format!(
            "--open-first-miss on the sparse index: {status}, {out:?}"
        ));
    }
    Ok(Some((v[0], v[1])))
}

/// The hidden `--open-first-miss OBJECTS` mode: open a store, look up one absent id, print the nanoseconds it
/// took and the process's peak resident set size in KiB (`VmHWM`, Linux). With `midx_checksum` (`--midx-checksum`)
/// the store is opened with `Options::midx_checksum(true)`, so a multi-pack-index is hashed whole when it loads.
pub fn open_first_miss(objects: &Path, midx_checksum: bool) -> Result<(), String> {
    let id = absent(1, 1).oids[0];
    let t = Instant::now();
    let options = odb_options(Kind::OdbNone).midx_checksum(midx_checksum);
    let store = Store::open(objects, options).map_err(|e| e.to_string())?;
    let found = store.handle().contains(&id).map_err(|e| e.to_string())?;
    let dt = t.elapsed();
    if found {
        return Err("an absent id was found".into());
    }
    // The peak RSS of this process image: `VmHWM` (reset by execve). `getrusage`'s `ru_maxrss` is preserved
    // across execve on Linux, so in a child of the bench it would report the parent's peak.
    let hwm_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .ok_or("no VmHWM in /proc/self/status")?;
    println!("{} {}", dt.as_nanos(), hwm_kib);
    Ok(())
}

/// The hidden `--store-filter-build OBJECTS` mode: open a store whose miss filter is built at the first miss
/// (`MissFilterMode::Eager`), miss a few times, print the filter's build time in nanoseconds (the store's own build:
/// every id of every loaded `.idx` inserted, each fan-out bucket's order checked on the way) and its ids.
pub fn store_filter_build(objects: &Path) -> Result<(), String> {
    let options = odb_options(Kind::OdbNone).miss_filter(odb_index::MissFilterMode::Eager);
    let store = Store::open(objects, options).map_err(|e| e.to_string())?;
    let mut h = store.handle();
    // The first miss loads the indices; a miss in the settled map builds the filter.
    for id in absent(4, 1).oids {
        if h.contains(&id).map_err(|e| e.to_string())? {
            return Err("an absent id was found".into());
        }
    }
    let f = store.miss_filter().ok_or("no miss filter was built")?;
    println!("{} {}", f.build_time.as_nanos(), f.ids);
    Ok(())
}

/// The hidden `--open-first-miss-loop N [--arm A] OBJECTS` mode. With an arm: N rounds of the
/// `cold-load-1M-index` row's body (open a store, miss once, stores dropped 32 at a time, after the clock) in this process, page
/// cache warm; prints the median and minimum time and the minor page faults per round (`getrusage`). For
/// callgrind (`--toggle-collect='*open_first_miss_body*'`) and `strace -c -f` (divide by N). Without: the
/// `cold-load-*` rows themselves, N runs, printed as the bench prints them.
pub fn open_first_miss_loop(kind: Option<Kind>, objects: &Path, n: usize) -> Result<(), String> {
    let id = absent(1, 1).oids[0];
    let Some(kind) = kind else {
        for r in cold_load(objects, "open-first-miss-loop", &absent(1, 1), n)? {
            eprintln!(
                "{} {}: {:.1} us median, {:.1} us min ({} runs)",
                r.scenario,
                r.arm,
                r.ns_median.unwrap_or(f64::NAN) / 1e3,
                r.ns_min.unwrap_or(f64::NAN) / 1e3,
                r.runs
            );
        }
        return Ok(());
    };
    let mut ns = Vec::with_capacity(n);
    let mut faults = 0;
    // Stores are dropped 32 at a time, outside the clock (as the row keeps its inotify stores open).
    let mut kept = Vec::new();
    for _ in 0..n {
        if kept.len() == 32 {
            kept.clear();
        }
        let before = minor_faults();
        let t = Instant::now();
        let (store, found) = open_first_miss_body(kind, objects, &id)?;
        ns.push(t.elapsed().as_nanos() as f64);
        faults += minor_faults() - before;
        kept.push(store);
        if found {
            return Err("an absent id was found".into());
        }
    }
    let (min, med) = min_median(&ns);
    eprintln!(
        "{n} rounds of open + first miss with {}: {:.1} us median, {:.1} us min, {:.1} minor faults per round",
        kind.name(),
        med / 1e3,
        min / 1e3,
        faults as f64 / n.max(1) as f64
    );
    Ok(())
}

/// One open + first miss; the store is returned, to be dropped after the clock as in the bench row.
#[inline(never)]
pub(super) fn open_first_miss_body(
    kind: Kind,
    objects: &Path,
    id: &ObjectId,
) -> Result<(std::sync::Arc<Store>, bool), String> {
    let store = Store::open(objects, odb_options(kind)).map_err(|e| e.to_string())?;
    let found = store.handle().contains(id).map_err(|e| e.to_string())?;
    Ok((store, found))
}

/// Minor page faults of this process so far (`getrusage(RUSAGE_SELF)`).
pub(super) fn minor_faults() -> i64 {
    // SAFETY: getrusage writes a `rusage` into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_SELF is always accepted.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return 0;
    }
    ru.ru_minflt as i64
}

/// Open a store on the big index and do the first lookup (a miss, so the index must be loaded).
///
/// Each arm's runs are taken one after the other (not interleaved with the other arms' runs), and a store with
/// an inotify descriptor (the default arm) is dropped only after its arm's last run: what a run measures is
/// then its own open and miss, not what the run before it left behind. Interleaved, the `load=read` arm's
/// 28 MB copy emptied the caches before each `loose=none` run, and closing an inotify descriptor waits for an
/// SRCU grace period (`fsnotify_destroy_group`) and queues more kernel work (the mark connectors' reaper) that
/// ran inside the next run's window: 2-3x the same code's time measured alone (docs/BENCHMARKS.md, "Open +
/// first miss").
pub(super) fn cold_load(
    big: &Path,
    name: &str,
    ids: &Ids,
    runs: usize,
) -> Result<Vec<Row>, String> {
    let arms = [
        odb_options(Kind::OdbNone),
        odb_options(Kind::OdbNone).load(LoadMode::Read),
        odb_options(Kind::OdbDefault),
    ];
    let mut times: [Vec<f64>; 3] = Default::default();
    // Stores kept open until the end, as a program keeps its store: dropping one unmaps its index, work that no
    // open + first miss of a program includes.
    let mut kept = Vec::new();
    // The mapping arms interleaved round-robin, as every other row: a run of each in turn, so they share the
    // load. The `Read` arm (28 MB read and freed a run, milliseconds) after them: run between them, it left the
    // next arm's run 60 us slower (caches and the freed memory's unmapping).
    let order = (0..runs)
        .flat_map(|_| [0, 2])
        .chain(std::iter::repeat_n(1, runs));
    for a in order {
        {
            let (options, out) = (&arms[a], &mut times[a]);
            let t = Instant::now();
            let store = Store::open(big, options.clone()).map_err(|e| e.to_string())?;
            let mut h = store.handle();
            let found = h.contains(&ids.oids[0]).map_err(|e| e.to_string())?;
            out.push(t.elapsed().as_nanos() as f64);
            if found || store.metrics().index_loads != 1 {
                return Err(format!(
                    "cold load: found {found}, {} index loads",
                    store.metrics().index_loads
                ));
            }
            drop(h);
            if options.load == LoadMode::Read {
                // 28 MB a run read into memory: not kept.
                drop(store);
            } else {
                kept.push(store);
            }
        }
    }
    drop(kept);
    let [v, v_read, v_default] = times;
    eprintln!("bench: cold-load-{name}-index done");
    let row = |arm: &str, v: &[f64]| {
        let (min, med) = min_median(v);
        Row {
            ns_min: Some(min),
            ns_median: Some(med),
            runs,
            lookups: 1,
            note: format!(
                "Store::open + first lookup (a miss): {:.2} ms median; page cache warm",
                med / 1e6
            ),
            ..Row::new(&format!("cold-load-{name}-index"), arm)
        }
    };
    Ok(vec![
        row("odb-index loose=none", &v),
        row("odb-index loose=none load=read", &v_read),
        row(Kind::OdbDefault.name(), &v_default),
    ])
}
