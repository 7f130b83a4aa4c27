//! `odb-index-bench --quick --json`: every line is a JSON object (read with serde_json) and the rows hold every
//! arm of every scenario, gix-odb's and git's included; a table run ends with the targets and the comparison
//! table. No timing thresholds: only the shape of the output is checked.
#![cfg(not(any(loom, shuttle)))]
// Test scenarios read top to bottom: the 80-line rule is for the shipped code.
#![allow(clippy::too_many_lines)]

use std::process::Command;

use serde_json::{Map, Value};

type Json = Map<String, Value>;

#[test]
#[ignore = "long (the whole main job in its quick form, 72 s at load 8): .ci/run runs it (cargo test --release --workspace -- --ignored)"]
fn quick_json_run_has_every_odb_index_arm_and_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_odb-index-bench"))
        .args(["--quick", "--json"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run odb-index-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("JSON output is UTF-8");
    let rows: Vec<Json> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!rows.is_empty(), "no JSON lines; stderr: {stderr}");
    for r in &rows {
        for key in [
            "scenario",
            "arm",
            "ns_per_lookup_min",
            "ns_per_lookup_median",
            "allocs_per_lookup",
            "runs",
        ] {
            assert!(r.contains_key(key), "{key} missing in {r:?}");
        }
        assert!(r["scenario"].is_string(), "{r:?}");
        assert!(r["arm"].is_string(), "{r:?}");
    }
    let has = |scenario: &str, arm: &str| {
        rows.iter()
            .any(|r| r["scenario"] == scenario && r["arm"] == arm)
    };
    let lookup = |scenario: &str, arm: &str| {
        rows.iter()
            .find(|r| r["scenario"] == scenario && r["arm"] == arm)
            .unwrap_or_else(|| panic!("no row {scenario} / {arm}"))
            .clone()
    };
    let odb = [
        "odb-index loose=probe",
        "odb-index loose=none",
        "odb-index loose=cached",
    ];
    for scenario in ["miss-1pack", "hit-1pack-random"] {
        for arm in odb {
            let r = lookup(scenario, arm);
            let positive = |k: &str| r[k].as_f64().is_some_and(|x| x > 0.0);
            assert!(positive("ns_per_lookup_min"), "{r:?}");
            assert!(positive("ns_per_lookup_median"), "{r:?}");
            assert!(r["allocs_per_lookup"].is_number(), "{r:?}");
            assert!(r["runs"].as_u64().is_some_and(|x| x >= 1), "{r:?}");
        }
    }
    for scenario in [
        "miss-100packs",
        "hit-100packs-random",
        "miss-100packs-midx",
        "hit-100packs-midx-random",
    ] {
        assert!(has(scenario, "odb-index loose=probe"), "{scenario}");
        assert!(has(scenario, "odb-index loose=none"), "{scenario}");
    }
    assert!(has("floor-missing-loose", "floor fstatat (relative)"));
    assert!(has("floor-missing-loose", "floor statx (absolute)"));
    assert!(has("miss-2threads", "odb-index loose=none"));
    let scenarios: Vec<&str> = rows.iter().filter_map(|r| r["scenario"].as_str()).collect();
    for prefix in [
        "cold-load-",
        "miss-",
        "hit-",
        "waiters-1core",
        "syscalls-per-miss",
        "target",
    ] {
        assert!(
            scenarios.iter().any(|s| s.starts_with(prefix)),
            "no scenario starting with {prefix}"
        );
    }
    let big_miss = scenarios
        .iter()
        .find(|s| s.starts_with("miss-") && s.ends_with("-index"))
        .expect("a big-index miss scenario");
    for arm in [
        "odb-index loose=none",
        "PackIndex::lookup",
        "PackIndex::lookup_binary",
    ] {
        assert!(has(big_miss, arm), "{big_miss} / {arm}");
    }
    // The peers run in the same process, in every scenario that names them.
    for arm in ["gix-odb 0.83", "gix-odb 0.87"] {
        assert!(has("miss-1pack", arm), "{arm}");
        assert!(has("hit-1pack-random", arm), "{arm}");
    }
    assert!(has("miss-100packs", "gix-odb 0.87"));

    // Issue 14's scenarios: fresh ids on 1 and 100 packs and the big index (with their peers), the filter
    // off for comparison, the batched probe, both probe floors, the filter's figures and both filters' builds,
    // the sparse index's open, the real-history arm, and every new target.
    for scenario in ["miss-1pack-fresh", "miss-100packs-fresh"] {
        for arm in [
            "odb-index loose=none",
            "odb-index loose=none filter=off",
            "gix-odb 0.87",
        ] {
            assert!(has(scenario, arm), "{scenario} / {arm}");
        }
    }
    let big_fresh = format!("{big_miss}-fresh");
    for arm in [
        "odb-index loose=none",
        "odb-index loose=none filter=off",
        "gix-odb 0.87",
    ] {
        assert!(has(&big_fresh, arm), "{big_fresh} / {arm}");
    }
    assert!(has("miss-1pack", "odb-index loose=probe locate_many"));
    assert!(has("floor-missing-loose", "floor fstatat (in a function)"));
    for scenario in ["filter-1pack", "filter-100packs"] {
        let r = rows
            .iter()
            .find(|r| r["scenario"] == scenario)
            .unwrap_or_else(|| panic!("no {scenario} row"));
        assert!(r["filter_bytes_per_id"].is_number(), "{r:?}");
        assert!(r["filter_build_ms_per_million_ids"].is_number(), "{r:?}");
    }
    for arm in ["split-block Bloom (store)", "binary fuse 8 (xorf)"] {
        let r = lookup("filter-build", arm);
        for k in [
            "build_ms_per_million_ids",
            "bytes_per_id",
            "false_positive_rate",
        ] {
            assert!(r[k].is_number(), "{k} in {r:?}");
        }
    }
    assert!(
        scenarios
            .iter()
            .any(|s| s.starts_with("open-first-miss-sparse-")),
        "no sparse-index open"
    );
    // The history arm: its repository is written by the bench itself, so it is always measured.
    for scenario in ["miss-real", "miss-real-fresh", "hit-real-random"] {
        assert!(has(scenario, "odb-index loose=none"), "{scenario}");
        assert!(has(scenario, "gix-odb 0.87"), "{scenario}");
    }
    for target in [
        "100 packs, no midx, miss (loose none) vs the one-pack miss",
        "100 packs, no midx, miss (loose none) vs gix-odb 0.87",
        "batched probed miss (locate_many) vs the in-function fstatat floor",
        "sparse 2^31-object index: open + first miss",
        "instructions per miss without probe (callgrind)",
        "miss filter memory (1M index)",
    ] {
        let r = lookup("target", target);
        assert!(r["limit"].is_number(), "{r:?}");
    }
    // Every target says whether it is a verdict: a count, or a ratio of times measured side by side, is met or
    // MISSED whatever the load; a time alone is not judged and carries the load sampled during the rows.
    for r in rows.iter().filter(|r| r["scenario"] == "target") {
        let judged = r["judged"].as_bool().expect("judged");
        let load_dependent = r["load_dependent"].as_bool().expect("load_dependent");
        assert!(
            !judged || !load_dependent || r["unit"] == "x",
            "a time judged: {r:?}"
        );
        assert!(judged || load_dependent, "a count not judged: {r:?}");
        if r.get("value").is_some_and(Value::is_number) {
            let status = r["status"].as_str().expect("status");
            if judged {
                assert!(status == "met" || status == "MISSED", "{r:?}");
            } else {
                assert!(r.get("load").is_some_and(Value::is_number), "{r:?}");
                assert_eq!(status, "not judged", "{r:?}");
            }
        }
    }
    // Scenario 12: the chain's open (100 layers in a quick run) beside git's, each a process; system calls when
    // strace is installed, and the two targets judged on them.
    for arm in [
        "odb-index adapter info (process)",
        "git cat-file --batch-check (process)",
    ] {
        let r = lookup("open-chain-100", arm);
        assert!(r["ns_per_lookup_median"].is_number(), "{r:?}");
    }
    let r = lookup("open-chain-100", "odb-index adapter info (process)");
    assert!(r["time_ratio_to_git"].is_number(), "{r:?}");
    let strace = Command::new("strace").arg("-V").output();
    if strace.is_ok_and(|o| o.status.success()) {
        assert!(r["syscalls_ratio_to_git"].is_number(), "{r:?}");
        let t = lookup(
            "target",
            "open-chain: a 1 000-layer chain's open in no more system calls than git",
        );
        assert!(t["limit"].is_number(), "{t:?}");
    }
    // git only where it does the same work per id (the front end's batch, a process each, type and size read):
    // no git row beside an in-process lookup.
    let git_rows: Vec<_> = rows
        .iter()
        .filter(|r| r["arm"] == "git cat-file --batch-check --buffer")
        .map(|r| r["scenario"].as_str().unwrap_or_default())
        .collect();
    assert!(
        git_rows.iter().all(|s| *s == "batch-front-end-real"),
        "a git row beside the in-process arms: {git_rows:?}"
    );
}

/// Without `--json`, a `--scenario batches --quick` run ends with the targets and the comparison table.
#[test]
fn table_run_ends_with_targets_and_the_comparison() {
    let out = Command::new(env!("CARGO_BIN_EXE_odb-index-bench"))
        .args(["--scenario", "batches", "--quick"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run odb-index-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let targets = stdout
        .find("targets (docs/BENCHMARKS.md")
        .expect("a targets part");
    let table = stdout
        .find("odb-index beside gix-odb 0.87 and git")
        .expect("a comparison table");
    assert!(targets < table, "{stdout}");
    assert!(stdout.contains("(target <= 0.01 syscalls): "), "{stdout}");
    let tail = &stdout[table..];
    assert!(tail.contains("batch: front end, a history"), "{tail}");
    assert!(tail.contains("during the rows"), "{tail}");
}

/// A main job survives a rebuild of its binary while it runs (`cargo test` in another terminal replaces
/// `target/release/odb-index-bench`): the scenarios that run the program again as a child run the file that is
/// running, not the path it was started from. Here the copy that runs is deleted right after it starts; the
/// chain scenario then runs it as its own child (and under strace) many times. Fails (exit 2, "No such file")
/// when the children are started from `current_exe`, which names the deleted file.
#[test]
fn a_run_survives_its_binary_being_replaced() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let copy = dir.path().join("odb-index-bench");
    std::fs::copy(env!("CARGO_BIN_EXE_odb-index-bench"), &copy).expect("copy the binary");
    let child = Command::new(&copy)
        .args(["--scenario", "open-chain", "--quick"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the copy");
    // As cargo replaces the binary: the running file is gone from its path.
    std::fs::remove_file(&copy).expect("remove the running copy");
    let out = child.wait_with_output().expect("wait for the run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("chain"), "no chain row: {stdout}");
}
