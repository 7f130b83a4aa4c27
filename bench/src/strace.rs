//! `strace -c` summaries: the system calls a piece of work costs, per unit, from two runs that differ only in how
//! many units they do (the batch group's and scenario 7's cost tables).

/// `(syscall, calls)` from a `strace -c` summary.
pub fn parse(text: &str) -> Vec<(String, u64)> {
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

/// The calls per unit of each system call between two summaries (`small`, then `large` with `units` more units of
/// work), those over `floor`, most first, and their total.
pub fn per_unit(small: &str, large: &str, units: f64, floor: f64) -> (f64, Vec<(String, f64)>) {
    let (small, large) = (parse(small), parse(large));
    let mut per: Vec<(String, f64)> = large
        .iter()
        .map(|(name, c2)| {
            let c1 = small.iter().find(|(n1, _)| n1 == name).map_or(0, |x| x.1);
            (name.clone(), (*c2 as f64 - c1 as f64) / units)
        })
        .filter(|(_, v)| *v > floor)
        .collect();
    per.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = per.iter().map(|x| x.1).sum::<f64>().max(0.0);
    (total, per)
}
