#![cfg(not(loom))]
//! `odb-index bench --quick --json`: the JSON lines parse and hold the odb-index arms of every scenario.
//! No timing thresholds: only the shape of the output is checked.

use std::collections::BTreeMap;
use std::process::Command;

/// A JSON value of the flat objects `bench --json` prints.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

/// Parse one flat JSON object (string keys; string, number, boolean or null values).
fn parse_object(line: &str) -> Result<BTreeMap<String, Json>, String> {
    let b = line.trim().as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> Result<String, String> {
        if b.get(*i) != Some(&b'"') {
            return Err(format!("expected a string at {i}"));
        }
        *i += 1;
        let mut s = Vec::new();
        loop {
            match b.get(*i) {
                None => return Err("unterminated string".into()),
                Some(b'"') => {
                    *i += 1;
                    break;
                }
                Some(b'\\') => {
                    let c = *b.get(*i + 1).ok_or("bad escape")?;
                    match c {
                        b'"' | b'\\' | b'/' => s.push(c),
                        b'n' => s.push(b'\n'),
                        b't' => s.push(b'\t'),
                        b'u' => {
                            let hex = std::str::from_utf8(b.get(*i + 2..*i + 6).ok_or("bad \\u")?)
                                .map_err(|e| e.to_string())?;
                            let cp = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                            let ch = char::from_u32(cp).ok_or("bad code point")?;
                            s.extend_from_slice(ch.to_string().as_bytes());
                            *i += 4;
                        }
                        _ => return Err(format!("unknown escape {}", c as char)),
                    }
                    *i += 2;
                }
                Some(&c) => {
                    s.push(c);
                    *i += 1;
                }
            }
        }
        String::from_utf8(s).map_err(|e| e.to_string())
    };
    let mut map = BTreeMap::new();
    ws(&mut i);
    if b.get(i) != Some(&b'{') {
        return Err("not an object".into());
    }
    i += 1;
    loop {
        ws(&mut i);
        if b.get(i) == Some(&b'}') {
            i += 1;
            break;
        }
        let key = string(&mut i)?;
        ws(&mut i);
        if b.get(i) != Some(&b':') {
            return Err(format!("expected ':' after {key}"));
        }
        i += 1;
        ws(&mut i);
        let value = match b.get(i) {
            Some(b'"') => Json::Str(string(&mut i)?),
            Some(b't') if b[i..].starts_with(b"true") => {
                i += 4;
                Json::Bool(true)
            }
            Some(b'f') if b[i..].starts_with(b"false") => {
                i += 5;
                Json::Bool(false)
            }
            Some(b'n') if b[i..].starts_with(b"null") => {
                i += 4;
                Json::Null
            }
            Some(_) => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let t = std::str::from_utf8(&b[start..i]).map_err(|e| e.to_string())?;
                Json::Num(
                    t.parse()
                        .map_err(|_| format!("bad number {t:?} for {key}"))?,
                )
            }
            None => return Err("truncated".into()),
        };
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("duplicate key {key}"));
        }
        ws(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {
                i += 1;
                break;
            }
            _ => return Err(format!("expected ',' or '}}' after {key}")),
        }
    }
    ws(&mut i);
    if i != b.len() {
        return Err("trailing characters".into());
    }
    Ok(map)
}

#[test]
fn parser_reads_what_bench_writes() {
    let m =
        parse_object(r#"{"a": "x\"y\u0001", "b": -1.5e3, "c": null, "d": true, "e": 3}"#).unwrap();
    assert_eq!(m["a"], Json::Str("x\"y\u{1}".into()));
    assert_eq!(m["b"], Json::Num(-1500.0));
    assert_eq!(m["c"], Json::Null);
    assert_eq!(m["d"], Json::Bool(true));
    assert!(parse_object(r#"{"a": 1"#).is_err());
    assert!(parse_object(r#"{"a" 1}"#).is_err());
}

#[test]
fn quick_json_run_has_every_odb_index_arm_and_scenario() {
    let out = Command::new(env!("CARGO_BIN_EXE_odb-index"))
        .args(["bench", "--quick", "--json"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run odb-index bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("JSON output is UTF-8");
    let rows: Vec<BTreeMap<String, Json>> = stdout
        .lines()
        .map(|l| parse_object(l).unwrap_or_else(|e| panic!("{e}: {l}")))
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
        assert!(matches!(r["scenario"], Json::Str(_)));
        assert!(matches!(r["arm"], Json::Str(_)));
    }
    let has = |scenario: &str, arm: &str| {
        rows.iter().any(|r| {
            r["scenario"] == Json::Str(scenario.into()) && r["arm"] == Json::Str(arm.into())
        })
    };
    let lookup = |scenario: &str, arm: &str| {
        rows.iter()
            .find(|r| {
                r["scenario"] == Json::Str(scenario.into()) && r["arm"] == Json::Str(arm.into())
            })
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
            assert!(
                matches!(r["ns_per_lookup_min"], Json::Num(x) if x > 0.0),
                "{r:?}"
            );
            assert!(
                matches!(r["ns_per_lookup_median"], Json::Num(x) if x > 0.0),
                "{r:?}"
            );
            assert!(matches!(r["allocs_per_lookup"], Json::Num(_)), "{r:?}");
            assert!(matches!(r["runs"], Json::Num(x) if x >= 1.0), "{r:?}");
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
    let scenarios: Vec<&str> = rows
        .iter()
        .filter_map(|r| match &r["scenario"] {
            Json::Str(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
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
    // Built without `compare-gix` the gix arms are absent; with it they are present. Either way consistent.
    let gix = has("miss-1pack", "gix-odb 0.87");
    assert_eq!(gix, has("miss-1pack", "gix-odb 0.83"));
}
