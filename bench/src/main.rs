//! `odb-index-bench`: odb-index side by side with gix-odb 0.83 and 0.87 on
//! the fixture of the sched_yield report, plus 100 packs with and without a multi-pack-index, a 1 000 000-object
//! index, waiters for an in-flight load on one pinned core, and syscalls per miss under `strace`.
//!
//! Arms run interleaved (round-robin) in one process; each reports the minimum and median over its runs.
//! See docs/BENCHMARKS.md for the figures and how to reproduce them.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines,
    reason = "a benchmark, not shipped: .clippy.toml's rules are for the library, command and adapter"
)]

mod arms;
mod batch;
mod chain;
mod fixture;
mod report;
mod row;
mod scenarios;
mod strace;
mod targets;

use std::path::PathBuf;
use std::process::ExitCode;

use odb_index::ObjectId;

pub use arms::Kind;

// Counts allocations per thread, so each arm reports its allocations per lookup.
#[global_allocator]
static ALLOCATOR: odb_index_testkit::alloc::Counting = odb_index_testkit::alloc::Counting;

const USAGE: &str = "usage: odb-index-bench [PATH] [--json] [--svg FILE] [--quick] [--scenario batches|open-chain]
  Benchmark lookups: odb-index (loose probe, cached, none), gix-odb 0.83 and gix-odb 0.87, interleaved in
  one process. Without PATH, build the fixture of the gix-odb sched_yield report with git (12 328 objects in
  one pack) in a temporary directory. Prints a table (one JSON object per line with --json); --svg draws it as
  a bar chart; --quick is a short run; --scenario batches (or open-chain) runs that group alone (every group without it).
  See docs/BENCHMARKS.md.
PATH is a work tree, a .git directory, a bare repository or an objects directory.";

fn main() -> ExitCode {
    let mut parser = lexopt::Parser::from_env();
    let result = parse(&mut parser).and_then(|args| match args {
        None => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some(args) => run(args),
    });
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("odb-index-bench: {msg} (try --help)");
            ExitCode::from(2)
        }
    }
}

/// Parsed `bench` arguments.
pub struct Args {
    pub path: Option<PathBuf>,
    pub json: bool,
    pub svg: Option<PathBuf>,
    pub quick: bool,
    /// Hidden: run only N misses of one arm (for strace and callgrind).
    pub only_miss_loop: Option<usize>,
    /// Hidden: `--only-miss-loop` with fresh ids (each of the N misses a different absent id, none of the
    /// warm-up's), for callgrind and cachegrind on the fresh-id rows.
    pub fresh: bool,
    /// Hidden: run only the rows of the two 100-pack targets, on PATH (one pack) and this objects directory
    /// (100 packs).
    pub ratio_rows: Option<PathBuf>,
    /// Hidden: run only N hits of one arm (for callgrind).
    pub only_hit_loop: Option<usize>,
    pub arm: Option<Kind>,
    /// Hidden: build the one-pack fixture, the 1M-object index, the sparse 2^31-object index and the 1M-object
    /// index under a multi-pack-index in this directory and print their objects directories.
    pub make_fixture: Option<PathBuf>,
    /// Hidden: open a store on this objects directory, miss once, print ns and peak RSS (KiB).
    pub open_first_miss: Option<PathBuf>,
    /// Hidden: open a store on this objects directory with the miss filter built at the first settled miss, miss a few times,
    /// print the store's filter build time (ns) and its ids.
    pub store_filter_build: Option<PathBuf>,
    /// Hidden: N rounds of open + first miss of one arm on PATH (for callgrind, strace and minor faults).
    pub open_first_miss_loop: Option<usize>,
    /// Hidden: `--open-first-miss` opens the store with `Options::midx_checksum(true)`.
    pub midx_checksum: bool,
    /// `--scenario NAME`: run one scenario group only (`batches`, `open-chain`), for measurements on a loaded
    /// machine.
    pub scenario: Option<String>,
    /// Hidden: `--batch-child WHAT ARG`: a child of the `batches` group (strace, cachegrind, the front ends).
    pub batch_child: Option<(String, String)>,
    /// Hidden: `--chain-child IDS_FILE` on PATH, the odb-index process of scenario `open-chain-*`.
    pub chain_child: Option<PathBuf>,
    /// Hidden: `--make-chain DIR`: build scenario 12's fixture (1 000 packs under a 1 000-layer chain) in DIR
    /// (which must not hold a `chain.git`), write its blobs' ids to `DIR/ids` and print the repository's path.
    pub make_chain: Option<PathBuf>,
    /// Hidden: `--make-history DIR COMMITS`: write a history of COMMITS commits into `DIR/real.git` as the bench
    /// writes its own ([`fixture::history`]: the front-end row's 800 commits, scenario 8's 90), for
    /// `bench/scripts/front-end.sh`.
    pub make_history: Option<(PathBuf, u64)>,
}

/// Parse the command line; `None` for `--help`.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<Args>, String> {
    use lexopt::prelude::*;
    let mut a = Args {
        path: None,
        json: false,
        svg: None,
        quick: false,
        only_miss_loop: None,
        fresh: false,
        ratio_rows: None,
        only_hit_loop: None,
        arm: None,
        make_fixture: None,
        open_first_miss: None,
        store_filter_build: None,
        open_first_miss_loop: None,
        midx_checksum: false,
        scenario: None,
        batch_child: None,
        chain_child: None,
        make_chain: None,
        make_history: None,
    };
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("help") | Short('h') => return Ok(None),
            Long("json") => a.json = true,
            Long("quick") => a.quick = true,
            Long("fresh") => a.fresh = true,
            Long("midx-checksum") => a.midx_checksum = true,
            Long("scenario") => {
                let v = parser.value().map_err(|e| e.to_string())?;
                match v.to_str() {
                    Some(name @ ("batches" | "open-chain")) => a.scenario = Some(name.into()),
                    _ => return Err(format!("--scenario takes batches or open-chain, not {v:?}")),
                }
            }
            Long("batch-child") => {
                let what = parser.value().map_err(|e| e.to_string())?;
                let arg = parser.value().map_err(|e| e.to_string())?;
                a.batch_child = Some((
                    what.to_string_lossy().into_owned(),
                    arg.to_string_lossy().into_owned(),
                ));
            }
            Long("make-chain") => {
                a.make_chain = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Long("make-history") => {
                let dir = parser.value().map_err(|e| e.to_string())?.into();
                a.make_history = Some((dir, number(parser, "make-history")? as u64))
            }
            Long("chain-child") => {
                a.chain_child = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Long("svg") => a.svg = Some(parser.value().map_err(|e| e.to_string())?.into()),
            Long("only-miss-loop") => a.only_miss_loop = Some(number(parser, "only-miss-loop")?),
            Long("only-hit-loop") => a.only_hit_loop = Some(number(parser, "only-hit-loop")?),
            Long("arm") => {
                let v = parser.value().map_err(|e| e.to_string())?;
                a.arm = Some(v.to_str().and_then(Kind::from_flag).ok_or_else(|| {
                    format!(
                        "--arm takes odb-probe, odb-none, odb-cached, odb-none-nofilter, odb-probe-batch, gix083 or gix087, not {v:?}"
                    )
                })?);
            }
            Long("open-first-miss-loop") => {
                a.open_first_miss_loop = Some(number(parser, "open-first-miss-loop")?)
            }
            Long("open-first-miss") => {
                a.open_first_miss = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Long("store-filter-build") => {
                a.store_filter_build = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Long("ratio-rows") => {
                a.ratio_rows = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Long("make-fixture") => {
                a.make_fixture = Some(parser.value().map_err(|e| e.to_string())?.into())
            }
            Value(v) if a.path.is_none() => a.path = Some(PathBuf::from(v)),
            other => return Err(other.unexpected().to_string()),
        }
    }
    Ok(Some(a))
}

/// The value of `--flag` as a number.
fn number(parser: &mut lexopt::Parser, flag: &str) -> Result<usize, String> {
    let v = parser.value().map_err(|e| e.to_string())?;
    v.to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("--{flag} takes a number, not {v:?}"))
}

/// The hidden `--make-fixture DIR` mode: build the fixtures in `dir` and print their objects directories.
fn make_fixture(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let objects = fixture::one_pack(dir)?;
    println!("{}", objects.display());
    // The 1 000 000-object index and the sparse 2^31-object one, for `--open-first-miss`.
    let (big, _) = fixture::big_index(dir, 1_000_000, &mut Rng::new(5))?;
    println!("{}", big.display());
    println!("{}", fixture::sparse_index(dir, 1 << 31)?.display());
    // The same 1 000 000 objects under a multi-pack-index, for `--open-first-miss [--midx-checksum]`.
    println!(
        "{}",
        fixture::big_midx(dir, 1_000_000, &mut Rng::new(5))?.display()
    );
    // The bench's 100 packs (scenario 4: 123 objects each), without and with a multi-pack-index, for
    // `--only-miss-loop N [--fresh]`.
    let many_dir = dir.join("many");
    std::fs::create_dir_all(&many_dir).map_err(|e| format!("{}: {e}", many_dir.display()))?;
    let (many, many_midx) = fixture::many_packs(&many_dir, 100, 123)?;
    println!("{}\n{}", many.display(), many_midx.display());
    Ok(())
}

/// Run the benchmark.
pub fn run(args: Args) -> Result<ExitCode, String> {
    if let (Some((what, arg)), Some(path)) = (&args.batch_child, &args.path) {
        return batch::child(what, arg, path).map(|()| ExitCode::SUCCESS);
    }
    if let Some((dir, commits)) = &args.make_history {
        let (repo, objects) = fixture::history(dir, *commits as usize, 11)?;
        println!("{} ({objects} objects)", repo.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &args.make_chain {
        return chain::make(dir).map(|()| ExitCode::SUCCESS);
    }
    if let (Some(ids), Some(path)) = (&args.chain_child, &args.path) {
        return chain::child(ids, path).map(|()| ExitCode::SUCCESS);
    }
    if let Some(objects) = &args.open_first_miss {
        return scenarios::open_first_miss(objects, args.midx_checksum).map(|()| ExitCode::SUCCESS);
    }
    if let Some(objects) = &args.store_filter_build {
        return scenarios::store_filter_build(objects).map(|()| ExitCode::SUCCESS);
    }
    if let (Some(n), Some(objects)) = (args.open_first_miss_loop, &args.path) {
        return scenarios::open_first_miss_loop(args.arm, objects, n).map(|()| ExitCode::SUCCESS);
    }
    if let Some(dir) = &args.make_fixture {
        return make_fixture(dir).map(|()| ExitCode::SUCCESS);
    }
    let _tmp;
    let objects = match &args.path {
        Some(p) => {
            // Let the store resolve work trees, .git directories and bare repositories.
            let store = odb_index::Store::open(p, arms::odb_options(Kind::OdbNone))
                .map_err(|e| e.to_string())?;
            store.objects_dir().to_path_buf()
        }
        None => {
            let t = fixture::TempDir::new("bench")?;
            if args.only_miss_loop.is_none() && args.only_hit_loop.is_none() {
                eprintln!(
                    "bench: building the fixture (12 328 objects in one pack) in {}",
                    t.path().display()
                );
            }
            let o = fixture::one_pack(t.path())?;
            _tmp = t;
            o
        }
    };
    if let Some(n) = args.only_hit_loop {
        let kind = args.arm.unwrap_or(Kind::OdbNone);
        return scenarios::only_hit_loop(kind, &objects, n).map(|()| ExitCode::SUCCESS);
    }
    if let Some(n) = args.only_miss_loop {
        let kind = args.arm.unwrap_or(Kind::OdbProbe);
        return scenarios::only_miss_loop(kind, &objects, n, args.fresh)
            .map(|()| ExitCode::SUCCESS);
    }
    targets::LoadSampler::start();
    // The table run prints each row as it is measured (the table and the verdicts at the end); `--json` prints
    // only JSON lines.
    row::SHOW_ROWS.store(!args.json, std::sync::atomic::Ordering::Relaxed);
    let rows = match (&args.ratio_rows, &args.scenario) {
        (Some(many), _) => row::shown(scenarios::ratio_rows(&objects, many, args.quick)?),
        (None, Some(group)) if group == "open-chain" => {
            let tmp = fixture::TempDir::new("bench-chain")?;
            let (layers, runs) = if args.quick { (100, 3) } else { (1000, 9) };
            row::shown(chain::rows(tmp.path(), layers, runs)?)
        }
        (None, Some(_batches)) => {
            let tmp = fixture::TempDir::new("bench-batches")?;
            row::shown(batch::rows(tmp.path(), &objects, args.quick)?)
        }
        (None, None) => scenarios::all(&objects, args.path.is_some(), args.quick)?,
    };
    let tables: &[&[targets::Target]] = match (&args.ratio_rows, &args.scenario) {
        (None, Some(group)) if group == "open-chain" => &[chain::TARGETS],
        (None, Some(_batches)) => &[batch::TARGETS],
        _ => &[targets::MAIN, batch::TARGETS, chain::TARGETS],
    };
    let targets = targets::evaluate(&rows, tables);
    if args.json {
        for r in rows.iter().chain(&targets) {
            println!("{}", r.json());
        }
    } else {
        report::print_table(&rows, &targets, &objects);
        report::print_comparison(&rows);
    }
    if let Some(svg) = &args.svg {
        report::svg(&rows, svg)?;
        eprintln!("bench: wrote {}", svg.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// This program, for the scenarios that run it again as a child (a process of its own per arm, counted with
/// strace or timed cold). On Linux `/proc/<this process>/exe`, the running file itself, whoever opens the path
/// (strace too, where `/proc/self` would be strace): `cargo build` or `cargo test` in another terminal replaces
/// `target/release/odb-index-bench` while a main job runs, and the path `current_exe` gives then names a deleted
/// file (`... (deleted)`), which cannot be run. Elsewhere `current_exe`.
pub fn self_exe() -> Result<PathBuf, String> {
    let proc_exe = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    if proc_exe.exists() {
        return Ok(proc_exe);
    }
    std::env::current_exe().map_err(|e| format!("this program's path: {e}"))
}

/// splitmix64: reproducible random ids and shuffles without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A random SHA-1 id.
    pub fn oid(&mut self) -> ObjectId {
        let mut b = [0u8; 20];
        for c in b.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            c.copy_from_slice(&r[..c.len()]);
        }
        ObjectId::from_bytes(&b).expect("20 bytes make a SHA-1 id")
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}
