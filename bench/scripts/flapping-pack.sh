#!/usr/bin/env bash
# Issue 38, item 5: a pack that vanishes and comes back (a "flapping" file: its .idx and .pack renamed away and
# back, over and over) while `batch-check` asks for its objects, with git as the control. Every other line asks
# for an id no pack has, so that each program misses (and, on a changed pack directory, lists again) while the
# pack may be away. Counts the lines of the pack's objects answered `missing`, per run and in total, and how many
# of them came after the program had answered one of the pack's objects (`after`: lost although the program had
# read the pack, which it keeps as git keeps a pack it has opened; the others were lost at start-up, the pack's
# files away before the program ever read them, where the object was not in the repository when asked). In input
# order: under `--threads` a thread's losses before its own first read count as `after` when an earlier thread's
# chunk found one.
#
# A program loses the lines it answers while the pack is away before it has read it, so a faster one loses more
# lines in the same time: each run also gives each program's lost time, the lost share of its present lines times
# its run's wall time (the milliseconds it spent, at its own pace, answering lines it lost). git answers a line in
# several times the command's time, so lines lost are not the same measure for both; lost time is.
#
#   bench/scripts/flapping-pack.sh [odb-index binary] [runs] [lines per run] [batch flags]
#
# Defaults: target/release/odb-index, 5 runs, 20000 lines (half of them the pack's objects), no flags (the
# default mode). Batch flags are the command's (`--buffer`, `--threads 2 --buffer`); git is given `--buffer` when
# they have it (git has no `--threads`).
set -euo pipefail
BIN=${1:-target/release/odb-index}
RUNS=${2:-5}
LINES=${3:-20000}
read -r -a FLAGS <<<"${4:-}"
GIT_FLAGS=()
for f in "${FLAGS[@]}"; do [ "$f" = --buffer ] && GIT_FLAGS+=(--buffer); done
BIN=$(realpath "$BIN")
tmp=$(mktemp -d)
trap 'kill "${flapper:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q --bare "$tmp/r"
import() { # $1 seed, $2 blobs: one new pack
  { for i in $(seq 1 "$2"); do printf 'blob\nmark :%d\ndata <<E\nflap %s %d\nE\n' "$i" "$1" "$i"; done
    printf 'commit refs/heads/b%s\ncommitter f <f@x> 1700000000 +0000\ndata 1\nx\n' "$1"
    for i in $(seq 1 "$2"); do printf 'M 100644 :%d f%d\n' "$i" "$i"; done; echo; } |
    git -C "$tmp/r" -c fastimport.unpackLimit=0 fast-import --quiet
}
import 1 200   # the pack that flaps
idx=$(ls "$tmp"/r/objects/pack/*.idx)
import 2 200   # another pack, always there
git show-index <"$idx" | awk '{print $2}' >"$tmp/ids"
python3 - "$tmp/ids" "$LINES" >"$tmp/input" <<'EOF'
import sys, hashlib
ids = open(sys.argv[1]).read().split()
for i in range(int(sys.argv[2]) // 2):
    print(ids[i % len(ids)])
    print(hashlib.sha1(b"absent %d" % i).hexdigest())
EOF
present=$(python3 -c "print($LINES // 2)")
# The flapper: .idx away then .pack, back .pack first then .idx (as git renames), 2 ms away, 2 ms back.
python3 - "$idx" "$tmp/stop" <<'EOF' &
import os, sys, time
idx = sys.argv[1]; pack = idx[:-4] + ".pack"; stop = sys.argv[2]
while not os.path.exists(stop):
    os.rename(idx, idx + ".away"); os.rename(pack, pack + ".away")
    time.sleep(0.002)
    os.rename(pack + ".away", pack); os.rename(idx + ".away", idx)
    time.sleep(0.002)
EOF
flapper=$!
count() { # $@: the command; prints the pack's objects answered missing, how many of them after a found one, and
  # the run's wall time in microseconds
  local t0 t1 r
  t0=$(date +%s%N)
  r=$("$@" <"$tmp/input" | awk 'NR % 2 == 1 { if (/ missing$/) { n++; if (seen) a++ } else seen = 1 }
    END {print n+0, a+0}')
  t1=$(date +%s%N)
  echo "$r $(((t1 - t0) / 1000))"
}
lost_ms() { python3 -c "print(round($1 / $present * $2 / 1000, 3))"; } # lost lines, run's microseconds
tg=0; to=0; tga=0; toa=0; tgm=0; tom=0
for run in $(seq 1 "$RUNS"); do
  read -r g ga gus < <(count git -C "$tmp/r" cat-file --batch-check "${GIT_FLAGS[@]}")
  read -r o oa ous < <(count "$BIN" batch-check "${FLAGS[@]}" "$tmp/r")
  tg=$((tg + g)); to=$((to + o)); tga=$((tga + ga)); toa=$((toa + oa))
  gm=$(lost_ms "$g" "$gus"); om=$(lost_ms "$o" "$ous")
  tgm=$(python3 -c "print($tgm + $gm)"); tom=$(python3 -c "print($tom + $om)")
  printf 'run %d: git %d of %d missing (%s%%, %d after, %s ms lost of %s), odb-index %d (%s%%, %d after, %s ms of %s)\n' \
    "$run" "$g" "$present" "$(python3 -c "print(round(100*$g/$present, 2))")" "$ga" "$gm" "$((gus / 1000))" \
    "$o" "$(python3 -c "print(round(100*$o/$present, 2))")" "$oa" "$om" "$((ous / 1000))"
done
touch "$tmp/stop"; wait "$flapper" || true
n=$((present * RUNS))
printf 'total: git %d of %d (%s%%, %d after, %s ms lost), odb-index %d (%s%%, %d after, %s ms lost)\n' "$tg" "$n" \
  "$(python3 -c "print(round(100*$tg/$n, 2))")" "$tga" "$(python3 -c "print(round($tgm, 2))")" "$to" \
  "$(python3 -c "print(round(100*$to/$n, 2))")" "$toa" "$(python3 -c "print(round($tom, 2))")"
