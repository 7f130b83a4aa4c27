#!/usr/bin/env sh
# End-to-end check of every answer under maintenance (issues 28 and 38): long-running `odb-index batch-check`
# readers, one per mode and format, answer every object of a repository over and over while git maintains it
# underneath: loose copies of packed objects put back and pruned (`repack -d`, `prune-packed`: a loose file found
# by a lookup and pruned before it is read), `repack -adf` (every pack replaced), `gc --prune=now`, multi-pack-index
# writes, pushes (fast-import packs on temporary branches) and their deletion with `prune --expire=now`, and new
# loose objects (reachable) asked for from the moment they exist, then packed and pruned by the next step. Every id
# asked is reachable throughout, so any `missing` is false, and any `error` is one git does not give.
#
# The readers (all at once): `single` (default format, one line at a time), `buffer` (--buffer), `threads`
# (--threads 2), `disk` (`%(objectsize:disk)` alone: only the file's size is read), `disk-delta` (`%(objectsize:disk)
# %(deltabase)`, --threads 2 --buffer), `contents` (--batch: every object's contents hashed again and compared with
# its id, `bench/scripts/check-batch-contents.py`), and `all` (`--batch-all-objects --unordered`, over and over:
# errors counted, and `missing` for the ids that stay reachable).
#
# LAYOUT: `plain` (packs and loose objects), `midx` (a multi-pack-index rewritten after every step), `chain` (an
# incremental multi-pack-index chain, a layer added after every step, squashed by the full rewrites), `alternates`
# (the readers read a second repository that has no objects of its own and borrows the maintained one's through
# `objects/info/alternates`), or `all` (each in turn, SECONDS each).
#
# Usage: sh bench/scripts/maintenance-batch-check.sh [SECONDS] [WORK] [LAYOUT]   (defaults 300, a new temporary
# directory, plain; ODB_INDEX=path runs another build of the command, e.g. an older commit's, as a control)
# Prints, per reader: lines answered, `missing` lines and other errors (the first five of each on stderr), wrong
# contents; and the maintenance steps run. Exit status 1 if any reader answered a line `missing` or `error`, or
# wrong contents. With GIT=1, `git cat-file --batch-check` runs beside them (the control; it shares the cores).
set -eu
secs=${1:-300}
work=${2:-$(mktemp -d)}
layout=${3:-plain}
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$layout" = all ]; then
  status=0
  for l in plain midx chain alternates; do
    echo "== layout $l"
    sh "$0" "$secs" "$work/$l" "$l" || status=1
  done
  exit $status
fi
mkdir -p "$work"
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

# The repository the readers read: the maintained one, or (alternates) one that borrows all its objects.
read_repo=$repo
if [ "$layout" = alternates ]; then
  read_repo="$work/borrower"
  rm -rf "$read_repo"
  git init -q --bare "$read_repo"
  echo "$repo/objects" >"$read_repo/objects/info/alternates"
fi
# The multi-pack-index of the layout, after every maintenance step (and once now).
midx() {
  case $layout in
    midx) g multi-pack-index write ;;
    chain) g multi-pack-index write --incremental 2>/dev/null || true ;;
  esac
}
# Before a step that deletes packs, the chain goes (git 2.47's `repack -a` and `gc` leave its layers naming the
# deleted packs, and then git itself cannot read the objects; a non-incremental write does not replace a chain);
# the next `midx` starts a new one. The readers see the chain vanish and come back.
chain_off() {
  if [ "$layout" = chain ]; then rm -rf "$repo/objects/pack/multi-pack-index.d"; fi
}
# The multi-pack-index writes of the plain cycle: in the chain layout, a layer instead.
midx_write() {
  if [ "$layout" = chain ]; then midx; else g multi-pack-index write; fi
}
midx
cp "$work/ids" "$work/stable-ids"
echo "layout $layout: $(wc -l <"$work/ids") objects, all reachable; $secs s of maintenance; load: $(cut -d' ' -f1-3 /proc/loadavg)"

count() { # NAME: count the lines of a reader's output; `missing` counted only for ids in stable-ids
  awk -v name="$1" -v stable="$work/stable-ids" 'BEGIN {while ((getline l < stable) > 0) keep[l] = 1}
      {n++} / missing$/ && (name != "all" || ($1 in keep)) {m++; if (m <= 5) print name ": " $0 > "/dev/stderr"}
      / error / {e++; if (e <= 5) print name ": " $0 > "/dev/stderr"}
      END {printf "%s: %d lines, %d missing, %d error\n", name, n, m, e}'
}
reader() { # NAME COMMAND...: the ids over and over into COMMAND, counted
  name=$1
  shift
  # `cat` fails once the reader is gone (SIGPIPE), which ends the loop and the pipeline.
  (while cat "$work/ids"; do :; done) | timeout "$secs" "$@" 2>"$work/$name.err" | count "$name" >"$work/$name.count" || true
}
readers="single buffer threads disk disk-delta contents all"
# A maintenance step that fails (set -e) ends the run: its readers with it, not into the next layout's output.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
reader single "$bin" batch-check "$read_repo" &
reader buffer "$bin" batch-check --buffer "$read_repo" &
reader threads "$bin" batch-check --threads 2 "$read_repo" &
reader disk "$bin" batch-check --batch-check='%(objectsize:disk)' "$read_repo" &
reader disk-delta "$bin" batch-check --batch-check='%(objectsize:disk) %(deltabase)' --threads 2 --buffer "$read_repo" &
(while cat "$work/ids"; do :; done) | timeout "$secs" "$bin" batch-check --batch "$read_repo" 2>"$work/contents.err" |
  python3 "$top/bench/scripts/check-batch-contents.py" contents >"$work/contents.count" &
(
  stop=$(($(date +%s) + secs))
  while [ "$(date +%s)" -lt "$stop" ]; do
    timeout $((stop - $(date +%s) + 1)) "$bin" batch-check --batch-all-objects --unordered "$read_repo" 2>>"$work/all.err" || true
  done | count all >"$work/all.count"
) &
if [ "${GIT:-0}" = 1 ]; then
  readers="$readers git"
  reader git git -C "$read_repo" cat-file --batch-check &
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
    1) restore; g repack -dq; midx ;;
    2) grow ;;
    3) chain_off; g repack -adfq; midx ;;
    4) grow; restore ;;
    5) g prune-packed; midx_write ;;
    6) grow; restore ;;
    7) chain_off; g gc --prune=now -q; midx ;;
    8)
      printf 'commit refs/heads/tmp%s\ncommitter t <t@t> 0 +0000\ndata 4\npush\nM 100644 inline p\ndata <<EOF\npushed %s\nEOF\n' "$n" "$n" |
        g fast-import --quiet
      midx
      ;;
    9) grow ;;
    10) restore; if [ "$layout" = chain ]; then g repack -dq; else g repack -dq --write-midx; fi; midx ;;
    11) g update-ref -d "refs/heads/tmp$n"; g prune --expire=now; midx ;;
  esac
  steps=$((steps + 1))
done
echo "maintenance: $steps steps; load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
wait
status=0
for r in $readers; do
  cat "$work/$r.count"
  [ "$r" = git ] && continue
  grep -q ' 0 missing, 0 error' "$work/$r.count" || status=1
  [ "$r" = contents ] && { grep -q ' 0 wrong contents' "$work/$r.count" || status=1; }
  [ -s "$work/$r.err" ] && { echo "$r stderr (first lines):"; head -3 "$work/$r.err"; }
done
exit $status
