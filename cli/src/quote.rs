//! File names as git prints them: `quote_c_style` with `core.quotePath` on (its default).

use std::path::Path;

/// Append `name` to `out` as git prints a path: as is when it holds only printable ASCII other than `"` and
/// `\`, else in double quotes with C escapes (`\n`, `\t`, `\"`, `\\`, ...) and every other byte outside
/// printable ASCII in octal (`\303\251`), so that a name with a newline stays on its line.
pub fn quote_c_style(name: &[u8], out: &mut Vec<u8>) {
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if name.iter().all(|&b| plain(b)) {
        out.extend_from_slice(name);
        return;
    }
    out.push(b'"');
    for &b in name {
        let escape = match b {
            b'\x07' => b'a',
            b'\x08' => b'b',
            b'\t' => b't',
            b'\n' => b'n',
            b'\x0b' => b'v',
            b'\x0c' => b'f',
            b'\r' => b'r',
            b'"' | b'\\' => b,
            b if plain(b) => {
                out.push(b);
                continue;
            }
            b => {
                out.extend_from_slice(format!("\\{b:03o}").as_bytes());
                continue;
            }
        };
        out.extend_from_slice(&[b'\\', escape]);
    }
    out.push(b'"');
}

/// `path` quoted as [`quote_c_style`] does (the result is printable ASCII).
pub fn quote_path(path: &Path) -> String {
    let mut out = Vec::new();
    quote_c_style(path.as_os_str().as_encoded_bytes(), &mut out);
    String::from_utf8(out).expect("quoted names are ASCII")
}
