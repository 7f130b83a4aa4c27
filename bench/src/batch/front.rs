//! The end-to-end front end on a generated history: the adapter, gix-odb 0.87 and git, each a child process,
//! with the hidden child mode the first two run.

use super::*;

/// The end-to-end front-end rows on a history of its own (`dir/front/real.git`, [`fixture::history`], written
/// unless there already: 800 commits, about 32 000 objects, where scenario 8's 90 give about 4 000, too few for
/// a per-object figure beside each process's start-up and fixed buffers): every object in
/// `git rev-list --objects --all` order, type and size read, by the adapter (`Objects::info_many` in batches
/// of 4 096), gix-odb 0.87 (`Header::try_header` per id) and `git cat-file --batch-check --buffer`; each a child
/// process under `/usr/bin/time` (wall time from the parent, peak resident memory), round-robin, with every id
/// and with none: the difference is what the objects cost (time per object, memory per million objects), the
/// run with none its start-up (a process, its binary, opening the repository).
pub(super) fn front_end(dir: &Path, s: &Sizes) -> Result<Vec<Row>, String> {
    let dir = &dir.join("front");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let repo = dir.join("real.git");
    if !repo.join("objects").exists() {
        eprintln!(
            "bench: batches: writing a history of {} commits",
            s.front_commits
        );
        fixture::history(dir, s.front_commits, 11)?;
    }
    let (n, ids_file, empty_file) = rev_list_ids(dir, &repo)?;
    let exe = crate::self_exe()?;
    let arms: [(&str, Vec<PathBuf>); 3] = [
        (
            "odb-index adapter info_many",
            vec![exe.clone(), "--batch-child".into(), "front-adapter".into()],
        ),
        (
            "gix-odb 0.87 try_header",
            vec![exe, "--batch-child".into(), "front-gix".into()],
        ),
        ("git cat-file --batch-check --buffer", vec!["git".into()]),
    ];
    // Per arm, per input (every id, then none): wall times (ns) and peak resident memory (KiB).
    let mut wall = vec![[Vec::new(), Vec::new()]; arms.len()];
    let mut rss = vec![[Vec::new(), Vec::new()]; arms.len()];
    for _ in 0..s.front_runs {
        for (i, (name, argv)) in arms.iter().enumerate() {
            for (input, file, want) in [(0, &ids_file, n), (1, &empty_file, 0)] {
                let (ns, kib) = front_run(name, argv, &repo, file, want)?;
                wall[i][input].push(ns);
                rss[i][input].push(kib);
            }
        }
    }
    let names = arms.map(|(name, _)| name);
    Ok(front_rows(&names, &wall, &rss, n, s.front_runs))
}

/// The ids of `git rev-list --objects --all` in `repo`, written one a line to a file under `dir`, and an
/// empty file beside it: (how many ids, the ids' file, the empty one).
pub(super) fn rev_list_ids(dir: &Path, repo: &Path) -> Result<(usize, PathBuf, PathBuf), String> {
    let listed = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["rev-list", "--objects", "--all"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("git rev-list: {e}"))?;
    let text = String::from_utf8_lossy(&listed.stdout);
    let ids: Vec<&str> = text.lines().filter_map(|l| l.get(..40)).collect();
    let ids_file = dir.join("batch-rev-list-ids.txt");
    let mut f =
        std::fs::File::create(&ids_file).map_err(|e| format!("{}: {e}", ids_file.display()))?;
    for id in &ids {
        writeln!(f, "{id}").map_err(|e| e.to_string())?;
    }
    drop(f);
    let empty_file = dir.join("batch-no-ids.txt");
    std::fs::write(&empty_file, b"").map_err(|e| format!("{}: {e}", empty_file.display()))?;
    Ok((ids.len(), ids_file, empty_file))
}

/// One run of a front-end arm (`argv`: this binary's child mode, or git alone) over the ids of `file` under
/// `/usr/bin/time`: its wall time (ns) and peak resident memory (KiB); `want` objects must be found.
pub(super) fn front_run(
    name: &str,
    argv: &[PathBuf],
    repo: &Path,
    file: &Path,
    want: usize,
) -> Result<(f64, f64), String> {
    let mut c = Command::new("/usr/bin/time");
    c.args(["-f", "%M"]).args(argv);
    if argv.len() == 1 {
        c.arg("--git-dir")
            .arg(repo)
            .args(["cat-file", "--batch-check", "--buffer"]);
    } else {
        c.arg(file).arg(repo.join("objects"));
    }
    let stdin = std::fs::File::open(file).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let o = c
        .stdin(stdin)
        .stdout(Stdio::piped())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .map_err(|e| format!("{name}: {e}"))?;
    let dt = t.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let found = if argv.len() == 1 {
        out.lines().filter(|l| !l.ends_with("missing")).count()
    } else {
        out.trim().parse().unwrap_or(0)
    };
    if !o.status.success() || found != want {
        return Err(format!("{name}: found {found} of {want} ({err})"));
    }
    let kib: f64 = err
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(f64::NAN);
    Ok((dt.as_nanos() as f64, kib))
}

/// The front-end rows from each arm's wall times and peak memory over every id (`[0]`) and over none (`[1]`):
/// the differences per object, and per million objects for the memory.
pub(super) fn front_rows(
    names: &[&str],
    wall: &[[Vec<f64>; 2]],
    rss: &[[Vec<f64>; 2]],
    ids: usize,
    runs: usize,
) -> Vec<Row> {
    let load = load();
    let n = ids as f64;
    let mut rows = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (min_all, med_all) = min_median(&wall[i][0]);
        let (min_none, med_none) = min_median(&wall[i][1]);
        let (_, kib_all) = min_median(&rss[i][0]);
        let (_, kib_none) = min_median(&rss[i][1]);
        let kib = kib_all - kib_none;
        let mib_per_m = kib / 1024.0 / (n / 1e6);
        rows.push(
            Row {
                ns_min: Some((min_all - min_none) / n),
                ns_median: Some((med_all - med_none) / n),
                runs,
                lookups: ids,
                note: format!(
                    "{ids} objects in rev-list order, type+size; per object: (every id - no id) / ids, start-up {:.1} ms; \
                     peak RSS {:.1} MiB, {:.1} MiB over no id = {mib_per_m:.1} MiB per million objects; load {load:.1}",
                    med_none / 1e6,
                    kib_all / 1024.0,
                    kib / 1024.0
                ),
                ..Row::new("batch-front-end-real", name)
            }
            .with("rss_kib_over_start", Val::Num(kib))
            .with("rss_mib_per_million", Val::Num(mib_per_m))
            .with("startup_ms", Val::Num(med_none / 1e6))
            .with("load", Val::Num(load)),
        );
    }
    rows
}

/// Ids per `info_many` call of the front-end child: what a front end that answers as it goes holds (each answer
/// is 88 bytes: 4 096 of them are 352 KiB that git, answering line by line, and gix-odb, one id at a time, do not
/// hold). `info_many` locates 256 ids per `locate_many` call whatever it is given, so a larger batch is not faster
/// (docs/BENCHMARKS.md, "Batches": 256 against 4 096 measured).
const FRONT_BATCH: usize = 256;

/// `--batch-child front-adapter|front-gix IDS_FILE OBJECTS`: type and size of every id of the file, through
/// the adapter's `info_many` or gix-odb 0.87's `try_header`; prints how many were found.
pub(super) fn child_front(what: &str, arg: &str, path: &Path) -> Result<(), String> {
    let (ids_file, objects) = (Path::new(arg), path);
    let text = std::fs::read_to_string(ids_file).map_err(|e| e.to_string())?;
    let ids: Vec<ObjectId> = text
        .lines()
        .map(|l| l.parse().map_err(|e| format!("{l}: {e}")))
        .collect::<Result<_, _>>()?;
    let found = if what == "front-adapter" {
        let objects = odb_index_gix::Objects::open(objects).map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(FRONT_BATCH);
        let mut found = 0;
        for chunk in ids.chunks(FRONT_BATCH) {
            out.clear();
            objects
                .info_many(chunk, &mut out)
                .map_err(|e| e.to_string())?;
            for info in out.iter().flatten() {
                black_box(info.size);
                found += 1;
            }
        }
        found
    } else {
        use gix_odb::Header as _;
        let h = gix_odb::at(objects, gix_hash::Kind::Sha1).map_err(|e| e.to_string())?;
        let mut found = 0;
        for id in &ids {
            let oid = gix_hash::oid::from_bytes_unchecked(id.as_bytes());
            if let Some(hd) = h.try_header(oid).map_err(|e| e.to_string())? {
                black_box((hd.kind(), hd.size()));
                found += 1;
            }
        }
        found
    };
    println!("{found}");
    Ok(())
}
