//! Scenario 4: 100 packs, without and with a multi-pack-index.

use super::*;

/// The arms of the 100-pack scenarios (`label` `100packs` or `100packs-midx`).
pub(super) fn many_kinds(label: &str) -> Vec<Kind> {
    let mut mk = vec![Kind::OdbProbe, Kind::OdbNone];
    if label == "100packs" {
        mk.push(Kind::OdbNoneNoFilter);
    }
    mk.push(Kind::Gix087);
    mk
}

/// Scenario 4's misses on `arms` (`label` `100packs` or `100packs-midx`): `miss-{label}` (cached ids), and for
/// `100packs` `miss-100packs-fresh` on the same warm arms.
///
/// `miss-100packs` and `miss-100packs-fresh` run as many lookups a run as the one-pack rows, their ratios to
/// which are targets: a run's first misses refill the caches the arm before it evicted (the filter's lines, each
/// pack's index), a cost per run, not per miss, which 10 000 lookups a run (`many_misses`) left at about 5-7 ns
/// a miss against 0.5-0.7 over 100 000 (docs/BENCHMARKS.md, "The 100-pack miss with fresh ids").
pub(super) fn many_pack_misses(
    label: &str,
    arms: &mut [(Kind, Arm)],
    misses: &Ids,
    fresh: &Ids,
    plan: &Plan,
) -> Result<Vec<Row>, String> {
    let n = if label == "100packs" {
        plan.misses
    } else {
        plan.many_misses
    };
    let mut rows = measure(
        &format!("miss-{label}"),
        arms,
        misses,
        n,
        plan.runs,
        Expect::NoneFound,
    )?;
    if label == "100packs" {
        rows.extend(measure_fresh(
            "miss-100packs-fresh",
            arms,
            fresh,
            plan.misses,
            plan.runs,
        )?);
    }
    Ok(rows)
}
