//! Results: the table, JSON lines, the targets (docs/BENCHMARKS.md) and the SVG chart.

use std::path::Path;

/// A value of an extra JSON field.
#[derive(Clone, Debug)]
pub enum Val {
    Num(f64),
    Str(String),
    Bool(bool),
}

/// One line of results.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub scenario: String,
    pub arm: String,
    pub ns_min: Option<f64>,
    pub ns_median: Option<f64>,
    pub allocs: Option<f64>,
    pub runs: usize,
    /// Lookups per run (0 when not a lookup loop).
    pub lookups: usize,
    pub ratio_gix087: Option<f64>,
    /// Free text for the table (what the figures mean when they are not ns per lookup).
    pub note: String,
    pub extra: Vec<(&'static str, Val)>,
}

impl Row {
    pub fn new(scenario: &str, arm: &str) -> Row {
        Row {
            scenario: scenario.into(),
            arm: arm.into(),
            ..Row::default()
        }
    }

    pub fn with(mut self, key: &'static str, v: Val) -> Row {
        self.extra.push((key, v));
        self
    }

    /// The row as one JSON object (serde_json): fixed fields, then the extra ones.
    pub fn json(&self) -> String {
        use serde_json::{Map, Value, json};
        let num = |x: Option<f64>| match x {
            Some(x) if x.is_finite() => json!((x * 1000.0).round() / 1000.0),
            _ => Value::Null,
        };
        let mut o = Map::new();
        o.insert("scenario".into(), json!(self.scenario));
        o.insert("arm".into(), json!(self.arm));
        o.insert("ns_per_lookup_min".into(), num(self.ns_min));
        o.insert("ns_per_lookup_median".into(), num(self.ns_median));
        o.insert("allocs_per_lookup".into(), num(self.allocs));
        o.insert("runs".into(), json!(self.runs));
        o.insert("lookups_per_run".into(), json!(self.lookups));
        o.insert("ratio_vs_gix_odb_087".into(), num(self.ratio_gix087));
        if !self.note.is_empty() {
            o.insert("note".into(), json!(self.note));
        }
        for (k, v) in &self.extra {
            let v = match v {
                Val::Num(x) => num(Some(*x)),
                Val::Str(t) => json!(t),
                Val::Bool(b) => json!(b),
            };
            o.insert((*k).into(), v);
        }
        Value::Object(o).to_string()
    }
}

/// Fill `ratio_gix087` of every row whose scenario has a gix-odb 0.87 row with a median.
pub fn add_ratios(rows: &mut [Row]) {
    let gix: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.arm == super::Kind::Gix087.name())
        .filter_map(|r| Some((r.scenario.clone(), r.ns_median?)))
        .collect();
    for r in rows.iter_mut() {
        if let (Some(m), Some((_, g))) = (r.ns_median, gix.iter().find(|(s, _)| *s == r.scenario)) {
            r.ratio_gix087 = Some(m / g);
        }
    }
}

fn find<'a>(rows: &'a [Row], scenario: &str, arm: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.scenario == scenario && r.arm == arm)
}

fn extra(r: &Row, key: &str) -> Option<f64> {
    r.extra.iter().find_map(|(k, v)| match v {
        Val::Num(x) if *k == key => Some(*x),
        _ => None,
    })
}

/// The design targets (listed in docs/BENCHMARKS.md), as rows of scenario "target" (`value`, `limit`, `met`).
pub fn targets(rows: &[Row]) -> Vec<Row> {
    use super::Kind;
    let mut t = Vec::new();
    let mut add = |name: &str, value: Option<f64>, limit: f64, at_most: bool, unit: &str| {
        let mut r = Row::new("target", name).with("limit", Val::Num(limit));
        r.extra.push(("unit", Val::Str(unit.into())));
        r.extra.push(("at_most", Val::Bool(at_most)));
        match value {
            Some(v) => {
                let met = if at_most { v <= limit } else { v >= limit };
                r.extra.push(("value", Val::Num(v)));
                r.extra.push(("met", Val::Bool(met)));
                r.note = format!(
                    "{v:.3} {unit} ({} {limit}): {}",
                    if at_most { "<=" } else { ">=" },
                    if met { "met" } else { "MISSED" }
                );
            }
            None => r.note = "not measured in this run".into(),
        }
        t.push(r);
    };
    let median = |s: &str, k: Kind| find(rows, s, k.name()).and_then(|r| r.ns_median);
    let ratio = |s: &str, k: Kind| find(rows, s, k.name()).and_then(|r| r.ratio_gix087);
    add(
        "miss with loose probe vs gix-odb 0.87",
        ratio("miss-1pack", Kind::OdbProbe),
        0.85,
        true,
        "x",
    );
    add(
        "miss, loose none",
        median("miss-1pack", Kind::OdbNone),
        60.0,
        true,
        "ns",
    );
    add(
        "miss, loose cached",
        median("miss-1pack", Kind::OdbCached),
        60.0,
        true,
        "ns",
    );
    let min_ratio = |s: &str, k: Kind| {
        let a = find(rows, s, k.name())?.ns_min?;
        let g = find(rows, s, Kind::Gix087.name())?.ns_min?;
        Some(a / g)
    };
    add(
        "miss with loose probe vs gix-odb 0.87, from the minima",
        min_ratio("miss-1pack", Kind::OdbProbe),
        0.85,
        true,
        "x",
    );
    add(
        "present (random order) vs gix-odb 0.87",
        ratio("hit-1pack-random", Kind::OdbProbe),
        0.7,
        true,
        "x",
    );
    add(
        "present vs gix-odb 0.87, from the minima",
        min_ratio("hit-1pack-random", Kind::OdbProbe),
        0.7,
        true,
        "x",
    );
    let hit_allocs = [Kind::OdbProbe, Kind::OdbNone, Kind::OdbCached]
        .iter()
        .filter_map(|k| find(rows, "hit-1pack-random", k.name()).and_then(|r| r.allocs))
        .fold(None, |a: Option<f64>, x| Some(a.unwrap_or(0.0).max(x)));
    add(
        "present: heap allocations per lookup",
        hit_allocs,
        0.0,
        true,
        "allocs",
    );
    add(
        "two threads missing (loose none): throughput vs one thread",
        find(rows, "miss-2threads", Kind::OdbNone.name())
            .and_then(|r| extra(r, "ratio_vs_1thread")),
        1.9,
        false,
        "x",
    );
    add(
        "two threads missing (loose none), from the minima",
        find(rows, "miss-2threads", Kind::OdbNone.name())
            .and_then(|r| extra(r, "ratio_vs_1thread_of_mins")),
        1.9,
        false,
        "x",
    );
    add(
        "control: bare PackIndex::lookup, two threads vs one",
        find(rows, "miss-2threads", Kind::IdxLookup.name())
            .and_then(|r| extra(r, "ratio_vs_1thread")),
        1.9,
        false,
        "x",
    );
    add(
        "miss, loose none (minimum)",
        find(rows, "miss-1pack", Kind::OdbNone.name()).and_then(|r| r.ns_min),
        60.0,
        true,
        "ns",
    );
    add(
        "miss, loose cached (minimum)",
        find(rows, "miss-1pack", Kind::OdbCached.name()).and_then(|r| r.ns_min),
        60.0,
        true,
        "ns",
    );
    add(
        "1 000 000-object index: miss (minimum)",
        find(rows, "miss-1M-index", Kind::OdbNone.name()).and_then(|r| r.ns_min),
        250.0,
        true,
        "ns",
    );
    add(
        "1 000 000-object index: miss",
        median("miss-1M-index", Kind::OdbNone),
        250.0,
        true,
        "ns",
    );
    // Turn-2 targets (issue 14).
    let over = |a: Option<f64>, b: Option<f64>| Some(a? / b?);
    add(
        "100 packs, no midx, miss (loose none) vs the one-pack miss",
        over(
            median("miss-100packs", Kind::OdbNone),
            median("miss-1pack", Kind::OdbNone),
        ),
        2.0,
        true,
        "x",
    );
    add(
        "100 packs, no midx, miss (loose none) vs gix-odb 0.87",
        ratio("miss-100packs", Kind::OdbNone),
        0.05,
        true,
        "x",
    );
    add(
        "100 packs, no midx, miss with fresh ids vs the one-pack miss with fresh ids",
        over(
            median("miss-100packs-fresh", Kind::OdbNone),
            median("miss-1pack-fresh", Kind::OdbNone),
        ),
        2.0,
        true,
        "x",
    );
    add(
        "1 000 000-object index: miss with fresh ids (loose none)",
        median("miss-1M-index-fresh", Kind::OdbNone),
        40.0,
        true,
        "ns",
    );
    add(
        "1 000 000-object index: open + first miss",
        median("cold-load-1M-index", Kind::OdbNone).map(|ns| ns / 1e6),
        0.05,
        true,
        "ms",
    );
    let sparse = rows
        .iter()
        .find(|r| r.scenario.starts_with("open-first-miss-sparse-2^31"));
    add(
        "sparse 2^31-object index: open + first miss",
        sparse.map(|r| match r.ns_median {
            Some(ns) => ns / 1e9,
            None => extra(r, "seconds").unwrap_or(f64::INFINITY),
        }),
        0.5,
        true,
        "s",
    );
    add(
        "sparse 2^31-object index: peak memory of the process",
        sparse.and_then(|r| extra(r, "peak_rss_mb")),
        64.0,
        true,
        "MB",
    );
    add(
        "batched probed miss (locate_many) vs the in-function fstatat floor",
        over(
            median("miss-1pack", Kind::OdbProbeBatch),
            find(rows, "floor-missing-loose", "floor fstatat (in a function)")
                .and_then(|r| r.ns_median),
        ),
        1.2,
        true,
        "x",
    );
    add(
        "instructions per miss without probe (callgrind)",
        find(rows, "instructions-per-miss", Kind::OdbNone.name())
            .and_then(|r| extra(r, "instructions_per_miss")),
        200.0,
        true,
        "instr",
    );
    // Turn-3 targets (issue 22): the default configuration.
    add(
        "default-mode miss (Options::default()) vs OnMiss + probe (the old default)",
        over(
            median("miss-1pack", Kind::OdbDefault),
            median("miss-1pack", Kind::OdbOnMissProbe),
        ),
        0.35,
        true,
        "x",
    );
    let syscalls =
        |s: &str, k: Kind| find(rows, s, k.name()).and_then(|r| extra(r, "syscalls_per_miss"));
    add(
        "default-mode syscalls per miss, 1 objects directory",
        syscalls("syscalls-per-miss", Kind::OdbDefault),
        1.0,
        true,
        "syscalls",
    );
    add(
        "default-mode syscalls per miss, 3 objects directories",
        syscalls("syscalls-per-miss-3dirs", Kind::OdbDefault),
        1.0,
        true,
        "syscalls",
    );
    add(
        "default-mode miss, 3 objects directories, vs OnMiss + probe",
        over(
            median("miss-3dirs", Kind::OdbDefault),
            median("miss-3dirs", Kind::OdbOnMissProbe),
        ),
        0.35,
        true,
        "x",
    );
    let instr = |k: Kind| {
        find(rows, "instructions-per-miss", k.name())
            .and_then(|r| extra(r, "instructions_per_miss"))
    };
    add(
        "instructions per miss, OnMiss (no probe) vs Never (no probe)",
        over(instr(Kind::OdbOnMissNone), instr(Kind::OdbNone)),
        1.2,
        true,
        "x",
    );
    add(
        "1 000 000-object index: open + first miss, default configuration",
        median("cold-load-1M-index", Kind::OdbDefault).map(|ns| ns / 1e6),
        0.05,
        true,
        "ms",
    );
    add(
        "miss filter memory (1M index)",
        find(rows, "filter-1M-index", Kind::OdbNone.name())
            .and_then(|r| extra(r, "filter_bytes_per_id")),
        1.5,
        true,
        "B/id",
    );
    add(
        "waiters' CPU while a load is in flight, vs the loader's",
        find(rows, "waiters-1core", "odb-index loose=none")
            .and_then(|r| extra(r, "waiters_vs_loader_cpu")),
        0.05,
        true,
        "x",
    );
    t
}

/// The readable table.
pub fn print_table(rows: &[Row], targets: &[Row], objects: &Path) {
    println!("odb-index bench on {}", objects.display());
    println!(
        "{:<22} {:<26} {:>10} {:>10} {:>8} {:>8} {:>5}  note",
        "scenario", "arm", "ns min", "ns median", "allocs", "vs 0.87", "runs"
    );
    let f = |x: Option<f64>, prec: usize| x.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"));
    let mut last = String::new();
    for r in rows {
        if r.scenario != last && !last.is_empty() {
            println!();
        }
        last.clone_from(&r.scenario);
        println!(
            "{:<22} {:<26} {:>10} {:>10} {:>8} {:>8} {:>5}  {}",
            r.scenario,
            r.arm,
            f(r.ns_min, 1),
            f(r.ns_median, 1),
            f(r.allocs, 2),
            r.ratio_gix087
                .map_or_else(|| "-".into(), |v| format!("{v:.2}x")),
            r.runs,
            r.note
        );
    }
    println!("\ntargets (docs/BENCHMARKS.md, Targets):");
    for t in targets {
        println!("  {:<62} {}", t.arm, t.note);
    }
}

/// A horizontal bar chart (log scale) of every row with a median in ns.
pub fn svg(rows: &[Row], path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let bars: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| {
            !r.scenario.starts_with("cold-load-")
                && !r.scenario.starts_with("open-first-miss")
                && r.scenario != "filter-build"
        })
        .filter_map(|r| Some((format!("{}  {}", r.scenario, r.arm), r.ns_median?)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    if bars.is_empty() {
        return Err("nothing to draw".into());
    }
    let n = bars.len();
    let height = 90 + 22 * n as u32;
    let max = bars.iter().map(|b| b.1).fold(1.0, f64::max) * 2.0;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "odb-index bench: ns per lookup (median, log scale)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(420)
        .build_cartesian_2d((1.0f64..max).log_scale(), -0.5f64..(n as f64 - 0.5))
        .map_err(|e| err(&e))?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    // Bar i (and its value label) is drawn on row y = n-1-i, so the first bar is at the top.
    let row_y = |i: usize| (n - 1 - i) as f64;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 0.01 && i >= 0.0 {
                // The first row at the top.
                (n - 1)
                    .checked_sub(i as usize)
                    .and_then(|k| labels.get(k))
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("ns")
        .draw()
        .map_err(|e| err(&e))?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (name, v))| {
            let color = if name.contains("gix-odb 0.83") {
                RGBColor(200, 120, 120)
            } else if name.contains("gix-odb") {
                RGBColor(220, 160, 60)
            } else if name.contains("floor") {
                RGBColor(150, 150, 150)
            } else {
                RGBColor(70, 120, 200)
            };
            let y = row_y(i);
            Rectangle::new([(1.0, y - 0.35), (*v, y + 0.35)], color.filled())
        }))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            // The label of bar i sits on bar i's row (the rows are drawn top-down).
            Text::new(
                format!("{v:.0}"),
                // Top-left corner of the text: just right of the bar's end, level with the bar's top edge.
                (*v * 1.05, row_y(i) + 0.3),
                ("sans-serif", 12),
            )
        }))
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
