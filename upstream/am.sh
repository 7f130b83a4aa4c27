#!/usr/bin/env bash
# Applies docs/upstream/[1234]-*/gix-odb-0.88.0.patch (or any of them) with `git am`, in the current repository.
# The patches name no author: whoever opens the pull requests is their author. `git am` needs one, so this puts
# yours (`git var GIT_AUTHOR_IDENT`: user.name/user.email or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL) in a `From:` line
# after the mbox line of each patch and passes it to `git am`. The commit messages end with the `Assisted-by:`
# trailer that gitoxide's CONTRIBUTING.md welcomes for AI assistance.
# Usage (in a git repository of the gix-odb 0.88.0 source, see docs/upstream/README.md):
#   path/to/upstream/am.sh path/to/docs/upstream/1-f1/gix-odb-0.88.0.patch ...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 PATCH..." >&2; exit 2; }
ident=$(git var GIT_AUTHOR_IDENT)
from="From: ${ident% * *}"   # drop the timestamp and the time zone
for patch in "$@"; do
    head -n 1 "$patch" | grep -q '^From [0-9a-f]\{40\} ' || { echo "$patch: not a format-patch file" >&2; exit 1; }
    if grep -q '^From: ' "$patch"; then
        git am --quiet "$patch"
    else
        sed "1a $from" "$patch" | git am --quiet
    fi
done
