//! File names as git prints them: `quote_c_style` with `core.quotePath` on (its default), which is gix-quote's
//! `ansi_c::quote` (exported by the adapter).

use std::path::Path;

use odb_index_gix::gix_quote::ansi_c::quote;

/// Append `name` to `out` as git prints a path: as is when it holds only printable ASCII other than `"` and
/// `\`, else in double quotes with C escapes (`\n`, `\t`, `\"`, `\\`, ...) and every other byte outside
/// printable ASCII in octal (`\303\251`), so that a name with a newline stays on its line.
pub fn quote_c_style(name: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&quote(name.into()));
}

/// `path` quoted as [`quote_c_style`] does (the result is printable ASCII).
pub fn quote_path(path: &Path) -> String {
    quote(path.as_os_str().as_encoded_bytes().into()).to_string()
}
