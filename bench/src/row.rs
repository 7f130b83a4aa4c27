//! One line of results (`Row`, with its extra JSON fields): what the scenarios make, and the report and the
//! targets read.

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

    /// The row in one line, as the main job prints it the moment it is measured (the table and the verdicts
    /// follow at the end): scenario, arm, median and minimum ns per lookup, and the note.
    pub fn progress_line(&self) -> String {
        let ns = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"));
        let mut line = format!(
            "row: {} | {} | median {} ns, min {} ns",
            self.scenario,
            self.arm,
            ns(self.ns_median),
            ns(self.ns_min)
        );
        if !self.note.is_empty() {
            line.push_str(" | ");
            line.push_str(&self.note);
        }
        line
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

/// Whether rows are printed to standard output as they are measured ([`shown`]): the main job's table run
/// sets it, so a run that stops (or is stopped) early has printed what it measured.
pub static SHOW_ROWS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `rows`, each printed to standard output first (one [`Row::progress_line`], flushed) when [`SHOW_ROWS`] is set.
pub fn shown(rows: Vec<Row>) -> Vec<Row> {
    if SHOW_ROWS.load(std::sync::atomic::Ordering::Relaxed) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for r in &rows {
            // A closed standard output (`| head`) stops nothing here: the run goes on, as before.
            let _ = writeln!(out, "{}", r.progress_line());
        }
        let _ = out.flush();
    }
    rows
}
