//! Scenarios 7 and 9: system calls per miss (strace) and instructions per miss (callgrind).

use super::*;

/// Instructions per miss from callgrind (`valgrind --tool=callgrind --toggle-collect=*only_miss_loop_body*`
/// on this binary's `--only-miss-loop N --arm A`), skipped with a note if valgrind is missing.
pub(super) fn instructions(objects: &Path, n: usize) -> Result<Vec<Row>, String> {
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
    let exe = crate::self_exe()?;
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

/// Syscalls per miss under `strace -f -c`: this binary re-run in its `--only-miss-loop` mode with N and 2N
/// misses; the difference divided by N.
pub(super) fn syscalls(
    scenario: &str,
    objects: &Path,
    kinds: &[Kind],
    n: usize,
) -> Result<Vec<Row>, String> {
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
    let exe = crate::self_exe()?;
    let mut rows = Vec::new();
    for &k in kinds {
        let mut counts = Vec::new();
        for m in [n, 2 * n] {
            counts.push(strace_miss_loop(&exe, objects, k, m)?);
        }
        let (total, per) = crate::strace::per_unit(&counts[0], &counts[1], n as f64, 0.005);
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

/// The `strace -f -c` summary of this binary's `--only-miss-loop M --arm K` on `objects`.
fn strace_miss_loop(exe: &Path, objects: &Path, k: Kind, m: usize) -> Result<String, String> {
    let out = std::env::temp_dir().join(format!(
        "odb-index-strace-{}-{}-{m}.txt",
        std::process::id(),
        k.flag()
    ));
    let st = std::process::Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .arg(exe)
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
    Ok(text)
}
