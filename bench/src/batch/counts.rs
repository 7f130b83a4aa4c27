//! The group's counts: system calls per miss in a batch (strace) and last-level cache misses per lookup
//! (cachegrind), with the hidden child modes they run.

use super::*;

/// System calls per miss of `locate_many` in batches of 4 096 absent ids under `Options::default()` (strace -f
/// -c of the hidden child, `k` and `2k` batches after the same warm-up, the difference divided by `k * 4096`).
pub(super) fn syscalls(objects: &Path, k: usize) -> Result<Vec<Row>, String> {
    let scenario = "batch-syscalls-per-miss";
    if !Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Ok(vec![Row {
            note: "strace is not installed: not measured".into(),
            ..Row::new(scenario, "-")
        }]);
    }
    let exe = crate::self_exe()?;
    let mut counts = Vec::new();
    for m in [k, 2 * k] {
        let out = std::env::temp_dir().join(format!(
            "odb-index-batch-strace-{}-{m}.txt",
            std::process::id()
        ));
        let st = Command::new("strace")
            .args(["-f", "-c", "-o"])
            .arg(&out)
            .arg(&exe)
            .args(["--batch-child", "syscalls", &m.to_string()])
            .arg(objects)
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("strace: {e}"))?;
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let _ = std::fs::remove_file(&out);
        if !st.success() {
            return Err("strace of --batch-child syscalls failed".into());
        }
        counts.push(text);
    }
    let (total, per) = crate::strace::per_unit(&counts[0], &counts[1], (k * BATCH) as f64, 0.0);
    let detail = per
        .iter()
        .map(|(s, v)| format!("{s} {v:.5}"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(vec![
        Row {
            runs: 1,
            lookups: k * BATCH,
            note: format!(
                "{total:.5} syscalls per miss (batches of 4096, Options::default()): {detail}"
            ),
            ..Row::new(scenario, "odb-index default locate_many")
        }
        .with("syscalls_per_miss", Val::Num(total)),
    ])
}

/// A figure of cachegrind's summary on stderr: lines look like `==123== I   refs:      1,234,567` and
/// `==123== LL misses:   12,345 (...)`.
pub(super) fn cachegrind_field(text: &str, key: &str) -> Option<f64> {
    text.lines()
        .map(|l| l.rsplit("==").next().unwrap_or(l).trim_start())
        .find(|l| {
            l.split(':')
                .next()
                .is_some_and(|k| k.split_whitespace().eq(key.split_whitespace()))
        })
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.replace(',', "").parse::<f64>().ok())
}

/// Last-level cache misses (and instructions) per lookup of `locate` and of `locate_many`, random hits and fresh
/// misses of the big index: cachegrind's simulated caches over the hidden child, `n` lookups minus none.
pub(super) fn cachegrind(big: &Path, name: &str, n: usize) -> Result<Vec<Row>, String> {
    if !Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Ok(vec![Row {
            note: "valgrind is not installed: not measured".into(),
            ..Row::new("batch-cachegrind", "-")
        }]);
    }
    let exe = crate::self_exe()?;
    let run = |what: &str, arm: &str, m: usize| -> Result<(f64, f64), String> {
        let o = Command::new("valgrind")
            // The last level simulated as this machine's second-level cache (2 MB per core): its third level
            // (260 MB, shared) holds every fixture, so cachegrind's default (the host's last level) counts none.
            .args([
                "--tool=cachegrind",
                "--cache-sim=yes",
                "--LL=2097152,16,64",
                "--cachegrind-out-file=/dev/null",
            ])
            .arg(&exe)
            .args([
                "--batch-child",
                &format!("cachegrind-{what}-{arm}"),
                &m.to_string(),
            ])
            .arg(big)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("valgrind: {e}"))?;
        let text = String::from_utf8_lossy(&o.stderr);
        match (
            cachegrind_field(&text, "I refs"),
            cachegrind_field(&text, "LL misses"),
        ) {
            (Some(i), Some(ll)) => Ok((i, ll)),
            _ => Err(format!(
                "valgrind --batch-child cachegrind-{what}-{arm}: no summary:\n{text}"
            )),
        }
    };
    let mut rows = Vec::new();
    for what in ["hit", "miss"] {
        for arm in ["locate", "many"] {
            let (i0, ll0) = run(what, arm, 0)?;
            let (i1, ll1) = run(what, arm, n)?;
            let (ins, ll) = ((i1 - i0) / n as f64, (ll1 - ll0) / n as f64);
            let arm_name = if arm == "locate" {
                "odb-index locate"
            } else {
                "odb-index locate_many 4096"
            };
            rows.push(
                Row {
                    runs: 1,
                    lookups: n,
                    note: format!(
                        "{ll:.2} misses of a 2 MB last level, {ins:.0} instructions per lookup (cachegrind)"
                    ),
                    ..Row::new(&format!("batch-cachegrind-{what}-{name}"), arm_name)
                }
                .with("ll_misses_per_lookup", Val::Num(ll))
                .with("instructions_per_lookup", Val::Num(ins)),
            );
            eprintln!(
                "bench: batch-cachegrind-{what}-{name} {arm}: {ll:.2} LL misses, {ins:.0} instructions"
            );
        }
    }
    Ok(rows)
}

/// `--batch-child syscalls K OBJECTS`: 3 + K batches of [`BATCH`] absent ids under `Options::default()`.
pub(super) fn child_syscalls(arg: &str, path: &Path) -> Result<(), String> {
    let k: usize = arg
        .parse()
        .map_err(|_| format!("--batch-child syscalls {arg}"))?;
    let store = Store::open(path, odb_options(Kind::OdbDefault)).map_err(|e| e.to_string())?;
    let mut h = store.handle();
    let ids = fresh(BATCH, 41);
    let mut out = Vec::with_capacity(BATCH);
    // Warm-up: past the deferral of change events (2 048 misses), every fan-out listing made.
    for _ in 0..3 + k {
        out.clear();
        h.locate_many(&ids, &mut out).map_err(|e| e.to_string())?;
        if out.iter().any(Option::is_some) {
            return Err("an absent id was found".into());
        }
    }
    Ok(())
}

/// `--batch-child cachegrind-{hit,miss}-{locate,many} N OBJECTS`: N lookups (hits or fresh misses), by `locate`
/// per id or `locate_many` in batches, after the same warm-up as a run with N = 0.
pub(super) fn child_cachegrind(w: &str, arg: &str, path: &Path) -> Result<(), String> {
    let n: usize = arg
        .parse()
        .map_err(|_| format!("--batch-child {w} {arg}"))?;
    let store = Store::open(path, odb_options(Kind::OdbNone)).map_err(|e| e.to_string())?;
    let hits = w.contains("-hit-");
    let ids = if hits {
        let mut ids = all_ids(path)?;
        ids.truncate(n.max(1));
        ids
    } else {
        fresh(n.max(1), 51)
    };
    let mut h = store.handle();
    let mut out = Vec::with_capacity(BATCH);
    // Warm-up (the same in the runs with and without lookups): indices loaded, the filter built.
    let warm = fresh(BATCH, 52);
    for _ in 0..64 {
        out.clear();
        h.locate_many(&warm, &mut out).map_err(|e| e.to_string())?;
        if store.miss_filter().is_some() {
            break;
        }
    }
    let ids = &ids[..n.min(ids.len())];
    if w.ends_with("-many") {
        for chunk in ids.chunks(BATCH) {
            out.clear();
            h.locate_many(black_box(chunk), &mut out)
                .map_err(|e| e.to_string())?;
        }
    } else {
        for id in ids {
            black_box(h.locate(black_box(id)).map_err(|e| e.to_string())?);
        }
    }
    Ok(())
}
