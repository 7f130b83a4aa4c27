//! `odb-index-bench --quick --json`: every line is a JSON object (read with serde_json) and the rows hold every
//! arm of every scenario, gix-odb's included. No timing thresholds: only the shape of the output is checked.
#![cfg(not(loom))]

use std::process::Command;

use serde_json::{Map, Value};

type Json = Map<String, Value>;

#[test]
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
}
