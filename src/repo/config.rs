//! The object format in a git directory's `config`, read with a small git-config parser.

use std::path::Path;

use crate::error::Error;
use crate::oid::HashKind;

/// The object format recorded in `git_dir/config` (`[extensions] objectFormat = sha256`).
///
/// Section and key names are case-insensitive; values may be quoted; `;` and `#` start comments outside
/// quotes; a key may follow the section header on the same line; the last assignment wins, as in git. A
/// missing `config` or a missing key means SHA-1. An unknown value is [`Error::UnknownObjectFormat`] naming the
/// config file; a `config` that is not a regular file (a FIFO, `/dev/zero`) or is longer than
/// 16 MiB is [`Error::Io`] naming it.
///
/// Deviations from git: `core.repositoryFormatVersion` is not checked (git refuses `objectFormat` in a
/// version-0 repository; this reads it anyway), includes are not followed, and lines this parser cannot
/// understand are skipped rather than rejected.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # git(&["config", "extensions.objectFormat", "sha256"])?; // as `git init --object-format=sha256` records it
/// use odb_index::{HashKind, repo};
///
/// assert_eq!(repo::object_format(&repo.path().join(".git"))?, HashKind::Sha256);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn object_format(git_dir: &Path) -> Result<HashKind, Error> {
    let path = git_dir.join("config");
    let data = match crate::data::read_bounded(&path, super::MAX_CONFIG_LEN) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashKind::Sha1),
        Err(e) => return Err(Error::io(&path, e)),
    };
    match config_value(&data, "extensions", "objectformat") {
        None => Ok(HashKind::Sha1),
        Some(v) => {
            let s = String::from_utf8_lossy(&v);
            s.parse::<HashKind>()
                .map_err(|source| Error::UnknownObjectFormat {
                    path: path.clone(),
                    source,
                })
        }
    }
}

/// The last value of `section.key` (no subsection) in git config text, or `None`. `section` and `key` must be
/// lower case. A key without `=` is a boolean `true`.
fn config_value(data: &[u8], section: &str, key: &str) -> Option<Vec<u8>> {
    let mut found = None;
    let mut in_section = false;
    let mut lines = data.split(|&b| b == b'\n');
    while let Some(line) = lines.next() {
        let mut rest = line.trim_ascii();
        if rest.first() == Some(&b'[') {
            let Some(close) = header_end(rest) else {
                // Malformed header: we cannot tell which section follows.
                in_section = false;
                continue;
            };
            in_section = header_matches(&rest[1..close], section);
            rest = rest[close + 1..].trim_ascii_start();
        }
        if rest.is_empty() || rest[0] == b'#' || rest[0] == b';' {
            continue;
        }
        if !in_section {
            continue;
        }
        let name_len = rest
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-'))
            .unwrap_or(rest.len());
        if name_len == 0 || !rest[..name_len].eq_ignore_ascii_case(key.as_bytes()) {
            continue;
        }
        let after = rest[name_len..].trim_ascii_start();
        if after.is_empty() || after[0] == b'#' || after[0] == b';' {
            found = Some(b"true".to_vec());
            continue;
        }
        if after[0] != b'=' {
            continue;
        }
        found = Some(parse_value(&after[1..], &mut lines));
    }
    found
}

/// Index of the `]` closing a section header starting at `line[0] == '['`, honouring a quoted subsection.
fn header_end(line: &[u8]) -> Option<usize> {
    let mut in_quote = false;
    let mut i = 1;
    while i < line.len() {
        match line[i] {
            b'\\' if in_quote => i += 1,
            b'"' => in_quote = !in_quote,
            b']' if !in_quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether header text (between `[` and `]`) names exactly `section` with no subsection.
fn header_matches(inner: &[u8], section: &str) -> bool {
    let inner = inner.trim_ascii();
    // `[section "sub"]` and the old `[section.sub]` both have a subsection: they do not match.
    inner.eq_ignore_ascii_case(section.as_bytes())
}

/// Parse a config value after `=`: strip surrounding whitespace and comments, unquote, unescape, and join
/// continuation lines (a trailing backslash).
fn parse_value<'a>(first: &'a [u8], lines: &mut impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut in_quote = false;
    // Whitespace seen outside quotes but not yet known to be internal (dropped if at the end).
    let mut pending_space = 0usize;
    let mut line = first;
    'lines: loop {
        let mut i = 0;
        while i < line.len() {
            let c = line[i];
            i += 1;
            match c {
                b'\r' if i == line.len() => {}
                b' ' | b'\t' if !in_quote => {
                    if !out.is_empty() {
                        pending_space += 1;
                    }
                }
                b'#' | b';' if !in_quote => break 'lines,
                b'"' => {
                    flush_space(&mut out, &mut pending_space);
                    in_quote = !in_quote;
                }
                b'\\' => {
                    if i >= line.len() || (line[i] == b'\r' && i + 1 == line.len()) {
                        // Continuation: the value goes on on the next line.
                        match lines.next() {
                            Some(next) => {
                                line = next;
                                continue 'lines;
                            }
                            None => break 'lines,
                        }
                    }
                    flush_space(&mut out, &mut pending_space);
                    let e = line[i];
                    i += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'b' => 8,
                        other => other,
                    });
                }
                other => {
                    flush_space(&mut out, &mut pending_space);
                    out.push(other);
                }
            }
        }
        break;
    }
    out
}

fn flush_space(out: &mut Vec<u8>, pending: &mut usize) {
    for _ in 0..*pending {
        out.push(b' ');
    }
    *pending = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt_of(config: &str) -> Option<String> {
        config_value(config.as_bytes(), "extensions", "objectformat")
            .map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn object_format_variants() {
        let plain =
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n";
        assert_eq!(fmt_of(plain).as_deref(), Some("sha256"));
        assert_eq!(
            fmt_of("[Extensions]\n\tObjectFormat=sha256").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[EXTENSIONS]\nOBJECTFORMAT = \"sha256\" ; comment").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\n  objectFormat = sha256   # trailing\n").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions] objectformat = sha256").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\r\n\tobjectformat = sha256\r\n").as_deref(),
            Some("sha256")
        );
        assert_eq!(
            fmt_of("[extensions]\n\tobjectformat = sha\\\n256\n").as_deref(),
            Some("sha256")
        );
        // Commented out.
        assert_eq!(
            fmt_of("[extensions]\n#\tobjectformat = sha256\n;objectformat=sha256"),
            None
        );
        // Same key in other sections, or with a subsection: not ours.
        assert_eq!(fmt_of("[core]\n\tobjectformat = sha256\n"), None);
        assert_eq!(
            fmt_of("[extensions \"x\"]\n\tobjectformat = sha256\n"),
            None
        );
        assert_eq!(fmt_of("[extensions.x]\n\tobjectformat = sha256\n"), None);
        assert_eq!(fmt_of("[extensionsx]\n\tobjectformat = sha256\n"), None);
        // A longer key that starts with ours.
        assert_eq!(fmt_of("[extensions]\n\tobjectformatx = sha256\n"), None);
        // Section switches back and forth; last assignment wins.
        let multi = "[extensions]\nobjectformat=sha1\n[core]\nobjectformat=x\n[extensions]\nobjectformat=sha256\n";
        assert_eq!(fmt_of(multi).as_deref(), Some("sha256"));
        // Quoted with a '#' inside the quotes.
        assert_eq!(
            fmt_of("[extensions]\nobjectformat = \"a#b\"").as_deref(),
            Some("a#b")
        );
        // No value: boolean true.
        assert_eq!(
            fmt_of("[extensions]\nobjectformat\n").as_deref(),
            Some("true")
        );
        // Garbage does not panic.
        assert_eq!(
            fmt_of("[extensions\nobjectformat = sha256\n\\\n\"\n[\"]"),
            None
        );
    }

    #[test]
    fn object_format_file() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(object_format(tmp.path()).unwrap(), HashKind::Sha1);
        std::fs::write(
            tmp.path().join("config"),
            "[extensions]\n\tobjectFormat = SHA256\n",
        )
        .unwrap();
        assert_eq!(object_format(tmp.path()).unwrap(), HashKind::Sha256);
        std::fs::write(
            tmp.path().join("config"),
            "[extensions]\n\tobjectFormat = md5\n",
        )
        .unwrap();
        match object_format(tmp.path()) {
            Err(Error::UnknownObjectFormat { path, source }) => {
                assert_eq!(path, tmp.path().join("config"));
                assert!(source.to_string().contains("md5"), "{source}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
