#!/usr/bin/env bash
# Issue 47: the command's fault matrix from outside, as an outsider would run it: `strace -f -e inject` makes the
# Nth call of one system call fail with one errno (N = 1, 2, ... until strace injects nothing), in each mode, and
# each run is judged against `git cat-file` on the same input (without a fault) by the rule of
# cli/tests/cli/faults.rs (docs/RELIABILITY.md, "The command under faults"):
#   held      every answer git's, byte for byte;
#   reported  some answer replaced by `<name> error ...`, or `<name> missing` with an `error:` line naming it, or
#             the run stopped with exit status 128 (`fatal:`) or 2 (`odb-index: ...`) after answers so judged;
#   failed    anything else: a `missing` for an object git finds with nothing (or only a warning) said about it,
#             another answer, a panic (101, 134, a signal), a run killed after 60 s;
#   git-died  the command died by a signal (or exit status 127: the dynamic loader failed) and git, run under the
#             same fault, did too (an mmap or read of the loader or of the allocator: neither program's code).
# Prints one row per mode x system call x errno: runs (the fault was injected), held, reported, git-died, failed;
# then the failed runs. Exit status 1 if any run failed.
#
#   bench/scripts/fault-inject.sh [odb-index binary] [max positions] [modes] [syscalls] [errnos]
#
# Defaults: target/release/odb-index, 16 positions, every mode (default buffer threads batch all names
# no-events), the system calls open openat statx newfstatat fstat read mmap getdents64 readlink getcwd clone3, and
# EIO EMFILE ENOMEM EINTR EACCES. Needs strace (apt-get install -y strace) and git.
set -euo pipefail
BIN=$(realpath "${1:-target/release/odb-index}")
MAX=${2:-16}
MODES=${3:-default buffer threads batch all names no-events}
CALLS=${4:-open openat statx newfstatat fstat read mmap getdents64 readlink getcwd clone3}
ERRNOS=${5:-EIO EMFILE ENOMEM EINTR EACCES}
command -v strace >/dev/null || { echo "fault-inject.sh: strace is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
g() { git -c gc.auto=0 -c init.defaultBranch=main -c user.name=f -c user.email=f@x "$@"; }
import() { # $1 repository, $2 seed, $3 blobs: one new pack
  { for i in $(seq 1 "$3"); do printf 'blob\nmark :%d\ndata <<E\nfault %s %d\nE\n' "$i" "$2" "$i"; done
    printf 'commit refs/heads/p%s\ncommitter f <f@x> 1700000000 +0000\ndata 1\nx\n' "$2"
    for i in $(seq 1 "$3"); do printf 'M 100644 :%d f%d\n' "$i" "$i"; done; echo; } |
    g -C "$1" -c fastimport.unpackLimit=0 fast-import --quiet
}
# The repository (as faults.rs builds it): a repacked commit, two fast-import packs, a multi-pack-index, a
# second commit and loose objects, an annotated tag, packed and loose refs, a symbolic ref, an alternate with a
# pack and loose objects of its own.
g init -q --bare "$tmp/alt"
import "$tmp/alt" 71 20
for i in 1 2 3; do echo "alternate $i" | g -C "$tmp/alt" hash-object -w --stdin >/dev/null; done
g init -q "$tmp/r"
r=$tmp/r
echo a >"$r/a"; mkdir "$r/d"; echo b >"$r/d/b"
g -C "$r" add a d/b; g -C "$r" commit -qm one; g -C "$r" repack -adq
import "$r" 72 30; import "$r" 73 30
g -C "$r" multi-pack-index write
echo "a two" >"$r/a"; g -C "$r" commit -qam two
for i in 1 2 3 4; do echo "loose $i" | g -C "$r" hash-object -w --stdin >/dev/null; done
g -C "$r" tag -a -m t t1 HEAD~1; g -C "$r" pack-refs --all
g -C "$r" branch loose-branch HEAD~1; g -C "$r" symbolic-ref refs/heads/sym refs/heads/main
echo "$tmp/alt/objects" >"$r/.git/objects/info/alternates"
{ g -C "$r" cat-file --batch-all-objects --batch-check='%(objectname)'
  for i in 1 2 3; do printf '%s\n' "$(echo "absent $i" | sha1sum | cut -c1-40)"; done; } >"$tmp/ids"
printf '%s\n' HEAD main HEAD~1 HEAD:a HEAD:d/b sym t1 heads/loose-branch 't1^{commit}' >"$tmp/names"

# mode -> "cat-file option|odb-index options|input"
spec() {
  case $1 in
    default) echo "--batch-check||ids" ;;
    buffer) echo "--batch-check|--buffer|ids" ;;
    threads) echo "--batch-check|--threads 2|ids" ;;
    batch) echo "--batch|--batch|ids" ;;
    all) echo "--batch-check --batch-all-objects|--batch-all-objects|none" ;;
    names) echo "--batch-check||names" ;;
    no-events) echo "--batch-check|--no-events|ids" ;;
    *) echo "fault-inject.sh: unknown mode $1" >&2; exit 2 ;;
  esac
}
input_of() { case $1 in ids) echo "$tmp/ids" ;; names) echo "$tmp/names" ;; none) echo /dev/null ;; esac; }

judge() { # $1 mode input kind, $2 contents (0/1), $3 want, $4 got, $5 stderr, $6 exit status, $7 names file
  python3 - "$@" <<'EOF'
import sys
kind, contents, want, got, err, status, names = sys.argv[1:8]
contents, status = contents == "1", int(status)
def records(path):
    b = open(path, "rb").read(); rs = []
    while b:
        i = b.find(b"\n"); i = len(b) if i < 0 else i
        line = b[:i].decode("utf-8", "replace"); b = b[i + 1:]
        w = line.split(" "); data = b""
        if contents and len(w) == 3 and w[1] in ("blob", "tree", "commit", "tag") and w[2].isdigit():
            n = int(w[2]); data = b[:n]; b = b[n + 1:]
        rs.append((line, data))
    return rs
want, got = records(want), records(got)
stderr = open(err, encoding="utf-8", errors="replace").read().splitlines()
errors = [l for l in stderr if l.startswith("error:")]
def verdict(v, why=""):
    print(v, why); sys.exit(0)
if status == 124: verdict("failed", "did not end in 60 s")
if status not in (0, 2, 128): verdict("failed", "exit status %d" % status)
if status != 0 and not any(l.startswith("fatal:") or (l.startswith("odb-index: ") and "warning:" not in l) for l in stderr):
    verdict("failed", "exit status %d without an error line" % status)
reported = status != 0
def replaced(name, line):
    return line.startswith(name + " error ") or (line == name + " missing" and any(name in e for e in errors))
if kind == "none":
    by_id = {w[0].split(" ")[0]: w for w in want}
    for g_ in got:
        i = g_[0].split(" ")[0]
        if i not in by_id: verdict("failed", "%r not listed by git" % g_[0])
        if by_id[i] != g_:
            if not replaced(i, g_[0]): verdict("failed", "%r where git answers %r" % (g_[0], by_id[i][0]))
            reported = True
    if status == 0 and len(got) != len(want): verdict("failed", "%d listed, git lists %d" % (len(got), len(want)))
else:
    asked = open(names).read().split("\n") if kind == "names" else [w[0].split(" ")[0] for w in want]
    if len(got) > len(want) or (status == 0 and len(got) != len(want)):
        verdict("failed", "%d answers for %d lines" % (len(got), len(want)))
    for i, (g_, w) in enumerate(zip(got, want)):
        if g_ != w:
            if not replaced(asked[i], g_[0]): verdict("failed", "%r where git answers %r" % (g_[0], w[0]))
            reported = True
verdict("reported" if reported else "held")
EOF
}

printf '%-10s %-11s %-7s %5s %5s %9s %9s %6s\n' mode syscall errno runs held reported git-died failed
failures=$tmp/failures
: >"$failures"
for mode in $MODES; do
  IFS='|' read -r gitopt odbopt input <<<"$(spec "$mode")"
  in=$(input_of "$input")
  contents=0; [[ $gitopt == --batch ]] && contents=1
  # shellcheck disable=SC2086 # options are words
  (cd "$r" && g cat-file $gitopt <"$in" >"$tmp/want")
  for call in $CALLS; do
    for errno in $ERRNOS; do
      runs=0 held=0 reported=0 both=0 failed=0
      for n in $(seq 1 "$MAX"); do
        status=0
        # shellcheck disable=SC2086
        (cd "$r" && timeout 60 strace -f -qq -o "$tmp/trace" -e trace="$call" -e inject="$call:error=$errno:when=$n" \
          "$BIN" batch-check $odbopt . <"$in" >"$tmp/got" 2>"$tmp/err") || status=$?
        grep -q INJECTED "$tmp/trace" 2>/dev/null || break
        runs=$((runs + 1))
        read -r v why <<<"$(judge "$input" "$contents" "$tmp/want" "$tmp/got" "$tmp/err" "$status" "$tmp/names")"
        if [[ $v == failed && ($status -gt 128 || $status -eq 127) ]]; then
          # Killed by a signal, or 127 (the dynamic loader could not load a library): the same fault in git (an
          # mmap or read of the loader or the allocator fails in both).
          gstatus=0
          # shellcheck disable=SC2086
          (cd "$r" && timeout 60 strace -f -qq -o /dev/null -e trace="$call" -e inject="$call:error=$errno:when=$n" \
            git -c gc.auto=0 cat-file $gitopt <"$in" >/dev/null 2>&1) || gstatus=$?
          [[ $gstatus -gt 128 || $gstatus -eq 127 ]] && v=both
        fi
        case $v in
          held) held=$((held + 1)) ;;
          reported) reported=$((reported + 1)) ;;
          both) both=$((both + 1)) ;;
          *) failed=$((failed + 1)); echo "$mode $call:$errno:when=$n: $why ($(head -c 200 "$tmp/err" | tr '\n' '|'))" >>"$failures" ;;
        esac
      done
      printf '%-10s %-11s %-7s %5d %5d %9d %9d %6d\n' "$mode" "$call" "$errno" "$runs" "$held" "$reported" "$both" "$failed"
    done
  done
done
if [ -s "$failures" ]; then
  echo "failed runs:"; cat "$failures"; exit 1
fi
