//! The in-process fault matrix (issue 47; docs/RELIABILITY.md, "Faults: an error is never evidence that an
//! object is gone", G11): one repository built with git (several packs, an incremental multi-pack-index chain,
//! a pack no multi-pack-index covers, loose objects, and an alternate with its own multi-pack-index), and one
//! run over it (open the store; look up every object `git cat-file --batch-all-objects` lists and some absent
//! ids one by one, then in one batch, then by prefix; iterate) for each call position of each kind of system
//! call (`odb_index::fault`): the `n`th call fails once (`Fault::once`), or from then on (`Fault::from_then_on`,
//! at a sample of positions), with each errno class. Every answer must be git's, or an error for that answer:
//! never `None` for an object that exists, never a wrong location, never a panic. ENOENT is the control: a
//! file that says "not found" may be gone, so a miss after it is counted ("gone"), not failed.
//!
//! The short form (EIO, every kind and position, once) runs with the other tests; the full matrix is
//! `#[ignore]`d (CI runs ignored tests) and prints its table:
//! `cargo test --release --test integration faults::matrix -- --ignored --nocapture`.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use odb_index::fault::{self, Call, Fault, errno};
use odb_index::{Location, Options, Prefix, PrefixLookup, Store};
use odb_index_testkit::*;

use crate::api_common::*;

/// The repository of the matrix and git's answers for it.
struct Fixture {
    _alternate: tempfile::TempDir,
    repo: tempfile::TempDir,
    /// Every object, as `git cat-file --batch-all-objects` lists them (the alternate's included).
    present: Vec<String>,
    absent: Vec<String>,
    truth: Truth,
    /// Whether the installed git wrote an incremental chain.
    chain: bool,
}

fn fixture() -> Fixture {
    let alternate = init_repo("sha1", true);
    fast_import_blobs(alternate.path(), 12, 101, "a");
    fast_import_blobs(alternate.path(), 12, 102, "b");
    git(alternate.path(), &["multi-pack-index", "write"]);
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 12, 1, "a");
    fast_import_blobs(repo.path(), 12, 2, "b");
    let chain = try_git(
        repo.path(),
        &["multi-pack-index", "write", "--incremental"],
        b"",
    )
    .is_ok();
    fast_import_blobs(repo.path(), 12, 3, "c"); // a pack no multi-pack-index covers
    write_loose(repo.path(), "faults", 8);
    let objects = objects_dir(repo.path());
    std::fs::create_dir_all(objects.join("info")).unwrap();
    std::fs::write(
        objects.join("info/alternates"),
        format!("{}\n", canon(&objects_dir(alternate.path())).display()),
    )
    .unwrap();
    // At rest: no re-listing because the directories are too recent to trust (the table is the same each run).
    settle(repo.path());
    settle(alternate.path());
    let present = all_objects(repo.path());
    let dirs = [canon(&objects), canon(&objects_dir(alternate.path()))];
    let truth = truth(&dirs, "sha1");
    assert!(
        present
            .iter()
            .all(|id| truth.packed.contains_key(id) || truth.loose.contains_key(id))
    );
    Fixture {
        _alternate: alternate,
        repo,
        present,
        absent: absent_ids(8, 40, 47),
        truth,
        chain,
    }
}

/// What one run saw: errors reported for answers, misses for objects that exist (allowed only after ENOENT),
/// and violations (a wrong answer, a silent miss after another errno, a panic).
#[derive(Default)]
struct Seen {
    errors: u64,
    gone: u64,
    violations: Vec<String>,
    listings: u64,
}

impl Seen {
    fn miss(&mut self, what: &str) {
        self.gone += 1;
        self.violations.push(format!("silent miss: {what}"));
    }
}

/// One run over the fixture: every answer checked against git's.
fn run(fx: &Fixture) -> Seen {
    let mut seen = Seen::default();
    let store = match Store::open(fx.repo.path(), Options::default()) {
        Ok(s) => s,
        Err(_) => {
            seen.errors += 1;
            return seen;
        }
    };
    let mut h = store.handle();
    // A location is git's: its pack's path (as the handle names it) and offset are in git's index, or the
    // object is loose. A pack id the handle's listing no longer has (a lasting fault made a later re-listing
    // of a batch miss the pack directory) is `StalePack` when the caller asks its path: an error reported, not
    // a wrong answer.
    let check = |seen: &mut Seen, h: &odb_index::Handle, id: &str, loc: Location| {
        let right = match loc {
            Location::Packed { pack, offset } => match h.pack_path(pack) {
                Ok(p) => fx
                    .truth
                    .packed
                    .get(id)
                    .is_some_and(|at| at.contains(&(p, offset))),
                Err(odb_index::Error::StalePack { .. }) => {
                    seen.errors += 1;
                    true
                }
                Err(_) => false,
            },
            Location::Loose { .. } => fx.truth.loose.contains_key(id),
        };
        if !right {
            seen.violations.push(format!(
                "wrong location for {id}: {loc:?} (git: {:?})",
                fx.truth.packed.get(id)
            ));
        }
    };
    // Single lookups.
    for id in &fx.present {
        match h.locate(&oid(id)) {
            Ok(Some(loc)) => check(&mut seen, &h, id, loc),
            Ok(None) => seen.miss(&format!("locate {id}")),
            Err(_) => seen.errors += 1,
        }
    }
    for id in &fx.absent {
        match h.locate(&oid(id)) {
            Ok(None) => {}
            Ok(Some(loc)) => seen
                .violations
                .push(format!("absent {id} found at {loc:?}")),
            Err(_) => seen.errors += 1,
        }
    }
    // One batch, on a fresh handle.
    let mut h = store.handle();
    let names: Vec<&String> = fx.present.iter().chain(&fx.absent).collect();
    let ids: Vec<_> = names.iter().map(|n| oid(n)).collect();
    let mut out = Vec::new();
    if h.locate_many(&ids, &mut out).is_err() {
        seen.errors += 1;
    }
    for (name, answer) in names.iter().zip(&out) {
        match (*answer, fx.absent.contains(name)) {
            (Some(loc), false) => check(&mut seen, &h, name, loc),
            (None, false) => seen.miss(&format!("batch {name}")),
            (None, true) => {}
            (Some(loc), true) => seen
                .violations
                .push(format!("batch: absent {name} at {loc:?}")),
        }
    }
    // Prefix lookups, on a fresh handle.
    let mut h = store.handle();
    for id in fx.present.iter().step_by(9) {
        let prefix = Prefix::new(&oid(id), 12).unwrap();
        match h.lookup_prefix(&prefix) {
            Ok(PrefixLookup::Unique(found)) if found.to_string() == *id => {}
            Ok(PrefixLookup::NotFound) => seen.miss(&format!("prefix {id}")),
            Ok(other) => seen.violations.push(format!("prefix {id}: {other:?}")),
            Err(_) => seen.errors += 1,
        }
    }
    // Iteration, on a fresh handle.
    let mut h = store.handle();
    match h.objects_sorted() {
        Ok(all) => {
            let listed: BTreeSet<String> = all.iter().map(|(id, _)| id.to_string()).collect();
            let want: BTreeSet<String> = fx.present.iter().cloned().collect();
            if listed != want {
                let missing = want.difference(&listed).count();
                seen.gone += missing as u64;
                seen.violations.push(format!(
                    "iteration: {missing} missing, {} extra",
                    listed.difference(&want).count()
                ));
            }
        }
        Err(_) => seen.errors += 1,
    }
    seen.listings = store.metrics().listings;
    seen
}

/// One row of the table: a call kind under one errno.
#[derive(Default, Clone, Copy)]
struct Row {
    /// Runs with the fault planned (one per call position, per mode).
    runs: u64,
    /// Of those, runs where the fault fired (a lasting fault planned past a retry's calls may not).
    fired: u64,
    /// Runs where the fault fired and every answer was git's, no error.
    held: u64,
    /// Of those and the reported ones: runs that listed the repository again more often than the run without a
    /// fault (the store retried).
    retried: u64,
    /// Runs where the fault fired and some answer was an error (every other answer git's).
    reported: u64,
    /// ENOENT only: runs with a miss for an object that exists (the file said it was gone).
    gone: u64,
}

/// Walk every call position of `kinds` for each of `errnos` (`Fault::once`), and with `lasting`, a sample of
/// positions with `Fault::from_then_on`; print the table and fail on any violation.
fn walk(errnos: &[(&str, i32)], kinds: &[Call], lasting: bool) {
    let fx = fixture();
    let (clean, counts) = fault::count_on_this_thread(|| run(&fx));
    assert!(
        clean.violations.is_empty() && clean.errors == 0,
        "without a fault: {:?}",
        clean.violations
    );
    let mut table = Vec::new();
    let mut violations = Vec::new();
    for &(name, e) in errnos {
        for &call in kinds {
            let n = counts.calls(call);
            let mut row = Row::default();
            let mut plans: Vec<Fault> = (1..=n).map(|i| Fault::once(call, i, e)).collect();
            if lasting {
                let step = (n / 6).max(1);
                plans.extend(
                    (1..=n)
                        .step_by(step as usize)
                        .map(|i| Fault::from_then_on(call, i, e)),
                );
            }
            for plan in plans {
                row.runs += 1;
                let (seen, report) =
                    fault::on_this_thread(plan, || catch_unwind(AssertUnwindSafe(|| run(&fx))));
                let seen = match seen {
                    Ok(s) => s,
                    Err(_) => {
                        violations.push(format!("{plan:?}: panic"));
                        continue;
                    }
                };
                if report.fired == 0 {
                    continue;
                }
                row.fired += 1;
                let gone_ok = e == errno::ENOENT;
                if seen.violations.is_empty()
                    || (gone_ok && seen.violations.iter().all(|v| v.contains("miss")))
                {
                    if seen.gone > 0 {
                        row.gone += 1;
                    } else if seen.errors > 0 {
                        row.reported += 1;
                    } else {
                        row.held += 1;
                    }
                    if seen.listings > clean.listings {
                        row.retried += 1;
                    }
                } else {
                    violations.extend(
                        seen.violations
                            .iter()
                            .take(3)
                            .map(|v| format!("{plan:?}: {v}")),
                    );
                }
            }
            table.push((call, name, row));
        }
    }
    println!(
        "fault matrix ({} objects + {} absent ids; chain: {}; calls without a fault: {:?})",
        fx.present.len(),
        fx.absent.len(),
        if fx.chain {
            "yes"
        } else {
            "not written by this git"
        },
        Call::ALL
            .iter()
            .map(|c| (c.name(), counts.calls(*c)))
            .collect::<Vec<_>>()
    );
    println!("| call | errno | runs | fired | held | retried | reported | gone |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (call, name, r) in &table {
        println!(
            "| {} | {name} | {} | {} | {} | {} | {} | {} |",
            call.name(),
            r.runs,
            r.fired,
            r.held,
            r.retried,
            r.reported,
            r.gone
        );
    }
    assert!(
        violations.is_empty(),
        "{} violations, first: {:#?}",
        violations.len(),
        &violations[..violations.len().min(20)]
    );
}

/// The kinds of system call the library makes (a thread is spawned by the command, not the library).
const KINDS: [Call; 6] = [
    Call::Open,
    Call::Stat,
    Call::Read,
    Call::Map,
    Call::List,
    Call::Resolve,
];

/// The short form: EIO at every call position of every kind, once.
#[test]
fn one_failed_call_never_makes_a_silent_miss() {
    walk(&[("EIO", errno::EIO)], &KINDS, false);
}

/// The full matrix: every errno class (ENOENT the control), every kind and position, once and from then on.
#[test]
#[ignore = "the full fault matrix: a few minutes; CI runs it"]
fn matrix() {
    walk(
        &[
            ("EIO", errno::EIO),
            ("EMFILE", errno::EMFILE),
            ("ENOMEM", errno::ENOMEM),
            ("EINTR", errno::EINTR),
            ("EACCES", errno::EACCES),
            ("ENOENT", errno::ENOENT),
        ],
        &KINDS,
        true,
    );
}

/// Date the objects directory of `repo`, its `pack/` and its fan-out directories an hour back: a listing made
/// now trusts their timestamps (no re-listing because they are too recent), as in a repository at rest.
fn settle(repo: &std::path::Path) {
    set_objects_dirs_mtime(
        repo,
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600),
    );
}

/// How many of `ids` a store opened on `repo` finds, one lookup each (the first error, if any).
fn objects_found(repo: &std::path::Path, ids: &[String]) -> Result<usize, odb_index::Error> {
    let store = Store::open(repo, Options::default())?;
    let mut h = store.handle();
    let mut found = 0;
    for id in ids {
        if h.locate(&oid(id))?.is_some() {
            found += 1;
        }
    }
    Ok(found)
}

/// Issue 47, 1: one failed `stat` of a `.pack` (or its `.idx`) while the pack directory is listed dropped the
/// pack for the run (`scan.rs` did `dir.stat(name).ok()?`): every object of it answered "missing", silently.
/// Every `stat` position of the store's open is failed once in turn; every object is found each time (or the
/// open is an error).
#[test]
fn a_failed_stat_while_listing_never_drops_a_pack() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 10, 1, "a");
    fast_import_blobs(repo.path(), 10, 2, "b");
    let ids = all_objects(repo.path());
    settle(repo.path());
    let (clean, seen) = fault::count_on_this_thread(|| objects_found(repo.path(), &ids));
    assert_eq!(clean.unwrap(), ids.len());
    for call in KINDS {
        for n in 1..=seen.calls(call) {
            for e in [
                errno::EIO,
                errno::EMFILE,
                errno::ENOMEM,
                errno::EINTR,
                errno::EACCES,
            ] {
                let (r, _) = fault::on_this_thread(Fault::once(call, n, e), || {
                    objects_found(repo.path(), &ids)
                });
                if let Ok(found) = r {
                    assert_eq!(found, ids.len(), "{call:?} #{n} failed with errno {e}");
                }
            }
        }
    }
}

/// A bare repository whose only objects are `n` loose objects of its alternate (another bare repository, named
/// in its `info/alternates`): the repository, the alternate (kept alive) and the objects' ids.
fn repo_borrowing_loose_objects(n: usize) -> (tempfile::TempDir, tempfile::TempDir, Vec<String>) {
    let alternate = init_repo("sha1", true);
    let loose = write_loose(alternate.path(), "alt", n);
    let repo = init_repo("sha1", true);
    let objects = objects_dir(repo.path());
    std::fs::create_dir_all(objects.join("info")).unwrap();
    std::fs::write(
        objects.join("info/alternates"),
        format!("{}\n", canon(&objects_dir(alternate.path())).display()),
    )
    .unwrap();
    settle(repo.path());
    settle(alternate.path());
    (repo, alternate, loose)
}

/// A loose objects directory that cannot be opened (the own objects directory's descriptor, or an
/// alternate's) made its loose objects unsearched and a miss certain: "missing" for every loose object. Now a
/// miss lists again once, and an error if the open keeps failing.
#[test]
fn a_loose_directory_that_failed_to_open_is_not_a_miss() {
    let (repo, _alternate, loose) = repo_borrowing_loose_objects(4);
    let (clean, seen) = fault::count_on_this_thread(|| objects_found(repo.path(), &loose));
    assert_eq!(clean.unwrap(), loose.len());
    for n in 1..=seen.calls(Call::Open) {
        for persist in [false, true] {
            let plan = Fault {
                persist,
                ..Fault::once(Call::Open, n, errno::EMFILE)
            };
            let (r, _) = fault::on_this_thread(plan, || objects_found(repo.path(), &loose));
            if let Ok(found) = r {
                assert_eq!(found, loose.len(), "{plan:?}");
            }
        }
    }
}

/// The alternate of `a_loose_directory_that_failed_to_open_is_not_a_miss`, under `IncompleteMode::Miss` (the
/// command's: git's `missing` for files that are there but cannot be used): an alternate whose path could not be
/// resolved or `stat`ed, by EIO or EMFILE from some call on, is an error for its objects, never "missing". Those
/// two have no `ErrorKind` of their own: the listing kept the alternate's failure without the OS's error number,
/// so the fault policy (`fault::is_transient`) could not tell it may pass, and the objects answered `Ok(None)`.
#[test]
fn an_alternate_that_could_not_be_resolved_is_an_error_under_incomplete_mode_miss() {
    let (repo, _alternate, loose) = repo_borrowing_loose_objects(3);
    let found = || -> Result<usize, odb_index::Error> {
        let options = Options::default().incomplete(odb_index::IncompleteMode::Miss);
        let store = Store::open(repo.path(), options)?;
        let mut h = store.handle();
        let mut found = 0;
        for id in &loose {
            found += usize::from(h.locate(&oid(id))?.is_some());
        }
        Ok(found)
    };
    let (clean, seen) = fault::count_on_this_thread(found);
    assert_eq!(clean.unwrap(), loose.len());
    let mut errors = 0;
    for call in [Call::Resolve, Call::Stat] {
        for n in 1..=seen.calls(call) {
            for e in [errno::EIO, errno::EMFILE] {
                let plan = Fault::from_then_on(call, n, e);
                match fault::on_this_thread(plan, found).0 {
                    Ok(n) => assert_eq!(n, loose.len(), "{plan:?}: a silent miss"),
                    Err(_) => errors += 1,
                }
            }
        }
    }
    assert!(errors > 0, "no fault reached the alternate");
}
