//! The scenarios: how each is set up, run interleaved, and summarised into rows.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use odb_index::idx::PackIndex;
use odb_index::{HashKind, LoadMode, ObjectId, Store};

use super::Rng;
use super::arms::{Arm, Ids, Kind, odb_options};
use super::fixture;
use super::report::add_ratios;
use super::row::{Row, Val, shown};
use odb_index_testkit::alloc::thread_allocs;

mod counts;
mod filter;
mod loops;
mod many_packs;
mod misses;
mod open;
mod real;
mod threads;

use counts::*;
use filter::*;
pub use loops::{only_hit_loop, only_miss_loop};
use many_packs::*;
use misses::*;
use open::*;
pub use open::{open_first_miss, open_first_miss_loop, store_filter_build};
use real::*;
use threads::*;

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
    /// Commits of scenario 8's history ([`fixture::history`]).
    real_commits: usize,
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
                real_commits: 10,
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
                real_commits: 90,
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

/// All scenarios. `user_path`: PATH was given (scenarios 4 to 6 still use their own synthetic fixtures).
pub fn all(objects: &Path, user_path: bool, quick: bool) -> Result<Vec<Row>, String> {
    let _ = user_path;
    let plan = Plan::new(quick);
    let misses = absent(4096, 1);
    // Fresh ids for the fresh-id scenarios (a different seed: none of the cached misses).
    let fresh = absent(plan.fresh_ids, 11);
    let mut rows = shown(vec![machine()]);

    // Floors: the bare cost of one probe of a missing loose path, inline in the timing loop and in a function.
    rows.extend(shown(floors(objects, &misses, plan.misses, plan.runs)?));
    // 1 and 2: misses and hits on the one-pack fixture; 3: two threads missing at once.
    rows.extend(shown(one_pack(objects, &misses, &fresh, &plan)?));
    rows.extend(shown(two_threads_rows(objects, &misses, &plan)?));

    // 4. 100 packs, without and with a multi-pack-index.
    let tmp = fixture::TempDir::new("bench-synthetic")?;
    rows.extend(shown(many_packs(tmp.path(), &misses, &fresh, &plan)?));

    // 5. A 1 000 000-object index (then 6, its waiters, and 5b, the sparse index).
    let before = rows.len();
    let big = big_index(tmp.path(), &misses, &fresh, &plan, &mut rows)?;
    let new = shown(rows.split_off(before));
    rows.extend(new);
    rows.extend(shown(waiters(&big, misses.oids[0], plan.cold_runs)?));
    rows.extend(shown(sparse_open(
        tmp.path(),
        plan.sparse_objects,
        plan.cold_runs.min(3),
    )?));

    // 8. A history: a generated project's commits, imported with git fast-import.
    rows.extend(shown(real(tmp.path(), &misses, &fresh, &plan)?));
    // 11. Batches: locate_many beside locate, syscalls per miss in a batch, LL misses, the end-to-end front end
    // on a larger real history of its own (bench/src/batch/).
    rows.extend(shown(super::batch::rows(tmp.path(), objects, quick)?));
    // 12. Opening a 1 000-layer multi-pack-index chain over 1 000 packs, beside git (bench/src/chain.rs).
    let (layers, runs) = if quick { (100, 3) } else { (1000, 9) };
    rows.extend(shown(super::chain::rows(tmp.path(), layers, runs)?));
    drop(tmp);

    // 7, 10 and 9: system calls per miss, three objects directories, instructions per miss.
    rows.extend(shown(counted(objects, &misses, &plan)?));
    add_ratios(&mut rows);
    Ok(rows)
}

/// Scenarios 1 and 2 on the one-pack fixture: misses (with exactly one pack, the bare index search too: the
/// difference is what the store adds), then hits in random order; the miss filter's row.
fn one_pack(objects: &Path, misses: &Ids, fresh: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    let mut kinds1 = all_kinds();
    kinds1.extend([Kind::OdbNoneNoFilter, Kind::OdbProbeBatch]);
    kinds1.extend(default_kinds());
    if single_pack(objects) {
        kinds1.extend([Kind::IdxLookup, Kind::IdxBinary]);
    }
    let mut arms = open_arms(&kinds1, objects)?;
    let mut rows = one_pack_misses(&mut arms, misses, fresh, plan)?;
    // A repository given as PATH may have no packs.
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
        }
        Err(e) => rows.push(Row {
            note: format!("not measured: {e}"),
            ..Row::new("hit-1pack-random", "-")
        }),
    }
    rows.extend(filter_rows("filter-1pack", &arms));
    Ok(rows)
}

/// Scenario 3: two threads missing at once. The bare index search, when there is one pack, is the control: it
/// shares nothing between threads.
fn two_threads_rows(objects: &Path, misses: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    let mut tk = vec![Kind::OdbNone, Kind::OdbCached, Kind::OdbProbe];
    tk.push(Kind::Gix087);
    if single_pack(objects) {
        tk.push(Kind::IdxLookup);
    }
    two_threads(objects, &tk, misses, plan.misses, plan.runs)
}

/// Scenario 4: 100 packs built under `dir`, without and with a multi-pack-index: misses, hits.
fn many_packs(dir: &Path, misses: &Ids, fresh: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    eprintln!("bench: building 100 packs (and a copy with a multi-pack-index) with git");
    let (many, many_midx) = fixture::many_packs(dir, 100, 123)?;
    let many_hits = present(&many, 3)?;
    let mut rows = Vec::new();
    for (label, dir) in [("100packs", &many), ("100packs-midx", &many_midx)] {
        let mut arms = open_arms(&many_kinds(label), dir)?;
        rows.extend(many_pack_misses(label, &mut arms, misses, fresh, plan)?);
        if label == "100packs" {
            rows.extend(filter_rows("filter-100packs", &arms));
        }
        let hit = format!("hit-{label}-random");
        rows.extend(measure(
            &hit,
            &mut arms,
            &many_hits,
            plan.hits,
            plan.runs,
            Expect::AllFound,
        )?);
    }
    Ok(rows)
}

/// Scenario 5: a 1 000 000-object index written under `dir` (fewer objects in a quick run): open + first miss,
/// misses (cached and fresh ids), the miss filter, both filters' builds, hits. Its rows go to `rows`; the
/// index's objects directory is returned.
fn big_index(
    dir: &Path,
    misses: &Ids,
    fresh: &Ids,
    plan: &Plan,
    rows: &mut Vec<Row>,
) -> Result<PathBuf, String> {
    eprintln!(
        "bench: writing a {}-object index with write_idx",
        plan.big_objects
    );
    let mut rng = Rng::new(5);
    let (big, mut big_ids) = fixture::big_index(dir, plan.big_objects, &mut rng)?;
    let big_name = if plan.big_objects == 1_000_000 {
        "1M".to_owned()
    } else {
        format!("{}k", plan.big_objects / 1000)
    };
    rows.extend(cold_load(&big, &big_name, misses, plan.open_runs)?);
    let kinds = [
        Kind::OdbNone,
        Kind::OdbNoneNoFilter,
        Kind::IdxLookup,
        Kind::IdxBinary,
        Kind::Gix087,
    ];
    let mut arms = open_arms(&kinds, &big)?;
    let (n, runs) = (plan.big_lookups, plan.runs);
    let miss = format!("miss-{big_name}-index");
    rows.extend(measure(
        &miss,
        &mut arms,
        misses,
        n,
        runs,
        Expect::NoneFound,
    )?);
    rows.extend(measure_fresh(
        &format!("{miss}-fresh"),
        &mut arms,
        fresh,
        n,
        runs,
    )?);
    rows.extend(filter_rows(&format!("filter-{big_name}-index"), &arms));
    rng.shuffle(&mut big_ids);
    rows.extend(filter_build(&big_ids, fresh, plan.runs.min(5))?);
    big_ids.truncate(plan.big_lookups.max(1));
    let hit = format!("hit-{big_name}-index-random");
    let hits = Ids::new(big_ids);
    rows.extend(measure(&hit, &mut arms, &hits, n, runs, Expect::AllFound)?);
    Ok(big)
}

/// Scenarios 7, 10 and 9: system calls per miss (strace), three objects directories (two alternates: the
/// default configuration against the stat-and-probe one and `Never`), instructions per miss (callgrind, full
/// runs only).
fn counted(objects: &Path, misses: &Ids, plan: &Plan) -> Result<Vec<Row>, String> {
    let mut sk = all_kinds();
    sk.extend(default_kinds());
    let mut rows = syscalls("syscalls-per-miss", objects, &sk, plan.syscall_misses)?;
    rows.extend(three_dirs(objects, misses, plan)?);
    if plan.callgrind_misses > 0 {
        rows.extend(instructions(objects, plan.callgrind_misses)?);
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
