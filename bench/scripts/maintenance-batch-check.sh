#!/usr/bin/env sh
# Issue 28's end-to-end check: one long-running `odb-index batch-check` in its default configuration and default
# format (type and size: every object's header is read, not only located) answers every object of a repository
# over and over, while git maintains the repository underneath: loose copies of packed objects put back and
# pruned (`repack -d`, `prune-packed`: a loose file found by a lookup and pruned before it is read), `repack
# -adf` (every pack replaced), `gc --prune=now`, `multi-pack-index write`, `repack -d --write-midx`, pushes
# (fast-import packs on temporary branches) and their deletion with `prune --expire=now`, and new loose objects
# (reachable) asked for from the moment they exist, then packed and pruned by the next step. Every id asked is
# reachable throughout, so any `missing` is false. With GIT=1, `git cat-file --batch-check` runs the same way
# beside it (the control; it shares the machine's two cores).
#
# Usage: sh bench/scripts/maintenance-batch-check.sh [SECONDS] [WORK]   (defaults 300, a new temporary directory;
# ODB_INDEX=path runs another build of the command, e.g. an older commit's, as a control)
# Prints, per reader: lines answered, `missing` lines (the first five on stderr), other errors; and the
# maintenance steps run. Exit status 1 if odb-index answered any line `missing` or `error`.
set -eu
secs=${1:-300}
work=${2:-$(mktemp -d)}
top=$(cd "$(dirname "$0")/../.." && pwd)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
bin=${ODB_INDEX:-$top/target/release/odb-index}
[ -x "$bin" ] || (cd "$top" && cargo build --release -q -p odb-index-cli)

repo="$work/repo"
rm -rf "$repo"
git init -q --bare "$repo"
g() { git -C "$repo" -c gc.auto=0 -c maintenance.auto=false "$@"; }

# 3 000 blobs in a pack (fast-import), then 200 loose blobs made reachable by a tree and a commit on `loose`.
i=0
{
  echo "commit refs/heads/main"
  echo "committer t <t@t> 0 +0000"
  echo "data 4"
  echo "base"
  while [ $i -lt 3000 ]; do
    echo "M 100644 inline f$i"
    echo "data <<EOF"
    echo "blob $i"
    echo "EOF"
    i=$((i + 1))
  done
} | g -c fastimport.unpackLimit=0 fast-import --quiet
tree=""
i=0
while [ $i -lt 200 ]; do
  id=$(echo "loose $i" | g hash-object -w --stdin)
  tree="${tree}100644 blob $id	l$i
"
  i=$((i + 1))
done
t=$(printf '%s' "$tree" | g mktree)
c=$(g commit-tree "$t" -m loose)
g update-ref refs/heads/loose "$c"
# The loose files, kept to be put back (atomically: copy beside, then rename) after each repack has pruned them.
saved="$work/loose-saved"
rm -rf "$saved"
mkdir -p "$saved"
(cd "$repo/objects" && find ?? -type f | while read -r f; do mkdir -p "$saved/$(dirname "$f")"; cp "$f" "$saved/$f"; done)
restore() {
  (cd "$saved" && find ?? -type f | while read -r f; do
    mkdir -p "$repo/objects/$(dirname "$f")"
    cp "$f" "$repo/objects/$f.tmp" && mv "$repo/objects/$f.tmp" "$repo/objects/$f"
  done)
}
g cat-file --batch-all-objects --batch-check='%(objectname)' >"$work/ids"
echo "$(wc -l <"$work/ids") objects, all reachable; $secs s of maintenance; load: $(cut -d' ' -f1-3 /proc/loadavg)"

reader() { # NAME COMMAND...: the ids over and over into COMMAND, counted
  name=$1
  shift
  # `cat` fails once the reader is gone (SIGPIPE), which ends the loop and the pipeline.
  (while cat "$work/ids"; do :; done) | timeout "$secs" "$@" 2>"$work/$name.err" |
    awk -v name="$name" '{n++} / missing$/ {m++; if (m <= 5) print name ": " $0 > "/dev/stderr"}
      / error / {e++; if (e <= 5) print name ": " $0 > "/dev/stderr"}
      END {printf "%s: %d lines, %d missing, %d error\n", name, n, m, e}' >"$work/$name.count" || true
}
reader odb-index "$bin" batch-check "$repo" &
odb=$!
if [ "${GIT:-0}" = 1 ]; then
  reader git git -C "$repo" cat-file --batch-check &
  gitpid=$!
fi

# New loose objects, reachable: 40 blobs, their tree and a commit on `grow` (fast-import writes fewer objects
# than its unpackLimit, 100, loose), their ids appended to the ids the readers ask (each round of `cat` reads the
# file again). The packing step after each such step moves them into a pack and prunes the loose files while the
# readers ask for them: the window where a lookup finds a loose file that is gone when it is read.
grow() {
  n=$((n + 1))
  prev=$(g rev-parse -q --verify refs/heads/grow || true)
  {
    echo "commit refs/heads/grow"
    echo "committer t <t@t> $n +0000"
    echo "data 4"
    echo "grow"
    if [ -n "$prev" ]; then echo "from $prev"; fi
    j=0
    while [ $j -lt 40 ]; do
      echo "M 100644 inline g$j"
      echo "data <<EOF"
      echo "grown $n $j"
      echo "EOF"
      j=$((j + 1))
    done
  } | g fast-import --quiet
  { g rev-parse grow grow^{tree}; g ls-tree grow | cut -f1 | cut -d' ' -f3; } >"$work/new-ids"
  # Replaced whole (a reader's `cat` reads the old file or the new one, never half a line).
  cat "$work/ids" "$work/new-ids" >"$work/ids.tmp" && mv "$work/ids.tmp" "$work/ids"
}

end=$(($(date +%s) + secs))
steps=0
n=0
while [ "$(date +%s)" -lt "$end" ]; do
  case $((steps % 12)) in
    0) grow ;;
    1) restore; g repack -dq ;;
    2) grow ;;
    3) g repack -adfq ;;
    4) grow; restore ;;
    5) g prune-packed; g multi-pack-index write ;;
    6) grow; restore ;;
    7) g gc --prune=now -q ;;
    8)
      printf 'commit refs/heads/tmp%s\ncommitter t <t@t> 0 +0000\ndata 4\npush\nM 100644 inline p\ndata <<EOF\npushed %s\nEOF\n' "$n" "$n" |
        g fast-import --quiet
      ;;
    9) grow ;;
    10) restore; g repack -dq --write-midx ;;
    11) g update-ref -d "refs/heads/tmp$n"; g prune --expire=now ;;
  esac
  steps=$((steps + 1))
done
echo "maintenance: $steps steps; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
wait "$odb"
[ -n "${gitpid:-}" ] && wait "$gitpid"
cat "$work/odb-index.count"
[ -f "$work/git.count" ] && cat "$work/git.count"
[ -s "$work/odb-index.err" ] && { echo "odb-index stderr (first lines):"; head -5 "$work/odb-index.err"; }
grep -q ' 0 missing, 0 error' "$work/odb-index.count"
