//! Scenario 1's misses on the one-pack fixture, the probe floors, and three objects directories.

use super::*;

/// Misses and syscalls per miss with three objects directories (the one-pack fixture as an alternate of a small
/// repository, and a third).
pub(super) fn three_dirs(objects: &Path, misses: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    let tmp = fixture::TempDir::new("bench-alternates")?;
    let own = fixture::three_dirs(tmp.path(), objects)?;
    let kinds = [Kind::OdbDefault, Kind::OdbOnMissProbe, Kind::OdbProbe];
    let mut arms = open_arms(&kinds, &own)?;
    let mut rows = measure(
        "miss-3dirs",
        &mut arms,
        misses,
        plan.misses,
        plan.runs,
        Expect::NoneFound,
    )?;
    drop(arms);
    rows.extend(syscalls(
        "syscalls-per-miss-3dirs",
        &own,
        &kinds,
        plan.syscall_misses,
    )?);
    Ok(rows)
}

/// The arms of `miss-1pack-fresh`: the peers without their slow arms (gix-odb 0.87 stays as the peer).
pub(super) fn fresh_1pack_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::OdbNone | Kind::OdbNoneNoFilter | Kind::OdbProbe | Kind::IdxLookup | Kind::Gix087
    )
}

/// Scenario 1's misses: `miss-1pack` on `arms` (cached ids), then `miss-1pack-fresh` on new handles of the
/// arms [`fresh_1pack_kind`] picks (their stores warm; the peers without their slow arms: gix-odb 0.87 stays as
/// the peer).
pub(super) fn one_pack_misses(
    arms: &mut [(Kind, Arm)],
    misses: &Ids,
    fresh: &Ids,
    plan: &Plan,
) -> Result<Vec<Row>, String> {
    let mut rows = measure(
        "miss-1pack",
        arms,
        misses,
        plan.misses,
        plan.runs,
        Expect::NoneFound,
    )?;
    let mut fresh_arms: Vec<(Kind, Arm)> = arms
        .iter()
        .filter(|(k, _)| fresh_1pack_kind(*k))
        .map(|(k, a)| (*k, a.another()))
        .collect();
    for (_, a) in fresh_arms.iter_mut() {
        a.run(misses, misses.len());
    }
    rows.extend(measure_fresh(
        "miss-1pack-fresh",
        &mut fresh_arms,
        fresh,
        plan.misses,
        plan.runs,
    )?);
    Ok(rows)
}

/// `fstatat` relative to an open objects directory and `statx` (std::fs::metadata) of an absolute path, both of
/// a missing loose object.
pub(super) fn floors(objects: &Path, ids: &Ids, n: usize, runs: usize) -> Result<Vec<Row>, String> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let dir = rustix::fs::open(
        objects,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("{}: {e}", objects.display()))?;
    let (rel, abs) = loose_paths(objects, ids);
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    let (mut alloc_a, mut alloc_b) = (0, 0);
    for _ in 0..runs {
        let t = Instant::now();
        for i in 0..n {
            black_box(statat_in_function(&dir, rel[i % rel.len()].as_c_str()));
        }
        c.push(t.elapsed().as_nanos() as f64 / n as f64);
        let before = thread_allocs();
        let t = Instant::now();
        for i in 0..n {
            let r = rustix::fs::statat(
                &dir,
                rel[i % rel.len()].as_c_str(),
                AtFlags::SYMLINK_NOFOLLOW,
            );
            black_box(r.is_ok());
        }
        a.push(t.elapsed().as_nanos() as f64 / n as f64);
        alloc_a += thread_allocs() - before;
        let before = thread_allocs();
        let t = Instant::now();
        for i in 0..n {
            black_box(std::fs::metadata(&abs[i % abs.len()]).is_ok());
        }
        b.push(t.elapsed().as_nanos() as f64 / n as f64);
        alloc_b += thread_allocs() - before;
    }
    eprintln!("bench: syscall floors measured");
    let row = |arm: &str, v: &[f64], allocs: u64, note: &str| {
        let (min, med) = min_median(v);
        Row {
            ns_min: Some(min),
            ns_median: Some(med),
            allocs: Some(allocs as f64 / (n * runs) as f64),
            runs,
            lookups: n,
            note: note.into(),
            ..Row::new("floor-missing-loose", arm)
        }
    };
    Ok(vec![
        row(
            "floor fstatat (relative)",
            &a,
            alloc_a,
            "one fstatat(objects fd, \"xx/yyyy..\")",
        ),
        row(
            "floor fstatat (in a function)",
            &c,
            0,
            "the same fstatat in a non-inlined function called per id",
        ),
        row(
            "floor statx (absolute)",
            &b,
            alloc_b,
            "std::fs::metadata of the absolute path",
        ),
    ])
}

/// The loose paths of `ids`: relative to `objects` (`xx/yyyy..`, for `fstatat`) and absolute.
fn loose_paths(objects: &Path, ids: &Ids) -> (Vec<std::ffi::CString>, Vec<PathBuf>) {
    let rel = ids
        .oids
        .iter()
        .map(|id| {
            let h = id.to_string();
            std::ffi::CString::new(format!("{}/{}", &h[..2], &h[2..])).expect("hex has no NUL")
        })
        .collect();
    let abs = ids
        .oids
        .iter()
        .map(|id| {
            let h = id.to_string();
            objects.join(&h[..2]).join(&h[2..])
        })
        .collect();
    (rel, abs)
}

/// One `fstatat` of a missing loose path, never inlined: the per-call floor of a lookup function that probes.
#[inline(never)]
pub(super) fn statat_in_function(dir: &std::os::fd::OwnedFd, rel: &std::ffi::CStr) -> bool {
    rustix::fs::statat(dir, rel, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
}
