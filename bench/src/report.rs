//! Results: the table, JSON lines, the targets (docs/BENCHMARKS.md) and the SVG chart.

use std::path::Path;

use super::Kind;
use super::row::{Row, Val};

/// Fill `ratio_gix087` of every row whose scenario has a gix-odb 0.87 row with a median.
pub fn add_ratios(rows: &mut [Row]) {
    let gix: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.arm == Kind::Gix087.name())
        .filter_map(|r| Some((r.scenario.clone(), r.ns_median?)))
        .collect();
    for r in rows.iter_mut() {
        if let (Some(m), Some((_, g))) = (r.ns_median, gix.iter().find(|(s, _)| *s == r.scenario)) {
            r.ratio_gix087 = Some(m / g);
        }
    }
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
    let judged = |t: &&Row| {
        t.extra
            .iter()
            .any(|(k, v)| *k == "judged" && matches!(v, Val::Bool(true)))
    };
    println!(
        "\ntargets (docs/BENCHMARKS.md, Targets; counts, and ratios of times measured side by side in this run):"
    );
    for t in targets.iter().filter(judged) {
        println!("  {:<78} {}", t.arm, t.note);
    }
    println!(
        "design figures only a quiet machine shows, not judged (a time alone, or a throughput that counts free\n\
         cores; {}):",
        crate::targets::LoadSampler::describe()
    );
    for t in targets.iter().filter(|t| !judged(t)) {
        println!("  {:<78} {}", t.arm, t.note);
    }
}

/// One line of the comparison table: a label, the scenario, odb-index's arm and the peers' arms (patterns as
/// [`crate::targets::matches`] reads them; an empty peer arm: no comparable row, printed `-`).
struct Compared {
    label: &'static str,
    scenario: &'static str,
    odb: &'static str,
    gix: &'static str,
    git: &'static str,
}

const fn c(
    label: &'static str,
    scenario: &'static str,
    odb: &'static str,
    gix: &'static str,
    git: &'static str,
) -> Compared {
    Compared {
        label,
        scenario,
        odb,
        gix,
        git,
    }
}

const GIX: &str = Kind::Gix087.name();
const NONE: &str = Kind::OdbNone.name();

/// The rows of the comparison table, in the order printed.
const COMPARED: &[Compared] = &[
    c(
        "hit, 1 pack",
        "hit-1pack-random",
        Kind::OdbDefault.name(),
        GIX,
        "",
    ),
    c(
        "miss, 1 pack",
        "miss-1pack",
        Kind::OdbDefault.name(),
        GIX,
        "",
    ),
    c(
        "probed miss, 1 pack",
        "miss-1pack",
        Kind::OdbProbe.name(),
        GIX,
        "",
    ),
    c("miss, 1 pack, fresh ids", "miss-1pack-fresh", NONE, GIX, ""),
    c("hit, 100 packs", "hit-100packs-random", NONE, GIX, ""),
    c("miss, 100 packs", "miss-100packs", NONE, GIX, ""),
    c(
        "hit, multi-pack-index",
        "hit-100packs-midx-random",
        NONE,
        GIX,
        "",
    ),
    c(
        "miss, multi-pack-index",
        "miss-100packs-midx",
        NONE,
        GIX,
        "",
    ),
    c("miss, big index", "miss-*-index", NONE, GIX, ""),
    c(
        "bare index lookup, big index",
        "miss-*-index",
        Kind::IdxLookup.name(),
        GIX,
        "",
    ),
    c("hit, generated history", "hit-real-random", NONE, GIX, ""),
    c("miss, generated history", "miss-real", NONE, GIX, ""),
    c(
        "batch: front end, a history",
        "batch-front-end-real",
        "odb-index*",
        "gix-odb*",
        "git*",
    ),
];

/// The table a person reads: odb-index beside gix-odb 0.87 and git on the same fixture, medians, as ratios.
pub fn print_comparison(rows: &[Row]) {
    use crate::targets::row;
    let median = |arm: &str, s: &str| {
        if arm.is_empty() {
            None
        } else {
            row(rows, s, arm).and_then(|r| r.ns_median)
        }
    };
    let present: Vec<&Compared> = COMPARED
        .iter()
        .filter(|k| median(k.odb, k.scenario).is_some())
        .collect();
    println!(
        "\nodb-index beside gix-odb 0.87 and git, the same work per id (median ns per lookup; ratio = odb-index / peer,\n\
         < 1 is faster; measured side by side in this run, so the ratio holds under load):"
    );
    if present.is_empty() {
        println!("  no row of this table was measured in this run");
        return;
    }
    println!(
        "  {:<31} {:<36} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "odb-index arm", "odb-index", "gix 0.87", "ratio", "git", "ratio"
    );
    // A difference of two wall times (the process rows) can come out below zero on a small input: `<0`.
    let ns = |x: Option<f64>| match x {
        None => "-".into(),
        Some(v) if v < 0.0 => "<0".into(),
        Some(v) => format!("{v:.1}"),
    };
    for k in present {
        let odb = median(k.odb, k.scenario);
        let gix = median(k.gix, k.scenario);
        let git = median(k.git, k.scenario);
        let ratio = |p: Option<f64>| match (odb, p) {
            (Some(a), Some(b)) if a >= 0.0 && b > 0.0 => crate::targets::fig(a / b, "x"),
            _ => "-".into(),
        };
        let arm = row(rows, k.scenario, k.odb).map_or(k.odb, |r| r.arm.as_str());
        println!(
            "  {:<31} {:<36} {:>9} {:>9} {:>9} {:>9} {:>9}",
            k.label,
            arm,
            ns(odb),
            ns(gix),
            ratio(gix),
            ns(git),
            ratio(git)
        );
    }
    println!(
        "  In-process arms: interleaved runs in this process, median ns per lookup (gix-odb 0.87: Find::contains).\n  \
         git only where it does the same work per id as the odb-index arm: the batch row, every object of the\n  \
         history in rev-list order, type and size read and a line printed by each (adapter info_many, gix-odb\n  \
         try_header, `git cat-file --batch-check --buffer`), a process each, (wall over every id - wall over none)\n  \
         / ids, median of interleaved runs. git's per-object answer against an in-process lookup is not shown.\n  \
         `-`: no comparable row. {} (the ratios are side by side; the ns move with the load).",
        crate::targets::LoadSampler::describe()
    );
}

/// The chart's bars: every row with a median in ns per lookup (not the open and build rows, in ms).
fn bars(rows: &[Row]) -> Vec<(String, f64)> {
    rows.iter()
        .filter(|r| {
            !r.scenario.starts_with("cold-load-")
                && !r.scenario.starts_with("open-first-miss")
                && r.scenario != "filter-build"
        })
        .filter_map(|r| Some((format!("{}  {}", r.scenario, r.arm), r.ns_median?)))
        .filter(|(_, v)| *v > 0.0)
        .collect()
}

/// A horizontal bar chart (log scale) of every row with a median in ns.
pub fn svg(rows: &[Row], path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let bars = bars(rows);
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
