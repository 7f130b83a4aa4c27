//! git's report of an ambiguous abbreviated id on stderr: `error: short object ID <prefix> is ambiguous`, then
//! `hint: The candidates are:` and one `hint:   <abbrev> <description>` line per candidate, tags first, then
//! commits, trees and blobs, each kind by id (git's `get_short_oid`, `show_ambiguous_object`,
//! `sort_ambiguous`).

use odb_index::ObjectId;
use odb_index_gix::Objects;
use odb_index_gix::convert::oid_from_gix;
use odb_index_gix::gix_object::Kind;

/// git's `FALLBACK_DEFAULT_ABBREV`.
const MIN_ABBREV: usize = 7;

/// The text git writes to stderr for the ambiguous `prefix` (lower case, as git prints it).
pub fn report(objects: &Objects, prefix: &str) -> String {
    let hex = prefix.to_ascii_lowercase();
    let mut out = format!("error: short object ID {hex} is ambiguous\nhint: The candidates are:\n");
    let mut handle = objects.handle();
    // The candidates by the adapter's name rules (`Objects::lookup_name`), the ones `batch-check` answered by.
    let candidates = match objects.lookup_name(&hex) {
        Err(odb_index_gix::Error::AmbiguousName { candidates, .. }) => candidates,
        _ => Vec::new(),
    };
    // git's `core.abbrev=auto`: about half the bits of the packed object count, at least 7 digits; counted once
    // per process (the command reads one repository), as git caches its approximate count.
    static MIN_LEN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let min_len = *MIN_LEN.get_or_init(|| {
        let packed = handle.count_objects().map_or(0, |c| c.packed);
        let auto = (u64::BITS - packed.max(1).leading_zeros()).div_ceil(2) as usize;
        auto.max(MIN_ABBREV)
    });
    let mut lines: Vec<(u8, ObjectId, String)> = candidates
        .iter()
        .map(|id| {
            let id = oid_from_gix(id);
            let len = handle.shortest_unique_len(&id, min_len).unwrap_or(min_len);
            let abbrev = &id.to_string()[..len];
            let mut data = Vec::new();
            let (rank, text) = match objects.read(&id, &mut data) {
                Ok(Some(info)) => describe(info.kind, &data, abbrev),
                _ => (4, format!("{abbrev} [bad object]")),
            };
            (rank, id, text)
        })
        .collect();
    lines.sort();
    for (_, _, text) in lines {
        out.push_str(&format!("hint:   {text}\n"));
    }
    out
}

/// The sort rank (tag, commit, tree, blob) and git's description of one candidate.
fn describe(kind: Kind, data: &[u8], abbrev: &str) -> (u8, String) {
    match kind {
        Kind::Tag => match (header(data, "tag "), header(data, "tagger ")) {
            (Some(name), tagger) => {
                let date = tagger.map_or(0, |t| signature_time(t).0);
                (0, format!("{abbrev} tag {} - {name}", short_date(date, 0)))
            }
            (None, _) => (0, format!("{abbrev} [bad tag, could not parse it]")),
        },
        Kind::Commit => {
            let (secs, tz) = header(data, "author ").map_or((0, 0), signature_time);
            (
                1,
                format!(
                    "{abbrev} commit {} - {}",
                    short_date(secs, tz),
                    subject(data)
                ),
            )
        }
        Kind::Tree => (2, format!("{abbrev} tree")),
        Kind::Blob => (3, format!("{abbrev} blob")),
    }
}

/// The value of the first header line starting with `key` (headers end at the first empty line).
fn header<'a>(data: &'a [u8], key: &str) -> Option<&'a str> {
    let end = data
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or(data.len());
    data[..end]
        .split(|&c| c == b'\n')
        .find_map(|l| std::str::from_utf8(l.strip_prefix(key.as_bytes())?).ok())
}

/// The time and zone (in minutes east) of `<name> <<email>> <seconds> <+hhmm>`.
fn signature_time(sig: &str) -> (i64, i64) {
    let mut parts = sig.rsplitn(3, ' ');
    let tz = parts.next().unwrap_or("");
    let secs = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let sign = if tz.starts_with('-') { -1 } else { 1 };
    let digits: i64 = tz.trim_start_matches(['+', '-']).parse().unwrap_or(0);
    (secs, sign * (digits / 100 * 60 + digits % 100))
}

/// git's `%s`: the first paragraph of the message, its lines joined by spaces.
fn subject(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    let message = text.split_once("\n\n").map_or("", |(_, m)| m);
    let para: Vec<&str> = message
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim_end)
        .collect();
    para.join(" ")
}

/// `YYYY-MM-DD` of `secs` in the zone `tz_minutes` east of UTC (git's `DATE_SHORT`).
fn short_date(secs: i64, tz_minutes: i64) -> String {
    // Howard Hinnant's civil-from-days.
    let z = (secs + tz_minutes * 60).div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_dates_as_git() {
        assert_eq!(super::short_date(0, 0), "1970-01-01");
        assert_eq!(super::short_date(1_700_000_000, 0), "2023-11-14");
        // 22:13:20 UTC is the next day at +0200 and the same day at -0500.
        assert_eq!(super::short_date(1_700_000_000, 120), "2023-11-15");
        assert_eq!(super::short_date(951_782_400, 0), "2000-02-29");
    }
}
