//! The design targets (docs/BENCHMARKS.md, "Targets") as data: one [`Target`] row per target (its name, the
//! figure it reads, the threshold, whether the figure moves with the machine's load) and one loop,
//! [`evaluate`], that turns the rows of a run into rows of scenario `target`.
//!
//! Scenario and arm names are patterns: one `*` matches any run of characters, an empty arm any arm.
//!
//! Every target is a verdict, `met` or `MISSED`, on a figure the machine's load does not decide: a count
//! (instructions, system calls, allocations, bytes) or a ratio of two times measured side by side in the same
//! run (both under the same load). A time alone (ns, ms) is no verdict on a shared machine: such a figure is
//! printed after the targets as a time, not judged, beside the load sampled while the rows were measured
//! ([`LoadSampler`]: the 1-minute load average every two seconds of the run).

use super::Kind;
use super::row::{Row, Val};

/// Where a target's figure comes from (scenario and arm as [`matches()`] reads them).
#[derive(Clone, Copy, Debug)]
pub enum Figure {
    /// The row's median ns per lookup.
    Median(&'static str, &'static str),
    /// The row's minimum ns per lookup.
    Min(&'static str, &'static str),
    /// The row's median over gix-odb 0.87's median in the same scenario.
    Vs087(&'static str, &'static str),
    /// The row's minimum over gix-odb 0.87's minimum in the same scenario.
    MinVs087(&'static str, &'static str),
    /// An extra numeric field of the row.
    Extra(&'static str, &'static str, &'static str),
    /// One figure over another.
    Over(&'static Figure, &'static Figure),
    /// A figure times a constant (unit changes).
    Scaled(&'static Figure, f64),
    /// The first figure, else the second.
    Or(&'static Figure, &'static Figure),
    /// The largest of the figures that were measured.
    Max(&'static [Figure]),
    /// A constant if a row matches (the last resort of [`Figure::Or`]).
    IfRow(&'static str, &'static str, f64),
}

/// How the figure compares with the threshold.
#[derive(Clone, Copy, Debug)]
pub enum Cmp {
    AtMost(f64),
    AtLeast(f64),
}

/// One target.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub name: &'static str,
    pub figure: Figure,
    pub cmp: Cmp,
    pub unit: &'static str,
    /// The figure is a time or a time ratio, which the machine's load moves.
    pub load: bool,
    /// Judged `met`/`MISSED` (see [`Target::judged`]); false for a design figure that only a quiet machine can
    /// show (a time alone, or a throughput that counts the free cores).
    pub verdict: bool,
}

const fn t(name: &'static str, figure: Figure, cmp: Cmp, unit: &'static str, load: bool) -> Target {
    Target {
        name,
        figure,
        cmp,
        unit,
        load,
        verdict: true,
    }
}

/// A design figure printed beside the targets and not judged: it says what a quiet machine gives (a ratio of
/// throughputs that counts the cores other processes leave free).
const fn info(name: &'static str, figure: Figure, cmp: Cmp, unit: &'static str) -> Target {
    Target {
        name,
        figure,
        cmp,
        unit,
        load: true,
        verdict: false,
    }
}

use Cmp::{AtLeast, AtMost};
use Figure::{Extra, Max, Median, Min, MinVs087, Or, Over, Scaled, Vs087};

const PROBE: &str = Kind::OdbProbe.name();
const NONE: &str = Kind::OdbNone.name();
const CACHED: &str = Kind::OdbCached.name();
const DEFAULT: &str = Kind::OdbDefault.name();
const ONMISS_PROBE: &str = Kind::OdbOnMissProbe.name();
const SPARSE: &str = "open-first-miss-sparse-2^31*";

/// The main scenarios' targets, in the order they are printed.
pub const MAIN: &[Target] = &[
    t(
        "miss with loose probe vs gix-odb 0.87",
        Vs087("miss-1pack", PROBE),
        AtMost(0.85),
        "x",
        true,
    ),
    t(
        "miss, loose none",
        Median("miss-1pack", NONE),
        AtMost(60.0),
        "ns",
        true,
    ),
    t(
        "miss, loose cached",
        Median("miss-1pack", CACHED),
        AtMost(60.0),
        "ns",
        true,
    ),
    t(
        "miss with loose probe vs gix-odb 0.87, from the minima",
        MinVs087("miss-1pack", PROBE),
        AtMost(0.85),
        "x",
        true,
    ),
    t(
        "present (random order) vs gix-odb 0.87",
        Vs087("hit-1pack-random", PROBE),
        AtMost(0.7),
        "x",
        true,
    ),
    t(
        "present vs gix-odb 0.87, from the minima",
        MinVs087("hit-1pack-random", PROBE),
        AtMost(0.7),
        "x",
        true,
    ),
    t(
        "present: heap allocations per lookup",
        Max(&[
            Extra("hit-1pack-random", PROBE, "\0allocs"),
            Extra("hit-1pack-random", NONE, "\0allocs"),
            Extra("hit-1pack-random", CACHED, "\0allocs"),
        ]),
        AtMost(0.0),
        "allocs",
        false,
    ),
    // What two threads give depends on the cores other processes leave free: the verdict is odb-index's
    // scaling against the shared-nothing control's (a bare index search), measured in the same scenario.
    t(
        "two threads missing (loose none): scaling vs the shared-nothing control's",
        Over(
            &Extra("miss-2threads", NONE, "ratio_vs_1thread"),
            &Extra("miss-2threads", Kind::IdxLookup.name(), "ratio_vs_1thread"),
        ),
        AtLeast(0.9),
        "x",
        true,
    ),
    info(
        "two threads missing (loose none): throughput vs one thread",
        Extra("miss-2threads", NONE, "ratio_vs_1thread"),
        AtLeast(1.9),
        "x",
    ),
    info(
        "two threads missing (loose none), from the minima",
        Extra("miss-2threads", NONE, "ratio_vs_1thread_of_mins"),
        AtLeast(1.9),
        "x",
    ),
    info(
        "control: bare PackIndex::lookup, two threads vs one",
        Extra("miss-2threads", Kind::IdxLookup.name(), "ratio_vs_1thread"),
        AtLeast(1.9),
        "x",
    ),
    t(
        "miss, loose none (minimum)",
        Min("miss-1pack", NONE),
        AtMost(60.0),
        "ns",
        true,
    ),
    t(
        "miss, loose cached (minimum)",
        Min("miss-1pack", CACHED),
        AtMost(60.0),
        "ns",
        true,
    ),
    t(
        "1 000 000-object index: miss (minimum)",
        Min("miss-1M-index", NONE),
        AtMost(250.0),
        "ns",
        true,
    ),
    t(
        "1 000 000-object index: miss",
        Median("miss-1M-index", NONE),
        AtMost(250.0),
        "ns",
        true,
    ),
    t(
        "100 packs, no midx, miss (loose none) vs the one-pack miss",
        Over(&Median("miss-100packs", NONE), &Median("miss-1pack", NONE)),
        AtMost(2.0),
        "x",
        true,
    ),
    t(
        "100 packs, no midx, miss (loose none) vs gix-odb 0.87",
        Vs087("miss-100packs", NONE),
        AtMost(0.05),
        "x",
        true,
    ),
    t(
        "100 packs, no midx, miss with fresh ids vs the one-pack miss with fresh ids",
        Over(
            &Median("miss-100packs-fresh", NONE),
            &Median("miss-1pack-fresh", NONE),
        ),
        AtMost(2.0),
        "x",
        true,
    ),
    t(
        "1 000 000-object index: miss with fresh ids (loose none)",
        Median("miss-1M-index-fresh", NONE),
        AtMost(40.0),
        "ns",
        true,
    ),
    t(
        "1 000 000-object index: open + first miss",
        Scaled(&Median("cold-load-1M-index", NONE), 1e-6),
        AtMost(0.05),
        "ms",
        true,
    ),
    t(
        "sparse 2^31-object index: open + first miss",
        Or(
            &Scaled(&Median(SPARSE, ""), 1e-9),
            &Or(
                &Extra(SPARSE, "", "seconds"),
                &Figure::IfRow(SPARSE, "", f64::INFINITY),
            ),
        ),
        AtMost(0.5),
        "s",
        true,
    ),
    t(
        "sparse 2^31-object index: peak memory of the process",
        Extra(SPARSE, "", "peak_rss_mb"),
        AtMost(64.0),
        "MB",
        false,
    ),
    t(
        "batched probed miss (locate_many) vs the in-function fstatat floor",
        Over(
            &Median("miss-1pack", Kind::OdbProbeBatch.name()),
            &Median("floor-missing-loose", "floor fstatat (in a function)"),
        ),
        AtMost(1.2),
        "x",
        true,
    ),
    t(
        "instructions per miss without probe (callgrind)",
        Extra("instructions-per-miss", NONE, "instructions_per_miss"),
        AtMost(200.0),
        "instr",
        false,
    ),
    t(
        "default-mode miss (Options::default()) vs OnMiss + probe (the old default)",
        Over(
            &Median("miss-1pack", DEFAULT),
            &Median("miss-1pack", ONMISS_PROBE),
        ),
        AtMost(0.35),
        "x",
        true,
    ),
    t(
        "default-mode syscalls per miss, 1 objects directory",
        Extra("syscalls-per-miss", DEFAULT, "syscalls_per_miss"),
        AtMost(1.0),
        "syscalls",
        false,
    ),
    t(
        "default-mode syscalls per miss, 3 objects directories",
        Extra("syscalls-per-miss-3dirs", DEFAULT, "syscalls_per_miss"),
        AtMost(1.0),
        "syscalls",
        false,
    ),
    t(
        "default-mode miss, 3 objects directories, vs OnMiss + probe",
        Over(
            &Median("miss-3dirs", DEFAULT),
            &Median("miss-3dirs", ONMISS_PROBE),
        ),
        AtMost(0.35),
        "x",
        true,
    ),
    t(
        "instructions per miss, OnMiss (no probe) vs Never (no probe)",
        Over(
            &Extra(
                "instructions-per-miss",
                Kind::OdbOnMissNone.name(),
                "instructions_per_miss",
            ),
            &Extra("instructions-per-miss", NONE, "instructions_per_miss"),
        ),
        AtMost(1.2),
        "x",
        false,
    ),
    t(
        "1 000 000-object index: open + first miss, default configuration",
        Scaled(&Median("cold-load-1M-index", DEFAULT), 1e-6),
        AtMost(0.05),
        "ms",
        true,
    ),
    t(
        "miss filter memory (1M index)",
        Extra("filter-1M-index", NONE, "filter_bytes_per_id"),
        AtMost(1.5),
        "B/id",
        false,
    ),
    t(
        "waiters' CPU while a load is in flight, vs the loader's",
        Extra("waiters-1core", NONE, "waiters_vs_loader_cpu"),
        AtMost(0.05),
        "x",
        true,
    ),
];

/// Whether `name` matches `pattern` (one `*` matches any run of characters; empty: anything).
pub fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        _ if pattern.is_empty() => true,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => name == pattern,
    }
}

/// The first row whose scenario and arm match the patterns.
pub fn row<'a>(rows: &'a [Row], scenario: &str, arm: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| matches(scenario, &r.scenario) && matches(arm, &r.arm))
}

/// A row's extra numeric field (`"\0allocs"`: its allocations per lookup).
pub fn extra(r: &Row, key: &str) -> Option<f64> {
    if key == "\0allocs" {
        return r.allocs;
    }
    r.extra.iter().find_map(|(k, v)| match v {
        Val::Num(x) if *k == key => Some(*x),
        _ => None,
    })
}

impl Figure {
    /// The figure in this run's rows, `None` if not measured.
    pub fn read(&self, rows: &[Row]) -> Option<f64> {
        let gix = |s: &str| row(rows, s, Kind::Gix087.name());
        match *self {
            Median(s, a) => row(rows, s, a)?.ns_median,
            Min(s, a) => row(rows, s, a)?.ns_min,
            Vs087(s, a) => Some(row(rows, s, a)?.ns_median? / gix(s)?.ns_median?),
            MinVs087(s, a) => Some(row(rows, s, a)?.ns_min? / gix(s)?.ns_min?),
            Extra(s, a, k) => extra(row(rows, s, a)?, k),
            Over(a, b) => {
                let (a, b) = (a.read(rows)?, b.read(rows)?);
                // A difference of two wall times can come out negative on a tiny input: no ratio then.
                (a >= 0.0 && b > 0.0).then(|| a / b)
            }
            Scaled(a, k) => Some(a.read(rows)? * k),
            Or(a, b) => a.read(rows).or_else(|| b.read(rows)),
            Max(figs) => figs.iter().filter_map(|f| f.read(rows)).reduce(f64::max),
            Figure::IfRow(s, a, x) => row(rows, s, a).map(|_| x),
        }
    }
}

/// The 1-minute load averages sampled during the run ([`LoadSampler::start`]).
static SAMPLES: std::sync::Mutex<Vec<f64>> = std::sync::Mutex::new(Vec::new());

/// Samples the 1-minute load average every two seconds from a thread of its own while the rows are measured
/// (it sleeps in between: it takes no measurable time from them), so that the load printed is the one the rows
/// ran under, not the one at the end.
pub struct LoadSampler;

impl LoadSampler {
    /// Start sampling (a first sample now); the thread ends with the process.
    pub fn start() {
        SAMPLES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(load());
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(2));
                SAMPLES
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(load());
            }
        });
    }

    /// The load during the run so far: `(min, median, max, samples)`; one sample now if none was taken.
    pub fn during() -> (f64, f64, f64, usize) {
        let mut v = SAMPLES.lock().unwrap_or_else(|e| e.into_inner()).clone();
        v.retain(|x| x.is_finite());
        if v.is_empty() {
            let l = load();
            return (l, l, l, 1);
        }
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2], v[v.len() - 1], v.len())
    }

    /// `load 0.8-2.1 (median 1.2, 40 samples) during the rows`.
    pub fn describe() -> String {
        let (lo, med, hi, n) = LoadSampler::during();
        format!("load {lo:.1}-{hi:.1} (median {med:.1}, {n} samples) during the rows")
    }
}

/// The 1-minute load average now (`/proc/loadavg`), NaN where there is none.
pub fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

impl Target {
    /// Whether the target is a verdict: a count, or a ratio of times measured side by side (unit `x`); a time
    /// alone is not (see the module's notes).
    pub fn judged(&self) -> bool {
        self.verdict && (!self.load || self.unit == "x")
    }

    /// The target judged on `rows`, as a row of scenario `target`; `load` is the median load during the rows.
    pub fn judge(&self, rows: &[Row], load: f64) -> Row {
        let (limit, at_most) = match self.cmp {
            AtMost(x) => (x, true),
            AtLeast(x) => (x, false),
        };
        let unit = self.unit;
        let mut r = Row::new("target", self.name)
            .with("limit", Val::Num(limit))
            .with("unit", Val::Str(unit.into()))
            .with("at_most", Val::Bool(at_most))
            .with("load_dependent", Val::Bool(self.load))
            .with("judged", Val::Bool(self.judged()));
        let Some(v) = self.figure.read(rows) else {
            r.note = "not measured in this run".into();
            return r;
        };
        let met = if at_most { v <= limit } else { v >= limit };
        let op = if at_most { "<=" } else { ">=" };
        let status = match (self.judged(), met) {
            (true, true) => "met".to_owned(),
            (true, false) => "MISSED".to_owned(),
            (false, _) => "not judged".to_owned(),
        };
        r.note = if !self.judged() {
            format!(
                "{} (design figure {op} {}; median load {load:.1} during the rows): {status}",
                fig(v, unit),
                with_unit(limit, unit)
            )
        } else {
            format!(
                "{} (target {op} {}): {status}",
                fig(v, unit),
                with_unit(limit, unit)
            )
        };
        r.extra.push(("value", Val::Num(v)));
        r.extra.push(("met", Val::Bool(met)));
        r.extra.push(("status", Val::Str(status)));
        if self.load {
            r.extra.push(("load", Val::Num(load)));
        }
        r
    }
}

/// A figure with its unit, two significant digits at least: `1.36x`, `0.0052x`, `52.10 ns`.
pub fn fig(v: f64, unit: &str) -> String {
    let prec = if v == 0.0 || !v.is_finite() || v.abs() >= 100.0 {
        1
    } else {
        (1.0 - v.abs().log10().floor()).clamp(2.0, 6.0) as usize
    };
    if unit == "x" {
        format!("{v:.prec$}x")
    } else {
        format!("{v:.prec$} {unit}")
    }
}

/// A threshold with its unit: `0.85x`, `60 ns`.
fn with_unit(limit: f64, unit: &str) -> String {
    if unit == "x" {
        format!("{limit}x")
    } else {
        format!("{limit} {unit}")
    }
}

/// Every target of `tables` judged on `rows`, with the median load sampled during them.
pub fn evaluate(rows: &[Row], tables: &[&[Target]]) -> Vec<Row> {
    let load = LoadSampler::during().1;
    tables
        .iter()
        .flat_map(|table| table.iter())
        .map(|t| t.judge(rows, load))
        .collect()
}
