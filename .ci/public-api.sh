#!/usr/bin/env bash
# The public API of odb-index as a list (docs/public-api.txt): every item a user can name, one per line, from
# rustdoc's JSON output (nightly toolchain) through .ci/public-api.py. Every line is a semver promise (README,
# "Versioning"), so CI fails when the surface changes without the file changing in the same commit.
#
# Usage: .ci/public-api.sh           compare with docs/public-api.txt (fails with the difference)
#        .ci/public-api.sh --bless   rewrite docs/public-api.txt
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}/public-api
cargo +nightly rustdoc -q -p odb-index --lib --target-dir "$target" -- -Z unstable-options --output-format json --document-hidden-items
current=$(mktemp)
trap 'rm -f "$current"' EXIT
python3 .ci/public-api.py "$target/doc/odb_index.json" >"$current"
if [ "${1:-}" = "--bless" ]; then
  cp "$current" docs/public-api.txt
  echo "docs/public-api.txt: $(wc -l <"$current") items"
  exit 0
fi
if ! diff -u docs/public-api.txt "$current"; then
  echo "the public API changed (above: - the committed list, + the code's); if that is meant, run" >&2
  echo ".ci/public-api.sh --bless, commit docs/public-api.txt, and note it in CHANGELOG.md" >&2
  exit 1
fi
echo "public API unchanged: $(wc -l <"$current") items (docs/public-api.txt)"
