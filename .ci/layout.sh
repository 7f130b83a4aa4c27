#!/usr/bin/env bash
# The workspace's layout.
#
# Fails on a `#[path]` attribute anywhere in the workspace: a module is the file its name says.
#
# Reports (never fails on) every Rust file of any package over 600 lines, with the one-line reason at its top
# when it gives one (a comment line starting `Over 600 lines:` among its first 5 lines): a long file is a
# question for review, split by design (a format's parsing, lookup and verification apart; tests by topic), not
# cut at a number. The hard layout rules are clippy's (.clippy.toml, `cargo clippy` in .ci/run): no function over
# 80 lines outside tests (`too_many_lines`, enabled in the workspace's [lints]), no `too_many_arguments`
# allowance in the library (`#![forbid(clippy::too_many_arguments)]` in src/lib.rs).
#
# Usage: .ci/layout.sh
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
long=0
while IFS= read -r f; do
    n=$(wc -l <"$f")
    [ "$n" -gt 600 ] || continue
    long=$((long + 1))
    reason=$(head -5 "$f" | grep -E '^\s*//[!/]?\s*Over 600 lines:' | sed -E 's|^\s*//[!/]?\s*||' || true)
    echo "layout: $f $n lines${reason:+ ($reason)}"
done < <(find . \( -name target -o -name .git \) -prune -o -name '*.rs' -print | sed 's|^\./||' | sort)
echo "layout: $long Rust files over 600 lines (a report: see above)"

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
