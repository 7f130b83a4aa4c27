//! Scenario 8: real history (the cargo registry's sources).

use super::*;

/// Misses (cached and fresh ids) and random hits on a repository with real history: one commit per crate
/// directory of the cargo registry's sources, imported with `git fast-import`.
pub(super) fn real(dir: &Path, misses: &Ids, fresh: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    let Some(src) = fixture::registry_src() else {
        eprintln!("bench: no cargo registry sources: real-history arm not measured");
        return Ok(vec![Row {
            note: "no $CARGO_HOME/registry/src: not measured".into(),
            ..Row::new("miss-real", "-")
        }]);
    };
    eprintln!(
        "bench: importing up to {} MB of {} with git fast-import",
        plan.real_cap >> 20,
        src.display()
    );
    let (objects, files) = fixture::real_history(dir, &src, plan.real_cap)?;
    let hits = present(&objects, 8)?;
    let note = format!(
        "{} objects ({files} files of {}, one commit per crate)",
        hits.len(),
        src.display()
    );
    let mut arms = open_arms(&[Kind::OdbProbe, Kind::OdbNone, Kind::Gix087], &objects)?;
    let mut rows = measure(
        "miss-real",
        &mut arms,
        misses,
        plan.misses,
        plan.runs,
        Expect::NoneFound,
    )?;
    rows.extend(measure_fresh(
        "miss-real-fresh",
        &mut arms,
        fresh,
        plan.misses,
        plan.runs,
    )?);
    rows.extend(measure(
        "hit-real-random",
        &mut arms,
        &hits,
        plan.hits.min(hits.len()),
        plan.runs,
        Expect::AllFound,
    )?);
    for r in rows.iter_mut() {
        if r.note.is_empty() {
            r.note.clone_from(&note);
        }
    }
    rows.push(git::row("miss-real", &objects, &misses.oids, 0, plan.runs));
    let n = hits.len();
    rows.push(git::row(
        "hit-real-random",
        &objects,
        &hits.oids,
        n,
        plan.runs,
    ));
    Ok(rows)
}
