#!/usr/bin/env bash
# The public API of the two published packages as lists, one item a user can name per line, from rustdoc's JSON
# output (nightly toolchain) through .ci/public-api.py: odb-index in docs/public-api.txt, the gix adapter
# (odb-index-gix) in docs/public-api-gix.txt. Every line is a semver promise (README, "Versioning"), so CI fails
# when a surface changes without its file changing in the same commit. Each package is documented with its
# default features (`-p` alone): odb-index's `test-support` and `reader-hooks` are not in its list.
#
# Usage: .ci/public-api.sh           compare with the committed lists (fails with the difference)
#        .ci/public-api.sh --bless   rewrite them
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}/public-api
status=0
for pair in "odb-index:odb_index:docs/public-api.txt" "odb-index-gix:odb_index_gix:docs/public-api-gix.txt"; do
  IFS=: read -r package crate list <<<"$pair"
  cargo +nightly rustdoc -q -p "$package" --lib --target-dir "$target" -- -Z unstable-options --output-format json --document-hidden-items
  current=$(mktemp)
  python3 .ci/public-api.py "$target/doc/$crate.json" >"$current"
  if [ "${1:-}" = "--bless" ]; then
    cp "$current" "$list"
    echo "$list: $(wc -l <"$current") items"
  elif ! diff -u "$list" "$current"; then
    echo "the public API of $package changed (above: - the committed list, + the code's); if that is meant, run" >&2
    echo ".ci/public-api.sh --bless, commit $list, and note it in CHANGELOG.md" >&2
    status=1
  else
    echo "public API of $package unchanged: $(wc -l <"$current") items ($list)"
  fi
  rm -f "$current"
done
exit $status
