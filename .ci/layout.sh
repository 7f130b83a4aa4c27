#!/usr/bin/env bash
# File sizes over the whole workspace (issues 31, 41): fails on a Rust file of any package (the library, cli/,
# gix/, bench/, testkit/, downstream/, tests/, loom-tests/, proptests/, fuzz/) over 600 lines without a one-line
# reason at its top (a comment line starting `Over 600 lines:` among its first 5 lines). A test file is usually
# better split by topic than given a reason.
#
# And no `#[path]` attribute anywhere in the workspace.
#
# The rest of the layout rules are clippy's (.clippy.toml, `cargo clippy` in .ci/run): no function over 80 lines
# outside tests (`too_many_lines`, enabled in the workspace's [lints]), no `too_many_arguments` allowance in the
# library (`#![forbid(clippy::too_many_arguments)]` in src/lib.rs).
#
# Usage: .ci/layout.sh [--report]   (--report prints every file over 600 lines and never fails)
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-}

status=0
while IFS= read -r f; do
    n=$(wc -l <"$f")
    [ "$n" -gt 600 ] || continue
    if head -5 "$f" | grep -qE '^\s*//[!/]?\s*Over 600 lines:'; then
        [[ $report == --report ]] && echo "ok $f $n lines (reason given)"
    else
        echo "file $f $n lines, no reason at its top" >&2
        status=1
    fi
done < <(find . \( -name target -o -name .git \) -prune -o -name '*.rs' -print | sed 's|^\./||' | sort)
[[ $report == --report ]] && exit 0
if [[ $status == 0 ]]; then
    echo "layout: no file of the workspace over 600 lines without a reason at its top"
else
    echo "layout: the files above are over 600 lines: split them (by topic), or give a one-line reason at the top" >&2
fi

# No `#[path]` (issue 41): a module is the file its name says, and tests and models are targets of their own
# that reach internals through `odb_index::testing` (clippy has no lint for it).
if paths=$(find . \( -name target -o -name .git \) -prune -o -name '*.rs' -print0 | xargs -0 grep -nE '^\s*#\[path\s*=' ); then
    echo "$paths" >&2
    echo "layout: a #[path] attribute above: declare the module where its file is" >&2
    status=1
else
    echo "layout: no #[path] attribute in the workspace"
fi
exit $status
