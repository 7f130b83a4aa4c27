//! Scenario group "batches" (issue 32; docs/BENCHMARKS.md, "Batches"): `Handle::locate_many` beside `locate` per
//! id (random hits and fresh misses on the 1M-object index, its multi-pack-index, 100 packs and 100 packs under
//! a multi-pack-index), system calls per miss in batches of 4 096 under `Options::default()` (strace), last-level
//! cache misses per lookup for both (cachegrind), a front end's end-to-end run on the fixture's real history (ids
//! in `git rev-list --objects --all` order, type and size read) for the adapter, gix-odb 0.87 and
//! `git cat-file --batch-check --buffer`, and each one's resident memory per million objects. The children run
//! by strace, valgrind and `/usr/bin/time` are this binary's hidden `--batch-child` modes.
//!
//! Run alone: `odb-index-bench --scenario batches [--quick]`; the default run includes it.

use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use odb_index::{ObjectId, Store};

use super::Rng;
use super::arms::{Kind, odb_options};
use super::fixture;
use super::report::{Row, Val};
use super::targets::{Cmp, Figure, Target, load};

/// Ids per `locate_many` call in this group (the batch size the issue names).
const BATCH: usize = 4096;

/// Sizes of one run of the group.
struct Sizes {
    objects: usize,
    lookups: usize,
    runs: usize,
    syscall_batches: usize,
    cachegrind_lookups: usize,
    front_runs: usize,
    real_cap: u64,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                objects: 100_000,
                lookups: 20_000,
                runs: 3,
                syscall_batches: 2,
                cachegrind_lookups: 0,
                front_runs: 1,
                real_cap: 1 << 20,
            }
        } else {
            Sizes {
                objects: 1_000_000,
                lookups: 1 << 18,
                runs: 9,
                syscall_batches: 8,
                cachegrind_lookups: 1 << 16,
                front_runs: 5,
                real_cap: 48 << 20,
            }
        }
    }
}

/// The group's rows, its fixtures built under `dir` (the real history reused if `dir/real.git` exists); `objects`
/// is the bench's one-pack fixture (the system-call rows).
pub fn rows(dir: &Path, objects: &Path, quick: bool) -> Result<Vec<Row>, String> {
    let s = Sizes::new(quick);
    let mut rows = Vec::new();
    let real_dir = dir;
    let dir = &dir.join("batches");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "bench: batches: writing a {}-object index and its multi-pack-index",
        s.objects
    );
    let (big, mut big_ids) = fixture::big_index(dir, s.objects, &mut Rng::new(5))?;
    let big_midx = fixture::big_midx(dir, s.objects, &mut Rng::new(5))?;
    Rng::new(21).shuffle(&mut big_ids);
    let name = if s.objects == 1_000_000 {
        "1M".to_owned()
    } else {
        format!("{}k", s.objects / 1000)
    };
    let many_dir = dir.join("batch-many");
    std::fs::create_dir_all(&many_dir).map_err(|e| format!("{}: {e}", many_dir.display()))?;
    let (many, many_midx) = fixture::many_packs(&many_dir, 100, 123)?;
    let many_ids = all_ids(&many)?;
    let misses = fresh(s.lookups * 4, 31);
    for (label, objects, hits) in [
        (format!("{name}-index"), &big, &big_ids),
        (format!("{name}-midx"), &big_midx, &big_ids),
        ("100packs".to_owned(), &many, &many_ids),
        ("100packs-midx".to_owned(), &many_midx, &many_ids),
    ] {
        rows.extend(locate_vs_many(
            &label,
            objects,
            hits,
            &misses,
            Kind::OdbNone,
            &s,
        )?);
    }
    // The configuration users run (loose objects watched, refresh on miss): a miss's change check is per lookup
    // for `locate`, per batch for `locate_many`.
    let one_pack = all_ids(objects)?;
    rows.extend(locate_vs_many(
        "1pack-default",
        objects,
        &one_pack,
        &misses,
        Kind::OdbDefault,
        &s,
    )?);
    rows.extend(syscalls(objects, s.syscall_batches)?);
    if s.cachegrind_lookups > 0 {
        rows.extend(cachegrind(&big, &name, s.cachegrind_lookups)?);
    }
    rows.extend(front_end(real_dir, &s)?);
    Ok(rows)
}

/// Every id of the packs of `objects` (through a store), shuffled.
fn all_ids(objects: &Path) -> Result<Vec<ObjectId>, String> {
    let store = Store::open(objects, odb_options(Kind::OdbNone)).map_err(|e| e.to_string())?;
    let mut ids = Vec::new();
    store
        .handle()
        .for_each_object(|id, _| {
            ids.push(*id);
            std::ops::ControlFlow::Continue(())
        })
        .map_err(|e| e.to_string())?;
    ids.sort();
    ids.dedup();
    Rng::new(22).shuffle(&mut ids);
    Ok(ids)
}

/// `n` random (absent) ids.
fn fresh(n: usize, seed: u64) -> Vec<ObjectId> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.oid()).collect()
}

/// `locate` per id and `locate_many` in batches of [`BATCH`], on random hits and fresh misses of `objects`:
/// two handles of one store opened as arm `kind` (`OdbNone`: no loose objects, no refresh, the index searches
/// alone; `OdbDefault`: `Options::default()`), interleaved run by run;
/// each run takes the next `lookups` ids (so a run does not find the previous run's lines in cache).
fn locate_vs_many(
    label: &str,
    objects: &Path,
    hits: &[ObjectId],
    misses: &[ObjectId],
    kind: Kind,
    s: &Sizes,
) -> Result<Vec<Row>, String> {
    let store = Store::open(objects, odb_options(kind)).map_err(|e| e.to_string())?;
    let (mut one, mut many) = (store.handle(), store.handle());
    let mut out = Vec::with_capacity(BATCH);
    for h in [&mut one, &mut many] {
        warm_up(&store, h, hits, misses, &mut out)?;
    }
    let mut rows = Vec::new();
    for (what, ids, want_found) in [("hit", hits, true), ("miss", misses, false)] {
        let n = s.lookups.min(ids.len());
        let (mut t_one, mut t_many) = (Vec::new(), Vec::new());
        let mut at = 0;
        for _ in 0..s.runs {
            if at + n > ids.len() {
                at = 0;
            }
            let run = &ids[at..at + n];
            at += n;
            let t = Instant::now();
            let mut found = 0usize;
            for id in run {
                found += usize::from(
                    one.locate(black_box(id))
                        .map_err(|e| e.to_string())?
                        .is_some(),
                );
            }
            t_one.push(t.elapsed().as_nanos() as f64 / n as f64);
            let found_one = found;
            let t = Instant::now();
            found = 0;
            for chunk in run.chunks(BATCH) {
                out.clear();
                many.locate_many(black_box(chunk), &mut out)
                    .map_err(|e| e.to_string())?;
                found += out.iter().filter(|l| l.is_some()).count();
            }
            t_many.push(t.elapsed().as_nanos() as f64 / n as f64);
            let want = if want_found { n } else { 0 };
            if found != want || found_one != want {
                return Err(format!(
                    "batch-{what}-{label}: found {found_one} (locate) and {found} (locate_many) of {n}, want {want}"
                ));
            }
        }
        let load = load();
        let ((min1, med1), (minm, medm)) = (min_median(&t_one), min_median(&t_many));
        let scenario = format!("batch-{what}-{label}");
        let ratio = medm / med1;
        rows.push(Row {
            ns_min: Some(min1),
            ns_median: Some(med1),
            runs: s.runs,
            lookups: n,
            note: format!("load {load:.1}"),
            ..Row::new(&scenario, &format!("{} locate", arm_label(kind)))
        });
        rows.push(
            Row {
                ns_min: Some(minm),
                ns_median: Some(medm),
                runs: s.runs,
                lookups: n,
                note: format!("{ratio:.2}x locate (medians, same run; load {load:.1})"),
                ..Row::new(&scenario, &format!("{} locate_many 4096", arm_label(kind)))
            }
            .with("ratio_to_locate", Val::Num(ratio))
            .with("load", Val::Num(load)),
        );
        eprintln!("bench: {scenario}: locate_many {ratio:.2}x locate");
    }
    Ok(rows)
}

/// Warm a handle up: every index loaded, the miss filter built (as the other rows settle it).
fn warm_up(
    store: &Store,
    h: &mut odb_index::Handle,
    hits: &[ObjectId],
    misses: &[ObjectId],
    out: &mut Vec<Option<odb_index::Location>>,
) -> Result<(), String> {
    h.locate_many(&hits[..hits.len().min(BATCH)], out)
        .map_err(|e| e.to_string())?;
    // (A store whose packs a multi-pack-index covers builds none: 64 batches at most.)
    for _ in 0..64 {
        if store.miss_filter().is_some() {
            break;
        }
        out.clear();
        h.locate_many(&misses[..BATCH], out)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The arm's name in the rows: `odb-index`, or `odb-index default` for `Options::default()`.
fn arm_label(kind: Kind) -> &'static str {
    if kind == Kind::OdbDefault {
        "odb-index default"
    } else {
        "odb-index"
    }
}

fn min_median(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// System calls per miss of `locate_many` in batches of 4 096 absent ids under `Options::default()` (strace -f
/// -c of the hidden child, `k` and `2k` batches after the same warm-up, the difference divided by `k * 4096`).
fn syscalls(objects: &Path, k: usize) -> Result<Vec<Row>, String> {
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
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
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
        counts.push(parse_strace(&text));
    }
    let n = (k * BATCH) as f64;
    let mut per: Vec<(String, f64)> = counts[1]
        .iter()
        .map(|(name, c2)| {
            let c1 = counts[0]
                .iter()
                .find(|(n1, _)| n1 == name)
                .map_or(0, |x| x.1);
            (name.clone(), (*c2 as f64 - c1 as f64) / n)
        })
        .filter(|(_, v)| *v > 0.0)
        .collect();
    per.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = per.iter().map(|x| x.1).sum::<f64>().max(0.0);
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

/// `(syscall, calls)` from a `strace -c` summary.
fn parse_strace(text: &str) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 5
            || t[0].starts_with('%')
            || t[0].starts_with('-')
            || t[t.len() - 1] == "total"
        {
            continue;
        }
        if let Ok(calls) = t[3].parse::<u64>() {
            v.push((t[t.len() - 1].to_owned(), calls));
        }
    }
    v
}

/// A figure of cachegrind's summary on stderr: lines look like `==123== I   refs:      1,234,567` and
/// `==123== LL misses:   12,345 (...)`.
fn cachegrind_field(text: &str, key: &str) -> Option<f64> {
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
fn cachegrind(big: &Path, name: &str, n: usize) -> Result<Vec<Row>, String> {
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
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
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

/// The end-to-end front-end rows on the real history (imported under `dir` unless there already): every object
/// in `git rev-list --objects --all` order, type and size read, by the adapter (`Objects::info_many` in batches
/// of 4 096), gix-odb 0.87 (`Header::try_header` per id) and `git cat-file --batch-check --buffer`; each a child
/// process under `/usr/bin/time` (wall time from the parent, peak resident memory), round-robin, with every id
/// and with none: the difference is what the objects cost (time per object, memory per million objects), the
/// run with none its start-up (a process, its binary, opening the repository).
fn front_end(dir: &Path, s: &Sizes) -> Result<Vec<Row>, String> {
    let repo = dir.join("real.git");
    if !repo.join("objects").exists() {
        let Some(src) = fixture::registry_src() else {
            return Ok(vec![Row {
                note: "no $CARGO_HOME/registry/src: not measured".into(),
                ..Row::new("batch-front-end-real", "-")
            }]);
        };
        eprintln!(
            "bench: batches: importing up to {} MB of {}",
            s.real_cap >> 20,
            src.display()
        );
        fixture::real_history(dir, &src, s.real_cap)?;
    }
    let (n, ids_file, empty_file) = rev_list_ids(dir, &repo)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let arms: [(&str, Vec<PathBuf>); 3] = [
        (
            "odb-index adapter info_many",
            vec![exe.clone(), "--batch-child".into(), "front-adapter".into()],
        ),
        (
            "gix-odb 0.87 try_header",
            vec![exe, "--batch-child".into(), "front-gix".into()],
        ),
        ("git cat-file --batch-check --buffer", vec!["git".into()]),
    ];
    // Per arm, per input (every id, then none): wall times (ns) and peak resident memory (KiB).
    let mut wall = vec![[Vec::new(), Vec::new()]; arms.len()];
    let mut rss = vec![[Vec::new(), Vec::new()]; arms.len()];
    for _ in 0..s.front_runs {
        for (i, (name, argv)) in arms.iter().enumerate() {
            for (input, file, want) in [(0, &ids_file, n), (1, &empty_file, 0)] {
                let (ns, kib) = front_run(name, argv, &repo, file, want)?;
                wall[i][input].push(ns);
                rss[i][input].push(kib);
            }
        }
    }
    let names = arms.map(|(name, _)| name);
    Ok(front_rows(&names, &wall, &rss, n, s.front_runs))
}

/// The ids of `git rev-list --objects --all` in `repo`, written one a line to a file under `dir`, and an
/// empty file beside it: (how many ids, the ids' file, the empty one).
fn rev_list_ids(dir: &Path, repo: &Path) -> Result<(usize, PathBuf, PathBuf), String> {
    let listed = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["rev-list", "--objects", "--all"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("git rev-list: {e}"))?;
    let text = String::from_utf8_lossy(&listed.stdout);
    let ids: Vec<&str> = text.lines().filter_map(|l| l.get(..40)).collect();
    let ids_file = dir.join("batch-rev-list-ids.txt");
    let mut f =
        std::fs::File::create(&ids_file).map_err(|e| format!("{}: {e}", ids_file.display()))?;
    for id in &ids {
        writeln!(f, "{id}").map_err(|e| e.to_string())?;
    }
    drop(f);
    let empty_file = dir.join("batch-no-ids.txt");
    std::fs::write(&empty_file, b"").map_err(|e| format!("{}: {e}", empty_file.display()))?;
    Ok((ids.len(), ids_file, empty_file))
}

/// One run of a front-end arm (`argv`: this binary's child mode, or git alone) over the ids of `file` under
/// `/usr/bin/time`: its wall time (ns) and peak resident memory (KiB); `want` objects must be found.
fn front_run(
    name: &str,
    argv: &[PathBuf],
    repo: &Path,
    file: &Path,
    want: usize,
) -> Result<(f64, f64), String> {
    let mut c = Command::new("/usr/bin/time");
    c.args(["-f", "%M"]).args(argv);
    if argv.len() == 1 {
        c.arg("--git-dir")
            .arg(repo)
            .args(["cat-file", "--batch-check", "--buffer"]);
    } else {
        c.arg(file).arg(repo.join("objects"));
    }
    let stdin = std::fs::File::open(file).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let o = c
        .stdin(stdin)
        .stdout(Stdio::piped())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("{name}: {e}"))?;
    let dt = t.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let found = if argv.len() == 1 {
        out.lines().filter(|l| !l.ends_with("missing")).count()
    } else {
        out.trim().parse().unwrap_or(0)
    };
    if !o.status.success() || found != want {
        return Err(format!("{name}: found {found} of {want} ({err})"));
    }
    let kib: f64 = err
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    Ok((dt.as_nanos() as f64, kib))
}

/// The front-end rows from each arm's wall times and peak memory over every id (`[0]`) and over none (`[1]`):
/// the differences per object, and per million objects for the memory.
fn front_rows(
    names: &[&str],
    wall: &[[Vec<f64>; 2]],
    rss: &[[Vec<f64>; 2]],
    ids: usize,
    runs: usize,
) -> Vec<Row> {
    let load = load();
    let n = ids as f64;
    let mut rows = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (min_all, med_all) = min_median(&wall[i][0]);
        let (min_none, med_none) = min_median(&wall[i][1]);
        let (_, kib_all) = min_median(&rss[i][0]);
        let (_, kib_none) = min_median(&rss[i][1]);
        let kib = kib_all - kib_none;
        let mib_per_m = kib / 1024.0 / (n / 1e6);
        rows.push(
            Row {
                ns_min: Some((min_all - min_none) / n),
                ns_median: Some((med_all - med_none) / n),
                runs,
                lookups: ids,
                note: format!(
                    "{ids} objects in rev-list order, type+size; per object: (every id - no id) / ids, start-up {:.1} ms; \
                     peak RSS {:.1} MiB, {:.1} MiB over no id = {mib_per_m:.1} MiB per million objects; load {load:.1}",
                    med_none / 1e6,
                    kib_all / 1024.0,
                    kib / 1024.0
                ),
                ..Row::new("batch-front-end-real", name)
            }
            .with("rss_kib_over_start", Val::Num(kib))
            .with("rss_mib_per_million", Val::Num(mib_per_m))
            .with("startup_ms", Val::Num(med_none / 1e6))
            .with("load", Val::Num(load)),
        );
    }
    rows
}

/// The hidden `--batch-child WHAT ARG PATH` modes run by [`syscalls`], [`cachegrind`] and [`front_end`].
pub fn child(what: &str, arg: &str, path: &Path) -> Result<(), String> {
    match what {
        "syscalls" => child_syscalls(arg, path),
        "front-adapter" | "front-gix" => child_front(what, arg, path),
        w if w.starts_with("cachegrind-") => child_cachegrind(w, arg, path),
        other => Err(format!("--batch-child: unknown mode {other}")),
    }
}

/// `--batch-child syscalls K OBJECTS`: 3 + K batches of [`BATCH`] absent ids under `Options::default()`.
fn child_syscalls(arg: &str, path: &Path) -> Result<(), String> {
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

/// `--batch-child front-adapter|front-gix IDS_FILE OBJECTS`: type and size of every id of the file, through
/// the adapter's `info_many` or gix-odb 0.87's `try_header`; prints how many were found.
fn child_front(what: &str, arg: &str, path: &Path) -> Result<(), String> {
    let (ids_file, objects) = (Path::new(arg), path);
    let text = std::fs::read_to_string(ids_file).map_err(|e| e.to_string())?;
    let ids: Vec<ObjectId> = text
        .lines()
        .map(|l| l.parse().map_err(|e| format!("{l}: {e}")))
        .collect::<Result<_, _>>()?;
    let found = if what == "front-adapter" {
        let objects = odb_index_gix::Objects::open(objects).map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(BATCH);
        let mut found = 0;
        for chunk in ids.chunks(BATCH) {
            out.clear();
            objects
                .info_many(chunk, &mut out)
                .map_err(|e| e.to_string())?;
            for info in out.iter().flatten() {
                black_box(info.size);
                found += 1;
            }
        }
        found
    } else {
        use gix_odb::Header as _;
        let h = gix_odb::at(objects, gix_hash::Kind::Sha1).map_err(|e| e.to_string())?;
        let mut found = 0;
        for id in &ids {
            let oid = gix_hash::oid::from_bytes_unchecked(id.as_bytes());
            if let Some(hd) = h.try_header(oid).map_err(|e| e.to_string())? {
                black_box((hd.kind(), hd.size()));
                found += 1;
            }
        }
        found
    };
    println!("{found}");
    Ok(())
}

/// `--batch-child cachegrind-{hit,miss}-{locate,many} N OBJECTS`: N lookups (hits or fresh misses), by `locate`
/// per id or `locate_many` in batches, after the same warm-up as a run with N = 0.
fn child_cachegrind(w: &str, arg: &str, path: &Path) -> Result<(), String> {
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

/// The group's targets (issue 32; judged by [`crate::targets::evaluate`]). The end-to-end row is a time ratio
/// (load-dependent); the system calls and the memory are not.
pub const TARGETS: &[Target] = &[
    Target {
        name: "batches: locate_many <= 0.5x locate per id, 1M-index random hits",
        figure: Figure::Extra(
            "batch-hit-1M-index",
            "odb-index locate_many*",
            "ratio_to_locate",
        ),
        cmp: Cmp::AtMost(0.5),
        unit: "x",
        load: true,
    },
    Target {
        name: "batches: <= 0.01 syscalls per miss, batch of 4096, default options",
        figure: Figure::Extra("batch-syscalls-per-miss", "odb-index*", "syscalls_per_miss"),
        cmp: Cmp::AtMost(0.01),
        unit: "syscalls",
        load: false,
    },
    Target {
        name: "batches: end-to-end front end vs gix-odb 0.87 (time per object)",
        figure: Figure::Over(
            &FRONT_ODB,
            &Figure::Median("batch-front-end-real", "gix-odb*"),
        ),
        cmp: Cmp::AtMost(1.0),
        unit: "x",
        load: true,
    },
    Target {
        name: "batches: end-to-end front end vs git cat-file --batch-check (time per object)",
        figure: Figure::Over(&FRONT_ODB, &Figure::Median("batch-front-end-real", "git*")),
        cmp: Cmp::AtMost(1.0),
        unit: "x",
        load: true,
    },
    Target {
        name: "batches: memory per million objects vs gix-odb 0.87's",
        figure: Figure::Over(
            &Figure::Extra("batch-front-end-real", "odb-index*", "rss_mib_per_million"),
            &Figure::Extra("batch-front-end-real", "gix-odb*", "rss_mib_per_million"),
        ),
        cmp: Cmp::AtMost(1.0),
        unit: "x",
        load: false,
    },
];

const FRONT_ODB: Figure = Figure::Median("batch-front-end-real", "odb-index*");
