//! The scenarios: how each is set up, run interleaved, and summarised into rows.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use odb_index::idx::PackIndex;
use odb_index::{HashKind, LoadMode, ObjectId, Store};

use super::Rng;
use super::arms::{Arm, Ids, Kind, odb_options};
use super::fixture;
use super::git;
use super::report::{Row, Val, add_ratios};
use odb_index_testkit::alloc::thread_allocs;

/// Sizes of one run.
struct Plan {
    runs: usize,
    misses: usize,
    hits: usize,
    many_misses: usize,
    big_objects: usize,
    big_lookups: usize,
    cold_runs: usize,
    /// Runs of each arm of the open + first miss rows (microseconds each).
    open_runs: usize,
    syscall_misses: usize,
    /// Fresh ids: each used once per this many lookups (more than the last-level cache holds).
    fresh_ids: usize,
    /// Bytes of real sources imported for the real-history arm.
    real_cap: u64,
    /// Objects the sparse index claims.
    sparse_objects: u64,
    /// Misses counted by callgrind per arm.
    callgrind_misses: usize,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                runs: 3,
                misses: 2_000,
                hits: 2_000,
                many_misses: 200,
                big_objects: 100_000,
                big_lookups: 5_000,
                cold_runs: 2,
                open_runs: 3,
                syscall_misses: 300,
                fresh_ids: 20_000,
                real_cap: 1 << 20,
                sparse_objects: 1 << 20,
                callgrind_misses: 0,
            }
        } else {
            Plan {
                runs: 15,
                misses: 100_000,
                hits: 200_000,
                many_misses: 10_000,
                big_objects: 1_000_000,
                big_lookups: 200_000,
                cold_runs: 7,
                open_runs: 31,
                syscall_misses: 5_000,
                fresh_ids: 1 << 20,
                real_cap: 48 << 20,
                sparse_objects: 1 << 31,
                callgrind_misses: 100_000,
            }
        }
    }
}

fn odb_kinds() -> Vec<Kind> {
    vec![Kind::OdbProbe, Kind::OdbNone, Kind::OdbCached]
}

/// The default configuration (`Options::default()`), the default before change events (`OnMiss` + probe), and
/// the refresh check alone (`OnMiss`, loose none).
fn default_kinds() -> [Kind; 3] {
    [Kind::OdbDefault, Kind::OdbOnMissProbe, Kind::OdbOnMissNone]
}

/// Misses and syscalls per miss with three objects directories (the one-pack fixture as an alternate of a small
/// repository, and a third).
fn three_dirs(objects: &Path, misses: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
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

fn all_kinds() -> Vec<Kind> {
    let mut k = odb_kinds();
    k.push(Kind::Gix083);
    k.push(Kind::Gix087);
    k
}

fn min_median(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let med = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    (s[0], med)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    AllFound,
    NoneFound,
}

/// Run `arms` round-robin, `runs` times each, `n` lookups of `ids` per run; one row per arm.
fn measure(
    scenario: &str,
    arms: &mut [(Kind, Arm)],
    ids: &Ids,
    n: usize,
    runs: usize,
    expect: Expect,
) -> Result<Vec<Row>, String> {
    // Warm up: load every index, settle every handle's snapshot, fault in the pages.
    for (kind, a) in arms.iter_mut() {
        a.run(ids, ids.len().min(n));
        if expect == Expect::NoneFound {
            settle_filter(*kind, a, ids);
        }
    }
    let want = if expect == Expect::AllFound { n } else { 0 };
    timed_runs(scenario, arms, n, runs, want, "", |a| a.run(ids, n))
}

/// The timing loop shared by [`measure`] and [`measure_fresh`]: `runs` rounds, each arm once per round
/// (round-robin), `lookup` doing `n` lookups on an arm and returning how many were found, which must be `want`.
/// One row per arm: min and median ns per lookup, allocations per lookup.
fn timed_runs(
    scenario: &str,
    arms: &mut [(Kind, Arm)],
    n: usize,
    runs: usize,
    want: usize,
    note: &str,
    mut lookup: impl FnMut(&mut Arm) -> usize,
) -> Result<Vec<Row>, String> {
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); arms.len()];
    let mut allocs: Vec<u64> = vec![0; arms.len()];
    for run in 0..runs {
        for (i, (kind, a)) in arms.iter_mut().enumerate() {
            let before = thread_allocs();
            let t = Instant::now();
            let found = black_box(lookup(a));
            let dt = t.elapsed();
            allocs[i] += thread_allocs() - before;
            if found != want {
                return Err(format!(
                    "{scenario}: {} found {found} of {n} ids, expected {want}",
                    kind.name()
                ));
            }
            ns[i].push(dt.as_nanos() as f64 / n as f64);
        }
        eprintln!(
            "bench: {scenario}: run {}/{runs} of {} arms done",
            run + 1,
            arms.len()
        );
    }
    Ok(arms
        .iter()
        .enumerate()
        .map(|(i, (kind, _))| {
            let (min, med) = min_median(&ns[i]);
            Row {
                ns_min: Some(min),
                ns_median: Some(med),
                allocs: Some(allocs[i] as f64 / (n * runs) as f64),
                runs,
                lookups: n,
                note: note.to_owned(),
                ..Row::new(scenario, kind.name())
            }
        })
        .collect())
}

/// Miss until the arm's store has built its miss filter (`MissFilterMode::Auto` builds it after a number of
/// misses proportional to the ids it covers), and at least 4 096 times (past the default's deferral of change
/// events, 2 048 misses), so that the timed runs measure the steady state.
fn settle_filter(kind: Kind, a: &mut Arm, ids: &Ids) {
    a.run(ids, 4096);
    if kind == Kind::OdbNoneNoFilter {
        return;
    }
    let mut done = 4096usize;
    while a
        .store()
        .is_some_and(|s| !s.packs().is_empty() && s.miss_filter().is_none())
        && done < 4_000_000
    {
        a.run(ids, 4096);
        done += 4096;
    }
}

/// Like [`measure`] with misses of fresh ids: each run of each arm takes the next `n` ids of `fresh` (an array
/// larger than the last-level cache), so no id (and no index line it touches) is reused within
/// `fresh.len()` lookups. The arms are already warm (every index loaded, the miss filter built).
fn measure_fresh(
    scenario: &str,
    arms: &mut [(Kind, Arm)],
    fresh: &Ids,
    n: usize,
    runs: usize,
) -> Result<Vec<Row>, String> {
    let n = n.min(fresh.len());
    let mut cursor = 0usize;
    let note = format!(
        "fresh ids: {} ids, each used once per {} lookups",
        fresh.len(),
        fresh.len()
    );
    timed_runs(scenario, arms, n, runs, 0, &note, |a| {
        if cursor + n > fresh.len() {
            cursor = 0;
        }
        let found = a.run_from(fresh, cursor, n);
        cursor += n;
        found
    })
}

/// The miss filter of each odb-index arm's store, as rows (ids, bytes per id, build time).
fn filter_rows(scenario: &str, arms: &[(Kind, Arm)]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (kind, a) in arms {
        let Some(f) = a.store().and_then(|s| s.miss_filter()) else {
            continue;
        };
        let per_id = f.bytes as f64 / f.ids.max(1) as f64;
        let build_ms_per_m = f.build_time.as_secs_f64() * 1e3 * 1e6 / f.ids.max(1) as f64;
        rows.push(
            Row {
                note: format!(
                    "miss filter of the store: {} ids of {} packs, {} bytes ({per_id:.3} B/id), built in {:.2} ms ({build_ms_per_m:.1} ms per million ids)",
                    f.ids,
                    f.packs,
                    f.bytes,
                    f.build_time.as_secs_f64() * 1e3
                ),
                ..Row::new(scenario, kind.name())
            }
            .with("filter_ids", Val::Num(f.ids as f64))
            .with("filter_bytes_per_id", Val::Num(per_id))
            .with("filter_build_ms_per_million_ids", Val::Num(build_ms_per_m)),
        );
        break;
    }
    rows
}

fn open_arms(kinds: &[Kind], objects: &Path) -> Result<Vec<(Kind, Arm)>, String> {
    kinds
        .iter()
        .map(|&k| Arm::open(k, objects).map(|a| (k, a)))
        .collect()
}

fn absent(n: usize, seed: u64) -> Ids {
    let mut rng = Rng::new(seed);
    Ids::new((0..n).map(|_| rng.oid()).collect())
}

/// Every id in the packs of `objects`, in random order.
fn present(objects: &Path, seed: u64) -> Result<Ids, String> {
    let store = Store::open(objects, odb_options(Kind::OdbNone)).map_err(|e| e.to_string())?;
    let mut ids = Vec::new();
    for (_, idx) in store.packs() {
        let i = PackIndex::open(&idx, HashKind::Sha1).map_err(|e| e.to_string())?;
        ids.extend(i.iter().map(|(id, _)| id));
    }
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Err(format!("{}: no packed objects", objects.display()));
    }
    Rng::new(seed).shuffle(&mut ids);
    Ok(Ids::new(ids))
}

/// Whether `objects` holds exactly one pack (then the bare-index arms run too).
fn single_pack(objects: &Path) -> bool {
    Store::open(objects, odb_options(Kind::OdbNone))
        .map(|s| s.packs().len() == 1)
        .unwrap_or(false)
}

/// The arms of `miss-1pack-fresh`: the peers without their slow arms (gix-odb 0.87 stays as the peer).
fn fresh_1pack_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::OdbNone | Kind::OdbNoneNoFilter | Kind::OdbProbe | Kind::IdxLookup | Kind::Gix087
    )
}

/// The arms of the 100-pack scenarios (`label` `100packs` or `100packs-midx`).
fn many_kinds(label: &str) -> Vec<Kind> {
    let mut mk = vec![Kind::OdbProbe, Kind::OdbNone];
    if label == "100packs" {
        mk.push(Kind::OdbNoneNoFilter);
    }
    mk.push(Kind::Gix087);
    mk
}

/// Hidden `--ratio-rows MANY`: only the rows of the two 100-pack targets, `miss-1pack` and `miss-1pack-fresh` (on
/// `objects`), `miss-100packs` and `miss-100packs-fresh` (on `many`, the 100-pack objects directory
/// `--make-fixture` prints), measured as [`all`] measures them (`quick`: as a quick run does), except that the
/// one-pack rows run only the arms of `miss-1pack-fresh`. Then their ratios and the targets (the others "not
/// measured").
pub fn ratio_rows(objects: &Path, many: &Path, quick: bool) -> Result<Vec<Row>, String> {
    let plan = Plan::new(quick);
    let misses = absent(4096, 1);
    let fresh = absent(plan.fresh_ids, 11);
    let mut one: Vec<Kind> = all_kinds()
        .into_iter()
        .chain([Kind::OdbNoneNoFilter])
        .filter(|&k| fresh_1pack_kind(k))
        .collect();
    if single_pack(objects) {
        one.push(Kind::IdxLookup);
    }
    let mut arms = open_arms(&one, objects)?;
    let mut rows = one_pack_misses(&mut arms, &misses, &fresh, &plan)?;
    drop(arms);
    let mut arms = open_arms(&many_kinds("100packs"), many)?;
    rows.extend(many_pack_misses(
        "100packs", &mut arms, &misses, &fresh, &plan,
    )?);
    add_ratios(&mut rows);
    Ok(rows)
}

/// Scenario 1's misses: `miss-1pack` on `arms` (cached ids), then `miss-1pack-fresh` on new handles of the
/// arms [`fresh_1pack_kind`] picks (their stores warm; the peers without their slow arms: gix-odb 0.87 stays as
/// the peer).
fn one_pack_misses(
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

/// Scenario 4's misses on `arms` (`label` `100packs` or `100packs-midx`): `miss-{label}` (cached ids), and for
/// `100packs` `miss-100packs-fresh` on the same warm arms.
///
/// `miss-100packs` and `miss-100packs-fresh` run as many lookups a run as the one-pack rows, their ratios to
/// which are targets: a run's first misses refill the caches the arm before it evicted (the filter's lines, each
/// pack's index), a cost per run, not per miss, which 10 000 lookups a run (`many_misses`) left at about 5-7 ns
/// a miss against 0.5-0.7 over 100 000 (docs/BENCHMARKS.md, "The 100-pack miss with fresh ids").
fn many_pack_misses(
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

/// All scenarios. `user_path`: PATH was given (scenarios 4 to 6 still use their own synthetic fixtures).
pub fn all(objects: &Path, user_path: bool, quick: bool) -> Result<Vec<Row>, String> {
    let _ = user_path;
    let plan = Plan::new(quick);
    let mut rows = Vec::new();
    let kinds = all_kinds();
    let misses = absent(4096, 1);
    // Fresh ids for the fresh-id scenarios (a different seed: none of the cached misses).
    let fresh = absent(plan.fresh_ids, 11);
    rows.push(machine());

    // Floors: the bare cost of one probe of a missing loose path, inline in the timing loop and in a function.
    rows.extend(floors(objects, &misses, plan.misses, plan.runs)?);

    // 1. Misses on the one-pack fixture. With exactly one pack, the bare index search (no store) is measured
    // too: the difference is what the store adds.
    let mut kinds1 = kinds.clone();
    kinds1.extend([Kind::OdbNoneNoFilter, Kind::OdbProbeBatch]);
    kinds1.extend(default_kinds());
    let one_pack = single_pack(objects);
    if one_pack {
        kinds1.extend([Kind::IdxLookup, Kind::IdxBinary]);
    }
    let mut arms = open_arms(&kinds1, objects)?;
    rows.extend(one_pack_misses(&mut arms, &misses, &fresh, &plan)?);
    rows.push(git::row("miss-1pack", objects, &misses.oids, 0, plan.runs));
    // 2. Hits, ids in random order (a repository given as PATH may have no packs).
    match present(objects, 2) {
        Ok(hits) => {
            rows.extend(measure(
                "hit-1pack-random",
                &mut arms,
                &hits,
                plan.hits,
                plan.runs,
                Expect::AllFound,
            )?);
            let n = hits.len();
            rows.push(git::row(
                "hit-1pack-random",
                objects,
                &hits.oids,
                n,
                plan.runs,
            ));
        }
        Err(e) => rows.push(Row {
            note: format!("not measured: {e}"),
            ..Row::new("hit-1pack-random", "-")
        }),
    }
    rows.extend(filter_rows("filter-1pack", &arms));
    drop(arms);

    // 3. Two threads missing at once.
    // The bare index search, when there is one pack, is the control: it shares nothing between threads.
    let mut tk = vec![Kind::OdbNone, Kind::OdbCached, Kind::OdbProbe];
    tk.push(Kind::Gix087);
    if one_pack {
        tk.push(Kind::IdxLookup);
    }
    rows.extend(two_threads(objects, &tk, &misses, plan.misses, plan.runs)?);

    // 4. 100 packs, without and with a multi-pack-index.
    let tmp = fixture::TempDir::new("bench-synthetic")?;
    eprintln!("bench: building 100 packs (and a copy with a multi-pack-index) with git");
    let (many, many_midx) = fixture::many_packs(tmp.path(), 100, 123)?;
    let many_hits = present(&many, 3)?;
    for (label, dir) in [("100packs", &many), ("100packs-midx", &many_midx)] {
        let mut arms = open_arms(&many_kinds(label), dir)?;
        rows.extend(many_pack_misses(label, &mut arms, &misses, &fresh, &plan)?);
        if label == "100packs" {
            rows.extend(filter_rows("filter-100packs", &arms));
        }
        rows.extend(measure(
            &format!("hit-{label}-random"),
            &mut arms,
            &many_hits,
            plan.hits,
            plan.runs,
            Expect::AllFound,
        )?);
        rows.push(git::row(
            &format!("miss-{label}"),
            dir,
            &misses.oids,
            0,
            plan.runs,
        ));
        let n = many_hits.len();
        rows.push(git::row(
            &format!("hit-{label}-random"),
            dir,
            &many_hits.oids,
            n,
            plan.runs,
        ));
    }

    // 5. A 1 000 000-object index.
    eprintln!(
        "bench: writing a {}-object index with write_idx",
        plan.big_objects
    );
    let mut rng = Rng::new(5);
    let (big, mut big_ids) = fixture::big_index(tmp.path(), plan.big_objects, &mut rng)?;
    let big_name = format!("{}k", plan.big_objects / 1000);
    let big_name = if plan.big_objects == 1_000_000 {
        "1M".to_owned()
    } else {
        big_name
    };
    rows.extend(cold_load(&big, &big_name, &misses, plan.open_runs)?);
    let mut arms = open_arms(
        &[
            Kind::OdbNone,
            Kind::OdbNoneNoFilter,
            Kind::IdxLookup,
            Kind::IdxBinary,
            Kind::Gix087,
        ],
        &big,
    )?;
    rows.extend(measure(
        &format!("miss-{big_name}-index"),
        &mut arms,
        &misses,
        plan.big_lookups,
        plan.runs,
        Expect::NoneFound,
    )?);
    rows.extend(measure_fresh(
        &format!("miss-{big_name}-index-fresh"),
        &mut arms,
        &fresh,
        plan.big_lookups,
        plan.runs,
    )?);
    rows.extend(filter_rows(&format!("filter-{big_name}-index"), &arms));
    rng.shuffle(&mut big_ids);
    rows.extend(filter_build(&big_ids, &fresh, plan.runs.min(5))?);
    big_ids.truncate(plan.big_lookups.max(1));
    rows.extend(measure(
        &format!("hit-{big_name}-index-random"),
        &mut arms,
        &Ids::new(big_ids),
        plan.big_lookups,
        plan.runs,
        Expect::AllFound,
    )?);
    drop(arms);

    // 6. Waiters for an in-flight load, on one pinned core.
    rows.extend(waiters(&big, misses.oids[0], plan.cold_runs)?);

    // 5b. Open + first miss on a sparse index claiming 2^31 objects (a child process, time-limited).
    rows.extend(sparse_open(
        tmp.path(),
        plan.sparse_objects,
        plan.cold_runs.min(3),
    )?);

    // 8. Real history: the cargo registry's sources, one commit per crate.
    rows.extend(real(tmp.path(), &misses, &fresh, &plan)?);
    // 11. Batches: locate_many beside locate, syscalls per miss in a batch, LL misses, the end-to-end front end
    // on the real history just imported (bench/src/batch.rs).
    rows.extend(super::batch::rows(tmp.path(), objects, quick)?);
    drop(tmp);

    // 7. Syscalls per miss (strace).
    let mut sk = kinds.clone();
    sk.extend(default_kinds());
    rows.extend(syscalls(
        "syscalls-per-miss",
        objects,
        &sk,
        plan.syscall_misses,
    )?);
    // 10. Three objects directories (two alternates): the default configuration, against the stat-and-probe
    // one and `Never`.
    rows.extend(three_dirs(objects, &misses, &plan)?);
    // 9. Instructions per miss (callgrind), full runs only.
    if plan.callgrind_misses > 0 {
        rows.extend(instructions(objects, plan.callgrind_misses)?);
    }

    add_ratios(&mut rows);
    Ok(rows)
}

/// Misses (cached and fresh ids) and random hits on a repository with real history: one commit per crate
/// directory of the cargo registry's sources, imported with `git fast-import`.
fn real(dir: &Path, misses: &Ids, fresh: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
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

/// The split-block Bloom filter (the store's) and a binary fuse filter (xorf's `BinaryFuse8`) over the same
/// ids: build time per million ids, bytes per id, false-positive rate over fresh absent ids, ns per query.
fn filter_build(ids: &[ObjectId], fresh: &Ids, runs: usize) -> Result<Vec<Row>, String> {
    use crate::bloom::SplitBlockBloom;
    use xorf::Filter as _;
    let n = ids.len();
    let key = |id: &[u8]| u64::from_le_bytes(id[..8].try_into().expect("8 bytes"));
    let (mut sb_build, mut bf_build) = (Vec::new(), Vec::new());
    let mut sb = None;
    let mut bf = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let f = SplitBlockBloom::from_ids(n, ids.iter().map(|id| id.as_bytes()));
        sb_build.push(t.elapsed().as_nanos() as f64);
        sb = Some(f);
        let t = Instant::now();
        // Binary fuse filters want distinct keys: sort and deduplicate first (part of the build).
        let mut keys: Vec<u64> = ids.iter().map(|id| key(id.as_bytes())).collect();
        keys.sort_unstable();
        keys.dedup();
        let f = xorf::BinaryFuse8::try_from(&keys).map_err(|e| format!("BinaryFuse8: {e}"))?;
        bf_build.push(t.elapsed().as_nanos() as f64);
        bf = Some(f);
    }
    let (sb, bf) = (sb.expect("built"), bf.expect("built"));
    // False positives and query time over the fresh absent ids.
    let t = Instant::now();
    let sb_fp = fresh
        .raw
        .iter()
        .filter(|id| sb.may_contain(black_box(&id[..])))
        .count();
    let sb_ns = t.elapsed().as_nanos() as f64 / fresh.len() as f64;
    let t = Instant::now();
    let bf_fp = fresh
        .raw
        .iter()
        .filter(|id| bf.contains(&key(black_box(&id[..]))))
        .count();
    let bf_ns = t.elapsed().as_nanos() as f64 / fresh.len() as f64;
    let present_ok = ids.iter().all(|id| sb.may_contain(id.as_bytes()))
        && ids.iter().all(|id| bf.contains(&key(id.as_bytes())));
    if !present_ok {
        return Err("filter-build: a filter missed an inserted id".into());
    }
    let row = |arm: &str, build: &[f64], bytes: usize, fp: usize, q: f64| {
        let (bmin, bmed) = min_median(build);
        let per_m = bmed / 1e6 * 1e6 / n as f64;
        let rate = fp as f64 / fresh.len() as f64;
        Row {
            ns_min: Some(q),
            ns_median: Some(q),
            runs: build.len(),
            lookups: fresh.len(),
            note: format!(
                "{n} ids: build {:.1} ms median (min {:.1}; {per_m:.1} ms per million ids), {:.3} B/id, {:.3}% false positives; ns columns: one query of a fresh absent id",
                bmed / 1e6,
                bmin / 1e6,
                bytes as f64 / n as f64,
                100.0 * rate
            ),
            ..Row::new("filter-build", arm)
        }
        .with("build_ms_per_million_ids", Val::Num(per_m))
        .with("bytes_per_id", Val::Num(bytes as f64 / n as f64))
        .with("false_positive_rate", Val::Num(rate))
    };
    eprintln!("bench: filter-build done");
    Ok(vec![
        row(
            "split-block Bloom (store)",
            &sb_build,
            sb.bytes(),
            sb_fp,
            sb_ns,
        ),
        row(
            "binary fuse 8 (xorf)",
            &bf_build,
            bf.fingerprints.len() + std::mem::size_of_val(&bf),
            bf_fp,
            bf_ns,
        ),
    ])
}

/// Open + first miss on a sparse index claiming `objects` objects, in a child process (this binary's hidden
/// `--open-first-miss` mode) killed after 5 s; the child reports its time and its peak resident memory.
fn sparse_open(dir: &Path, objects: u64, runs: usize) -> Result<Vec<Row>, String> {
    let sparse = fixture::sparse_index(dir, objects)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let name = if objects == 1 << 31 {
        "2^31".to_owned()
    } else {
        format!("{objects}")
    };
    let (mut ns, mut rss) = (Vec::new(), Vec::new());
    let mut killed = false;
    for _ in 0..runs.max(1) {
        let mut child = std::process::Command::new(&exe)
            .arg("--open-first-miss")
            .arg(&sparse)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let t = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
                break Some(st);
            }
            if t.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let Some(status) = status else {
            killed = true;
            break;
        };
        let mut out = String::new();
        if let Some(mut o) = child.stdout.take() {
            use std::io::Read as _;
            let _ = o.read_to_string(&mut out);
        }
        let v: Vec<f64> = out
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if !status.success() || v.len() != 2 {
            return Err(format!(
                "--open-first-miss on the sparse index: {status}, {out:?}"
            ));
        }
        ns.push(v[0]);
        rss.push(v[1]);
    }
    let _ = std::fs::remove_dir_all(dir.join("sparse"));
    eprintln!("bench: open-first-miss-sparse done");
    let scenario = format!("open-first-miss-sparse-{name}-index");
    if killed {
        return Ok(vec![
            Row {
                runs: ns.len(),
                note: "Store::open + first miss did not finish within 5 s: killed".into(),
                ..Row::new(&scenario, "odb-index loose=none")
            }
            .with("killed", Val::Bool(true))
            .with("seconds", Val::Num(5.0)),
        ]);
    }
    let (min, med) = min_median(&ns);
    let (_, rss_med) = min_median(&rss);
    Ok(vec![Row {
        ns_min: Some(min),
        ns_median: Some(med),
        runs: ns.len(),
        lookups: 1,
        note: format!(
            "child process: Store::open + first lookup (a miss) {:.3} ms median, peak RSS {:.1} MB (the process's, whole)",
            med / 1e6,
            rss_med / 1024.0
        ),
        ..Row::new(&scenario, "odb-index loose=none")
    }
    .with("killed", Val::Bool(false))
    .with("peak_rss_mb", Val::Num(rss_med / 1024.0))])
}

/// The hidden `--open-first-miss OBJECTS` mode: open a store, look up one absent id, print the nanoseconds it
/// took and the process's peak resident set size in KiB (`VmHWM`, Linux). With `midx_checksum` (`--midx-checksum`)
/// the store is opened with `Options::midx_checksum(true)`, so a multi-pack-index is hashed whole when it loads.
pub fn open_first_miss(objects: &Path, midx_checksum: bool) -> Result<(), String> {
    let id = absent(1, 1).oids[0];
    let t = Instant::now();
    let options = odb_options(Kind::OdbNone).midx_checksum(midx_checksum);
    let store = Store::open(objects, options).map_err(|e| e.to_string())?;
    let found = store.handle().contains(&id).map_err(|e| e.to_string())?;
    let dt = t.elapsed();
    if found {
        return Err("an absent id was found".into());
    }
    // The peak RSS of this process image: `VmHWM` (reset by execve). `getrusage`'s `ru_maxrss` is preserved
    // across execve on Linux, so in a child of the bench it would report the parent's peak.
    let hwm_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .ok_or("no VmHWM in /proc/self/status")?;
    println!("{} {}", dt.as_nanos(), hwm_kib);
    Ok(())
}

/// The hidden `--store-filter-build OBJECTS` mode: open a store whose miss filter is built at the first miss
/// (`MissFilterMode::Eager`), miss a few times, print the filter's build time in nanoseconds (the store's own build:
/// every id of every loaded `.idx` inserted, each fan-out bucket's order checked on the way) and its ids.
pub fn store_filter_build(objects: &Path) -> Result<(), String> {
    let options = odb_options(Kind::OdbNone).miss_filter(odb_index::MissFilterMode::Eager);
    let store = Store::open(objects, options).map_err(|e| e.to_string())?;
    let mut h = store.handle();
    // The first miss loads the indices; a miss in the settled map builds the filter.
    for id in absent(4, 1).oids {
        if h.contains(&id).map_err(|e| e.to_string())? {
            return Err("an absent id was found".into());
        }
    }
    let f = store.miss_filter().ok_or("no miss filter was built")?;
    println!("{} {}", f.build_time.as_nanos(), f.ids);
    Ok(())
}

/// The hidden `--open-first-miss-loop N [--arm A] OBJECTS` mode. With an arm: N rounds of the
/// `cold-load-1M-index` row's body (open a store, miss once, stores dropped 32 at a time, after the clock) in this process, page
/// cache warm; prints the median and minimum time and the minor page faults per round (`getrusage`). For
/// callgrind (`--toggle-collect='*open_first_miss_body*'`) and `strace -c -f` (divide by N). Without: the
/// `cold-load-*` rows themselves, N runs, printed as the bench prints them.
pub fn open_first_miss_loop(kind: Option<Kind>, objects: &Path, n: usize) -> Result<(), String> {
    let id = absent(1, 1).oids[0];
    let Some(kind) = kind else {
        for r in cold_load(objects, "open-first-miss-loop", &absent(1, 1), n)? {
            eprintln!(
                "{} {}: {:.1} us median, {:.1} us min ({} runs)",
                r.scenario,
                r.arm,
                r.ns_median.unwrap_or(f64::NAN) / 1e3,
                r.ns_min.unwrap_or(f64::NAN) / 1e3,
                r.runs
            );
        }
        return Ok(());
    };
    let mut ns = Vec::with_capacity(n);
    let mut faults = 0;
    // Stores are dropped 32 at a time, outside the clock (as the row keeps its inotify stores open).
    let mut kept = Vec::new();
    for _ in 0..n {
        if kept.len() == 32 {
            kept.clear();
        }
        let before = minor_faults();
        let t = Instant::now();
        let (store, found) = open_first_miss_body(kind, objects, &id)?;
        ns.push(t.elapsed().as_nanos() as f64);
        faults += minor_faults() - before;
        kept.push(store);
        if found {
            return Err("an absent id was found".into());
        }
    }
    let (min, med) = min_median(&ns);
    eprintln!(
        "{n} rounds of open + first miss with {}: {:.1} us median, {:.1} us min, {:.1} minor faults per round",
        kind.name(),
        med / 1e3,
        min / 1e3,
        faults as f64 / n.max(1) as f64
    );
    Ok(())
}

/// One open + first miss; the store is returned, to be dropped after the clock as in the bench row.
#[inline(never)]
fn open_first_miss_body(
    kind: Kind,
    objects: &Path,
    id: &ObjectId,
) -> Result<(std::sync::Arc<Store>, bool), String> {
    let store = Store::open(objects, odb_options(kind)).map_err(|e| e.to_string())?;
    let found = store.handle().contains(id).map_err(|e| e.to_string())?;
    Ok((store, found))
}

/// Minor page faults of this process so far (`getrusage(RUSAGE_SELF)`).
fn minor_faults() -> i64 {
    // SAFETY: getrusage writes a `rusage` into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_SELF is always accepted.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return 0;
    }
    ru.ru_minflt as i64
}

/// Instructions per miss from callgrind (`valgrind --tool=callgrind --toggle-collect=*only_miss_loop_body*`
/// on this binary's `--only-miss-loop N --arm A`), skipped with a note if valgrind is missing.
fn instructions(objects: &Path, n: usize) -> Result<Vec<Row>, String> {
    let ok = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("bench: valgrind is not installed: instructions per miss not measured");
        return Ok(vec![Row {
            note: "valgrind is not installed: not measured".into(),
            ..Row::new("instructions-per-miss", "all")
        }]);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for k in [
        Kind::OdbNone,
        Kind::OdbNoneNoFilter,
        Kind::OdbProbe,
        Kind::OdbProbeBatch,
        Kind::OdbOnMissNone,
        Kind::OdbDefault,
        Kind::Gix087,
    ] {
        let out_file = std::env::temp_dir().join(format!(
            "odb-index-callgrind-{}-{}.out",
            std::process::id(),
            k.flag()
        ));
        let out = std::process::Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out_file.display()))
            .arg("--toggle-collect=*only_miss_loop_body*")
            .arg(&exe)
            .args(["--only-miss-loop", &n.to_string(), "--arm", k.flag()])
            .arg(objects)
            .output()
            .map_err(|e| format!("valgrind: {e}"))?;
        let _ = std::fs::remove_file(&out_file);
        let text = String::from_utf8_lossy(&out.stderr);
        let collected = text
            .lines()
            .find_map(|l| l.split("Collected :").nth(1))
            .and_then(|x| x.trim().parse::<f64>().ok());
        let Some(c) = collected.filter(|_| out.status.success()) else {
            return Err(format!("callgrind of --arm {} failed: {text}", k.flag()));
        };
        let per = c / n as f64;
        eprintln!("bench: instructions-per-miss: {} done", k.name());
        rows.push(
            Row {
                runs: 1,
                lookups: n,
                note: format!("{per:.1} instructions per miss (callgrind, {n} misses)"),
                ..Row::new("instructions-per-miss", k.name())
            }
            .with("instructions_per_miss", Val::Num(per)),
        );
    }
    Ok(rows)
}

/// What the figures were measured on: CPUs, model, load average before the run (other processes skew them).
fn machine() -> Row {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    Row {
        note: format!("{cpus} CPUs, {model}, load average {load} at start"),
        ..Row::new("machine", "-")
    }
    .with("cpus", Val::Num(cpus as f64))
    .with("model", Val::Str(model))
    .with("loadavg", Val::Str(load))
}

/// `fstatat` relative to an open objects directory and `statx` (std::fs::metadata) of an absolute path, both of
/// a missing loose object.
fn floors(objects: &Path, ids: &Ids, n: usize, runs: usize) -> Result<Vec<Row>, String> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let dir = rustix::fs::open(
        objects,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| format!("{}: {e}", objects.display()))?;
    let rel: Vec<std::ffi::CString> = ids
        .oids
        .iter()
        .map(|id| {
            let h = id.to_string();
            std::ffi::CString::new(format!("{}/{}", &h[..2], &h[2..])).expect("hex has no NUL")
        })
        .collect();
    let abs: Vec<PathBuf> = ids
        .oids
        .iter()
        .map(|id| {
            let h = id.to_string();
            objects.join(&h[..2]).join(&h[2..])
        })
        .collect();
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

/// One `fstatat` of a missing loose path, never inlined: the per-call floor of a lookup function that probes.
#[inline(never)]
fn statat_in_function(dir: &std::os::fd::OwnedFd, rel: &std::ffi::CStr) -> bool {
    rustix::fs::statat(dir, rel, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

/// Aggregate throughput of two threads missing at once vs one thread, per arm kind.
fn two_threads(
    objects: &Path,
    kinds: &[Kind],
    ids: &Ids,
    n: usize,
    runs: usize,
) -> Result<Vec<Row>, String> {
    // Two warm handles per kind, reused by every run.
    let mut pairs = Vec::new();
    for &k in kinds {
        let mut a = Arm::open(k, objects)?;
        let mut b = a.another();
        a.run(ids, ids.len());
        b.run(ids, ids.len());
        pairs.push((k, a, b));
    }
    let mut single: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    let mut dual: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    // Each thread times itself; the aggregate wall time is from the first start to the last end.
    let timed = |a: &mut Arm| {
        let t = Instant::now();
        black_box(a.run(ids, n));
        (t, Instant::now())
    };
    for run in 0..runs {
        for (i, (_, a, b)) in pairs.iter_mut().enumerate() {
            let (s, e) = std::thread::scope(|sc| sc.spawn(|| timed(a)).join())
                .map_err(|_| "bench thread panicked".to_owned())?;
            single[i].push((e - s).as_nanos() as f64 / n as f64);
            let (r1, r2) = std::thread::scope(|sc| {
                let h1 = sc.spawn(|| timed(a));
                let h2 = sc.spawn(|| timed(b));
                (h1.join(), h2.join())
            });
            let ((s1, e1), (s2, e2)) = (
                r1.map_err(|_| "bench thread panicked".to_owned())?,
                r2.map_err(|_| "bench thread panicked".to_owned())?,
            );
            let wall = e1.max(e2) - s1.min(s2);
            dual[i].push(wall.as_nanos() as f64 / (2 * n) as f64);
        }
        eprintln!(
            "bench: miss-2threads: run {}/{runs} of {} arms done",
            run + 1,
            kinds.len()
        );
    }
    let mut rows = Vec::new();
    for (i, &k) in kinds.iter().enumerate() {
        let (smin, smed) = min_median(&single[i]);
        let (dmin, dmed) = min_median(&dual[i]);
        let ratio = smed / dmed;
        let ratio_min = smin / dmin;
        rows.push(Row {
            ns_min: Some(dmin),
            ns_median: Some(dmed),
            runs,
            lookups: 2 * n,
            note: format!(
                "aggregate of 2 threads; 1 thread {smed:.1} ns (min {smin:.1}); throughput {ratio:.2}x (of mins {ratio_min:.2}x)"
            ),
            ..Row::new("miss-2threads", k.name())
        }
        .with("ns_per_lookup_1thread_median", Val::Num(smed))
        .with("ns_per_lookup_1thread_min", Val::Num(smin))
        .with("ratio_vs_1thread", Val::Num(ratio))
        .with("ratio_vs_1thread_of_mins", Val::Num(ratio_min)));
    }
    Ok(rows)
}

/// Open a store on the big index and do the first lookup (a miss, so the index must be loaded).
///
/// Each arm's runs are taken one after the other (not interleaved with the other arms' runs), and a store with
/// an inotify descriptor (the default arm) is dropped only after its arm's last run: what a run measures is
/// then its own open and miss, not what the run before it left behind. Interleaved, the `load=read` arm's
/// 28 MB copy emptied the caches before each `loose=none` run, and closing an inotify descriptor waits for an
/// SRCU grace period (`fsnotify_destroy_group`) and queues more kernel work (the mark connectors' reaper) that
/// ran inside the next run's window: 2-3x the same code's time measured alone (docs/BENCHMARKS.md, "Open +
/// first miss").
fn cold_load(big: &Path, name: &str, ids: &Ids, runs: usize) -> Result<Vec<Row>, String> {
    let arms = [
        odb_options(Kind::OdbNone),
        odb_options(Kind::OdbNone).load(LoadMode::Read),
        odb_options(Kind::OdbDefault),
    ];
    let mut times: [Vec<f64>; 3] = Default::default();
    // Stores kept open until the end, as a program keeps its store: dropping one unmaps its index, work that no
    // open + first miss of a program includes.
    let mut kept = Vec::new();
    // The mapping arms interleaved round-robin, as every other row: a run of each in turn, so they share the
    // load. The `Read` arm (28 MB read and freed a run, milliseconds) after them: run between them, it left the
    // next arm's run 60 us slower (caches and the freed memory's unmapping).
    let order = (0..runs)
        .flat_map(|_| [0, 2])
        .chain(std::iter::repeat_n(1, runs));
    for a in order {
        {
            let (options, out) = (&arms[a], &mut times[a]);
            let t = Instant::now();
            let store = Store::open(big, options.clone()).map_err(|e| e.to_string())?;
            let mut h = store.handle();
            let found = h.contains(&ids.oids[0]).map_err(|e| e.to_string())?;
            out.push(t.elapsed().as_nanos() as f64);
            if found || store.metrics().index_loads != 1 {
                return Err(format!(
                    "cold load: found {found}, {} index loads",
                    store.metrics().index_loads
                ));
            }
            drop(h);
            if options.load == LoadMode::Read {
                // 28 MB a run read into memory: not kept.
                drop(store);
            } else {
                kept.push(store);
            }
        }
    }
    drop(kept);
    let [v, v_read, v_default] = times;
    eprintln!("bench: cold-load-{name}-index done");
    let row = |arm: &str, v: &[f64]| {
        let (min, med) = min_median(v);
        Row {
            ns_min: Some(min),
            ns_median: Some(med),
            runs,
            lookups: 1,
            note: format!(
                "Store::open + first lookup (a miss): {:.2} ms median; page cache warm",
                med / 1e6
            ),
            ..Row::new(&format!("cold-load-{name}-index"), arm)
        }
    };
    Ok(vec![
        row("odb-index loose=none", &v),
        row("odb-index loose=none load=read", &v_read),
        row(Kind::OdbDefault.name(), &v_default),
    ])
}

/// CPU time of the calling thread from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (the scheduler's exact
/// runtime).
fn thread_clock() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// CPU time (user + system) of the calling thread from `getrusage(RUSAGE_THREAD)` (libc: rustix has no
/// `getrusage`).
fn thread_cpu() -> Duration {
    // SAFETY: getrusage writes a `rusage` into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_THREAD is Linux's per-thread usage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Pin the calling thread (and the threads it spawns afterwards) to the first CPU it may run on.
fn pin_to_one_cpu() -> Result<usize, String> {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    let set = sched_getaffinity(None).map_err(|e| format!("sched_getaffinity: {e}"))?;
    let cpu = (0..CpuSet::MAX_CPU)
        .find(|&c| set.is_set(c))
        .ok_or("no CPU in the affinity mask")?;
    let mut one = CpuSet::new();
    one.set(cpu);
    sched_setaffinity(None, &one).map_err(|e| format!("sched_setaffinity: {e}"))?;
    Ok(cpu)
}

/// One thread loads the big index cold (read into memory, so the load takes milliseconds) while three others
/// look up an absent id and must wait for it; all on one pinned core. CPU time per thread from
/// clock_gettime(CLOCK_THREAD_CPUTIME_ID), and from getrusage(RUSAGE_THREAD) beside it.
fn waiters(big: &Path, absent_id: ObjectId, runs: usize) -> Result<Vec<Row>, String> {
    let big = big.to_path_buf();
    std::thread::spawn(move || -> Result<Vec<Row>, String> {
        let cpu = pin_to_one_cpu()?;
        let mut loader_cpu = Vec::new();
        let mut waiter_cpu = Vec::new();
        let mut waiter_wall = Vec::new();
        let mut loader_wall = Vec::new();
        let mut waited = 0usize;
        let mut loader_ru = Vec::new();
        let mut waiter_ru = Vec::new();
        for _ in 0..runs {
            let store = Store::open(&big, odb_options(Kind::OdbNone).load(LoadMode::Read))
                .map_err(|e| e.to_string())?;
            // Waiters start their lookup once the loader has begun loading (the store counts an index
            // load when it starts); polling with sleeps happens before their CPU clocks are read.
            let one = |waiter: bool| {
                let store = store.clone();
                move || {
                    let mut h = store.handle();
                    if !waiter {
                        // The loader runs at nice 19, so the scheduler lets a waking waiter preempt it at once
                        // and the waiters arrive while the load is in flight.
                        // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value.
                        let tid = rustix::thread::gettid();
                        let _ = rustix::process::setpriority_process(Some(tid), 19);
                    }
                    while waiter && store.metrics().index_loads == 0 {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                    let (c0, r0) = (thread_clock(), thread_cpu());
                    let t = Instant::now();
                    let r = h.contains(&absent_id);
                    (thread_clock() - c0, thread_cpu() - r0, t.elapsed(), r.ok())
                }
            };
            let ws: Vec<_> = (0..3).map(|_| std::thread::spawn(one(true))).collect();
            let loader = std::thread::spawn(one(false));
            let (lc, lru, lw, lr) = loader.join().map_err(|_| "loader panicked")?;
            let mut wc = Duration::ZERO;
            let mut wru = Duration::ZERO;
            let mut ww = Duration::ZERO;
            for w in ws {
                let (c, ru, wall, r) = w.join().map_err(|_| "waiter panicked")?;
                if r != Some(false) {
                    return Err(format!("waiter: lookup of an absent id gave {r:?}"));
                }
                wc += c;
                wru += ru;
                ww = ww.max(wall);
                // A waiter that arrived after the load finished did a plain miss (a few microseconds at most,
                // the first lookup of a handle included); one that waited took at least 50 us.
                if wall >= Duration::from_micros(50) {
                    waited += 1;
                }
            }
            if lr != Some(false) || store.metrics().index_loads != 1 {
                return Err(format!("loader: {lr:?}, {} index loads", store.metrics().index_loads));
            }
            loader_ru.push(lru.as_nanos() as f64);
            waiter_ru.push(wru.as_nanos() as f64);
            loader_cpu.push(lc.as_nanos() as f64);
            loader_wall.push(lw.as_nanos() as f64);
            waiter_cpu.push(wc.as_nanos() as f64);
            waiter_wall.push(ww.as_nanos() as f64);
        }
        let (_, lc) = min_median(&loader_cpu);
        let (wcmin, wc) = min_median(&waiter_cpu);
        let (_, lw) = min_median(&loader_wall);
        let (_, ww) = min_median(&waiter_wall);
        let (_, lru) = min_median(&loader_ru);
        let (_, wru) = min_median(&waiter_ru);
        eprintln!("bench: waiters-1core done");
        Ok(vec![Row {
            runs,
            note: format!(
                "CPU {cpu} only; 3 waiters used {:.1} us CPU in all (min {:.1}; getrusage {:.0} us) while the loader used {:.1} us (getrusage {:.0} us); {waited} of {} waiter lookups waited (up to {:.2} ms) for the load ({:.2} ms wall)",
                wc / 1e3,
                wcmin / 1e3,
                wru / 1e3,
                lc / 1e3,
                lru / 1e3,
                3 * runs,
                ww / 1e6,
                lw / 1e6,
            ),
            ..Row::new("waiters-1core", "odb-index loose=none")
        }
        .with("waiters_cpu_ns_median", Val::Num(wc))
        .with("loader_cpu_ns_median", Val::Num(lc))
        .with("waiters_vs_loader_cpu", Val::Num(wc / lc))
        .with("waiters_rusage_ns_median", Val::Num(wru))
        .with("loader_rusage_ns_median", Val::Num(lru))
        .with("waiter_wall_ns_median", Val::Num(ww))
        .with("loader_wall_ns_median", Val::Num(lw))
        .with("waiter_lookups_that_waited", Val::Num(waited as f64))
        .with("waiter_lookups", Val::Num((3 * runs) as f64))])
    })
    .join()
    .map_err(|_| "waiters scenario panicked".to_owned())?
}

/// Syscalls per miss under `strace -f -c`: this binary re-run in its `--only-miss-loop` mode with N and 2N
/// misses; the difference divided by N.
fn syscalls(scenario: &str, objects: &Path, kinds: &[Kind], n: usize) -> Result<Vec<Row>, String> {
    let strace_ok = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !strace_ok {
        eprintln!("bench: strace is not installed: syscalls per miss not measured");
        return Ok(vec![Row {
            note: "strace is not installed: not measured".into(),
            ..Row::new(scenario, "all")
        }]);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for &k in kinds {
        let mut counts = Vec::new();
        for m in [n, 2 * n] {
            let out = std::env::temp_dir().join(format!(
                "odb-index-strace-{}-{}-{m}.txt",
                std::process::id(),
                k.flag()
            ));
            let st = std::process::Command::new("strace")
                .args(["-f", "-c", "-o"])
                .arg(&out)
                .arg(&exe)
                .args(["--only-miss-loop", &m.to_string(), "--arm", k.flag()])
                .arg(objects)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("strace: {e}"))?;
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            let _ = std::fs::remove_file(&out);
            if !st.success() {
                return Err(format!(
                    "strace of --only-miss-loop --arm {} failed",
                    k.flag()
                ));
            }
            counts.push(parse_strace(&text));
        }
        let mut per: Vec<(String, f64)> = counts[1]
            .iter()
            .map(|(name, c2)| {
                let c1 = counts[0]
                    .iter()
                    .find(|(n1, _)| n1 == name)
                    .map_or(0, |x| x.1);
                (name.clone(), (*c2 as f64 - c1 as f64) / n as f64)
            })
            .filter(|(_, v)| *v > 0.005)
            .collect();
        per.sort_by(|a, b| b.1.total_cmp(&a.1));
        let total: f64 = per.iter().map(|x| x.1).sum::<f64>().max(0.0);
        let detail = per
            .iter()
            .map(|(s, v)| format!("{s} {v:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!("bench: {scenario}: {} done", k.name());
        rows.push(
            Row {
                runs: 1,
                lookups: n,
                note: format!(
                    "{total:.2} syscalls per miss{}{detail}",
                    if detail.is_empty() { "" } else { ": " }
                ),
                ..Row::new(scenario, k.name())
            }
            .with("syscalls_per_miss", Val::Num(total))
            .with("detail", Val::Str(detail)),
        );
    }
    Ok(rows)
}

/// `(syscall, calls)` from a `strace -c` summary.
fn parse_strace(text: &str) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 5 || t[0].starts_with('%') || t[0].starts_with('-') {
            continue;
        }
        let name = t[t.len() - 1];
        if name == "total" {
            continue;
        }
        if let Ok(calls) = t[3].parse::<u64>() {
            v.push((name.to_owned(), calls));
        }
    }
    v
}

/// The hidden `--only-miss-loop N --arm A [--fresh]` mode: N misses of one arm and nothing else measured, for
/// strace and callgrind (`--toggle-collect='*only_miss_loop_body*'`). The warm-up misses 4 096 absent ids once
/// (every index loaded; the miss filter built if that many misses build it); the N misses cycle through those
/// ids. With `fresh`, the warm-up goes on until the miss filter is built (as the bench's rows do) and the N
/// misses are N other absent ids, each used once (as the bench's `-fresh` rows use them: their generator seed).
pub fn only_miss_loop(kind: Kind, objects: &Path, n: usize, fresh: bool) -> Result<(), String> {
    let ids = absent(4096, 1);
    let mut arm = Arm::open(kind, objects)?;
    // Settle: load every index and (cached mode) list every fan-out directory, so that the N misses measured
    // (and the difference of an N and a 2N run) hold no one-time work.
    arm.run(&ids, ids.len());
    if fresh {
        settle_filter(kind, &mut arm, &ids);
    }
    let fresh_ids = fresh.then(|| absent(n.max(1), 11));
    let ids = fresh_ids.as_ref().unwrap_or(&ids);
    let before = thread_allocs();
    let t = Instant::now();
    let found = only_miss_loop_body(&mut arm, ids, n);
    let dt = t.elapsed();
    let allocs = thread_allocs() - before;
    if found != 0 {
        return Err(format!("{found} of the absent ids were found"));
    }
    eprintln!(
        "{} misses{} with {}: {:.1} ns per miss, {:.2} allocations per miss",
        n,
        if fresh { " (fresh ids)" } else { "" },
        kind.name(),
        dt.as_nanos() as f64 / n.max(1) as f64,
        allocs as f64 / n.max(1) as f64
    );
    Ok(())
}

#[inline(never)]
fn only_miss_loop_body(arm: &mut Arm, ids: &Ids, n: usize) -> usize {
    arm.run(ids, n)
}

/// Hidden `--only-hit-loop N`: N lookups of ids present in the packs with one arm (for callgrind's instruction
/// counts of the hit path: `--toggle-collect='*only_hit_loop_body*'`).
pub fn only_hit_loop(kind: Kind, objects: &Path, n: usize) -> Result<(), String> {
    let ids = present(objects, 1)?;
    let mut arm = Arm::open(kind, objects)?;
    // Settle: load every index first.
    arm.run(&ids, ids.len());
    let t = Instant::now();
    let found = only_hit_loop_body(&mut arm, &ids, n);
    let dt = t.elapsed();
    if found != n {
        return Err(format!("{} of {n} present ids were not found", n - found));
    }
    eprintln!(
        "{n} hits with {}: {:.1} ns per hit",
        kind.name(),
        dt.as_nanos() as f64 / n.max(1) as f64
    );
    Ok(())
}

#[inline(never)]
fn only_hit_loop_body(arm: &mut Arm, ids: &Ids, n: usize) -> usize {
    // Not the same machine code as `only_miss_loop_body` (the `black_box`), or the linker folds the two into one
    // symbol and callgrind's `--toggle-collect` finds only one of them.
    arm.run(ids, n) ^ std::hint::black_box(0)
}
