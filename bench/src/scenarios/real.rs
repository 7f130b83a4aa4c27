//! Scenario 8: a history (commits, trees and blobs, generated and imported with `git fast-import`).

use super::*;

/// Misses (cached and fresh ids) and random hits on a repository with a history of its own
/// ([`fixture::history`]: a generated project's commits, imported with `git fast-import`).
pub(super) fn real(dir: &Path, misses: &Ids, fresh: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    eprintln!(
        "bench: writing a history of {} commits with git fast-import",
        plan.real_commits
    );
    let (objects, counted) = fixture::history(dir, plan.real_commits, 8)?;
    let hits = present(&objects, 8)?;
    let note = format!(
        "{counted} objects ({} commits of a generated project)",
        plan.real_commits
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
    Ok(rows)
}
