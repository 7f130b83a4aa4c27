#!/usr/bin/env bash
# The public API of the two published packages as lists, one item a user can name per line, made by `cargo
# public-api` (rustdoc's JSON output, nightly toolchain): odb-index in docs/public-api.txt, the gix adapter
# (odb-index-gix) in docs/public-api-gix.txt. Every line is a semver promise (README, "Versioning"), so CI fails
# when a surface changes without its file changing in the same commit. Each package is listed with its default
# features: odb-index's `test-support` and `reader-hooks` are not in its list. `-ss` leaves out blanket impls
# and auto-trait impls (they follow from the fields); derived and written impls stay.
#
# cargo-public-api is installed (pinned, `cargo install --locked`) when absent; a new nightly whose rustdoc JSON
# format it does not read fails here with its own message: then move the pin to a release that reads it.
#
# Usage: .ci/public-api.sh           compare with the committed lists (fails with the difference)
#        .ci/public-api.sh --bless   rewrite them
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.52.0
if ! cargo public-api --version 2>/dev/null | grep -qx "cargo-public-api $version"; then
  cargo install --locked cargo-public-api --version "$version"
fi
status=0
for pair in "odb-index:docs/public-api.txt" "odb-index-gix:docs/public-api-gix.txt"; do
  IFS=: read -r package list <<<"$pair"
  current=$(mktemp)
  cargo public-api -p "$package" -ss --color never >"$current"
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
