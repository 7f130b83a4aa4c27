//! Scenario group "batches" (docs/BENCHMARKS.md, "Batches"): `Handle::locate_many` beside `locate` per
//! id (random hits and fresh misses on the 1M-object index, its multi-pack-index, 100 packs and 100 packs under
//! a multi-pack-index), system calls per miss in batches of 4 096 under `Options::default()` (strace), last-level
//! cache misses per lookup for both (cachegrind), a front end's end-to-end run on a generated history (ids
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
use super::row::{Row, Val};
use super::targets::{Cmp, Figure, Target, load};

mod counts;
mod front;

use counts::*;
use front::*;

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
    /// Commits of the front end's history (its own, larger than scenario 8's).
    front_commits: usize,
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
                front_commits: 10,
            }
        } else {
            Sizes {
                objects: 1_000_000,
                lookups: 1 << 18,
                runs: 9,
                syscall_batches: 8,
                cachegrind_lookups: 1 << 16,
                front_runs: 5,
                front_commits: 800,
            }
        }
    }
}

/// The group's rows, its fixtures built under `dir` (the front end's history in `dir/front/real.git`, reused
/// if it exists); `objects` is the bench's one-pack fixture (the system-call rows).
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

/// The hidden `--batch-child WHAT ARG PATH` modes run by [`syscalls`], [`cachegrind`] and [`front_end`].
pub fn child(what: &str, arg: &str, path: &Path) -> Result<(), String> {
    match what {
        "syscalls" => child_syscalls(arg, path),
        "front-adapter" | "front-gix" => child_front(what, arg, path),
        w if w.starts_with("cachegrind-") => child_cachegrind(w, arg, path),
        "rows" => child_rows(arg, path, Hits::Random),
        "rows-sorted" => child_rows(arg, path, Hits::Sorted),
        w if w.starts_with("rows-subset-") => match w["rows-subset-".len()..].parse() {
            Ok(k) if k > 0 => child_rows(arg, path, Hits::Subset(k)),
            _ => Err(format!("--batch-child {w}: rows-subset-K with K > 0")),
        },
        other => Err(format!("--batch-child: unknown mode {other}")),
    }
}

/// `--batch-child rows RUNS OBJECTS`: the group's `locate` vs `locate_many` rows (random hits, fresh misses) on
/// one objects directory alone, `RUNS` runs of 2^18 ids each, the ratios printed (for the 1M-index target row
/// without building the group's other fixtures: `--make-fixture DIR` writes the index, DIR/big/objects).
/// `rows-sorted`: the hits in the index's order, not shuffled: each search's lines and branches are those of
/// the search before, which measures the work of a lookup without its cache misses and mispredicted branches.
/// `rows-subset-K`: every hit one of K random ids, in random order: the lines and pages of K searches, which
/// stay in the caches and the TLB while K is small (docs/BENCHMARKS.md, "Batches").
fn child_rows(arg: &str, path: &Path, order: Hits) -> Result<(), String> {
    let runs: usize = arg
        .parse()
        .map_err(|_| format!("--batch-child rows {arg}"))?;
    let s = Sizes {
        runs,
        ..Sizes::new(false)
    };
    let mut hits = all_ids(path)?;
    match order {
        Hits::Random => {}
        Hits::Sorted => hits.sort(),
        Hits::Subset(k) => {
            let some = hits[..k.min(hits.len())].to_vec();
            let mut rng = Rng::new(23);
            for h in &mut hits {
                *h = some[(rng.next_u64() % some.len() as u64) as usize];
            }
        }
    }
    let misses = fresh(s.lookups * 4, 31);
    for row in locate_vs_many("rows", path, &hits, &misses, Kind::OdbNone, &s)? {
        println!(
            "{} {}: median {:.1} ns, min {:.1} ns; {}",
            row.scenario,
            row.arm,
            row.ns_median.unwrap_or(f64::NAN),
            row.ns_min.unwrap_or(f64::NAN),
            row.note
        );
    }
    Ok(())
}

/// The order of the hits of [`child_rows`].
enum Hits {
    /// Every id of the index, shuffled.
    Random,
    /// Every id of the index, in its order.
    Sorted,
    /// Random draws from the first K of the shuffled ids.
    Subset(usize),
}

/// The group's targets (judged by [`crate::targets::evaluate`]). The end-to-end row is a time ratio
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
        verdict: true,
    },
    Target {
        name: "batches: <= 0.01 syscalls per miss, batch of 4096, default options",
        figure: Figure::Extra("batch-syscalls-per-miss", "odb-index*", "syscalls_per_miss"),
        cmp: Cmp::AtMost(0.01),
        unit: "syscalls",
        load: false,
        verdict: true,
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
        verdict: true,
    },
    Target {
        name: "batches: end-to-end front end vs git cat-file --batch-check (time per object)",
        figure: Figure::Over(&FRONT_ODB, &Figure::Median("batch-front-end-real", "git*")),
        cmp: Cmp::AtMost(1.0),
        unit: "x",
        load: true,
        verdict: true,
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
        verdict: true,
    },
];

const FRONT_ODB: Figure = Figure::Median("batch-front-end-real", "odb-index*");
