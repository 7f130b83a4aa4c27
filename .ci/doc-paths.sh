#!/usr/bin/env bash
# Every repository path the documents name exists: README.md, cli/README.md, .ci/README.md and docs/*.md (not
# CHANGELOG.md, whose entries name files as they were then). A path is a word with a slash and a file extension
# whose first component is a directory at the top of the repository (`tests/integration/stress.rs`) or, written
# relative to `src/`, a directory there (`store/mod.rs`); anything else (`/tmp/x.svg`, gix-odb's own
# `src/store_impls/...` inside `gix-odb-0.87.0/`, git's `t/t1006-cat-file.sh`) is not this repository's. Globs
# (`docs/upstream/[123]-*/`) and paths outside the repository (`../shared/...`) are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=()
for f in README.md cli/README.md .ci/README.md docs/*.md; do
    [ -f "$f" ] && docs+=("$f")
done
missing=0
while IFS=: read -r doc path; do
    case "$path" in *'*'* | *'['*) continue ;; esac
    first=${path%%/*}
    # Outside the repository (`../shared/...`, the workplace's notes): not checked.
    case "$first" in . | ..) continue ;; esac
    if [ "$first" != target ] && [ -d "$first" ]; then
        want=$path
    elif [ -d "src/$first" ]; then
        want=src/$path
    else
        continue
    fi
    if [ ! -e "$want" ]; then
        echo "$doc names $path: there is no $want" >&2
        missing=1
    fi
done < <(grep -oE '[A-Za-z0-9_.*[-]+(/[A-Za-z0-9_.*[-]+)*/[A-Za-z0-9_.*[-]+\.(rs|md|sh|diff|toml|py|svg|txt|json|lock)\b' "${docs[@]}" \
    | grep -vE ':/' | sort -u)
if [ "$missing" -ne 0 ]; then
    echo "fix the paths above (or the files they name)" >&2
    exit 1
fi
echo "every repository path named in ${docs[*]} exists"
