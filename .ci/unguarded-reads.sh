#!/usr/bin/env bash
# Fails on a file read that does not go through the one guarded read of `src/data.rs` (regular files only,
# opened without blocking, bounded): `std::fs::read(`, `fs::read_to_string(`, `File::open` or `read_to_end` in
# the library (`src/`), the command (`cli/src/`) or the adapter (`gix/src/`), naming each file and line.
#
# Not checked: `src/data.rs` itself; test code (files named `tests.rs`, and everything from a file's first
# `#[cfg(test)]` / `#[cfg(all(test, ...))]` line on: test modules sit at the end of their file); comment lines.
#
# Usage: .ci/unguarded-reads.sh
set -euo pipefail
cd "$(dirname "$0")/.."

found=$(find src cli/src gix/src -name '*.rs' ! -path src/data.rs ! -name tests.rs | sort | xargs perl -ne '
    if (/^\s*#\[cfg\((?:all\()?test\b/) { close ARGV; next; }
    next if m{^\s*//};
    print "$ARGV:$.: $_" if /\bstd::fs::read\s*\(|\bfs::read\s*\(|\bfs::read_to_string\s*\(|\bFile::open\b|\bread_to_end\b/;
} continue { close ARGV if eof; ')
if [[ -n $found ]]; then
    echo "unguarded-reads: read these through odb_index::data (open_regular, read_bounded, Data::open):" >&2
    echo "$found" >&2
    exit 1
fi
echo "unguarded-reads: every file read in src/, cli/src/ and gix/src/ goes through src/data.rs"
