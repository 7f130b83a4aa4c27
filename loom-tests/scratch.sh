# Shared by weaken-orderings.sh, mutants.sh, freshness-mutants.sh, checker-mutants.sh and the `--mutant` runs of
# .ci/miri.sh and .ci/tsan.sh (sourced, not run): a scratch copy of the crate, building one checker's suite in it,
# and running each model in its own process; or a table of literal edits, each with the test that must catch it.
#
# Set before sourcing: `root` (the crate), `scratch_name` (mktemp prefix) or `scratch_dir` (a fixed path). Set
# before calling: `target` (for `build_suite`) or `target_base` (for `build_check`): target directories reused
# across edits, so only the crate recompiles; `wanted` and `MUTANTS` (for `run_table`). Defines `scratch`
# (removed on exit), `apply` (the mutants' literal edits), `apply_row` (one mutant's, checked), `build_suite`,
# `run_models`, `build_check` and `run_table`.

# Models in the order they are tried: the three-thread ones (tens of seconds each) last (paths in the checker's
# test target).
slow_models="p3::p3_three_lookups_with_a_covered_pack p5::p5_refresh_racing_loader_and_miss"

# The copy: a fresh temporary directory, or the fixed path `scratch_dir` if set (cargo-miri records the directory a
# test binary was built in, and cargo decides freshness by paths: a new directory each time would run a stale
# binary, or rebuild everything). Removed on exit either way.
if [ -n "${scratch_dir:-}" ]; then
  scratch=$scratch_dir
  rm -rf "$scratch"
  mkdir -p "$scratch"
else
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/$scratch_name.XXXXXX")
fi
trap 'rm -rf "$scratch"' EXIT
tar -C "$root" --exclude=./target --exclude=./.git --exclude=./fuzz -cf - . | tar -C "$scratch" -xf -

# build_suite CHECKER NAME: build the checker's models (the test target named after it: `--test loom` or
# `--test shuttle`, loom-tests/; every test of it is a model) with `--cfg CHECKER` in the scratch copy; sets `bin`,
# or exits with the build's tail.
build_suite() {
  local checker=$1 name=$2 log="$scratch/$2.log"
  if ! (cd "$scratch" && RUSTFLAGS="--cfg $checker" CARGO_TARGET_DIR="$target" cargo test --release \
    --test "$checker" --no-run >"$log" 2>&1); then
    echo "$name: the $checker suite did not build:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  bin=$(sed -nE 's/^ *Executable .*\((.*)\)$/\1/p' "$log" | tail -1)
  case $bin in /*) ;; *) bin="$scratch/$bin" ;; esac
  [ -x "$bin" ] || { echo "$name: no test binary in the build log" >&2; exit 1; }
}

# run_models NAME STOP_AT_FIRST: run every model of `bin` but the witnesses, quick ones first, one process each (a
# deadlock that loom finds while other loom threads are blocked aborts the process, which must count as caught
# without hiding the other models); sets `caught` to the models that failed.
run_models() {
  local name=$1 first=$2 m
  local -a models ordered=()
  mapfile -t models < <("$bin" --list 2>/dev/null | sed -nE "s/^(.*): test\$/\1/p" | grep -vE "^(.*::)?witness_")
  for m in "${models[@]}"; do [[ " $slow_models " == *" $m "* ]] || ordered+=("$m"); done
  for m in $slow_models; do [[ " ${models[*]} " == *" $m "* ]] && ordered+=("$m"); done
  caught=""
  for m in "${ordered[@]}"; do
    if ! (cd "$scratch" && "$bin" --exact "$m" --test-threads=1 >"$scratch/$name.$m.log" 2>&1) 2>/dev/null; then
      caught+="$m "
      [ "$first" = 1 ] && break
    fi
  done
  return 0
}

apply() { # file anchor replacement [anchor replacement]...: literal edits, each anchor exactly once
  perl -e '
    my ($file, @pairs) = @ARGV;
    local $/;
    open my $in, "<", $file or die "$file: $!\n";
    my $s = <$in>;
    close $in;
    while (my ($a, $b) = splice @pairs, 0, 2) {
      s/\\n/\n/g for $a, $b;
      my $n = () = $s =~ /\Q$a\E/g;
      die "anchor occurs $n times (want 1): $a\n" unless $n == 1;
      $s =~ s/\Q$a\E/$b/;
    }
    open my $out, ">", $file or die "$file: $!\n";
    print $out $s;
  ' "$@"
}

# apply_row NAME FILE ANCHOR REPLACEMENT [ANCHOR REPLACEMENT]...: mutant NAME's edits of FILE, applied to a fresh
# copy of the crate's FILE in the scratch copy; exits 1 if an anchor does not occur exactly once or the edits
# change nothing (a mutant is never silently a no-op).
apply_row() {
  local name=$1 file=$2
  shift 2
  cp "$root/$file" "$scratch/$file"
  if ! apply "$scratch/$file" "$@" 2>"$scratch/$name.apply"; then
    echo "$name: $(cat "$scratch/$name.apply")" >&2
    exit 1
  fi
  if cmp -s "$root/$file" "$scratch/$file"; then
    echo "$name: the edit changed nothing" >&2
    exit 1
  fi
}

# split_fields LINE: a mutant line's ` ~~ `-separated fields into the array `fields` (an empty last replacement
# leaves the line ending in " ~~").
split_fields() {
  local rest=$1
  fields=()
  while [[ $rest == *" ~~ "* ]]; do
    fields+=("${rest%% ~~ *}")
    rest=${rest#* ~~ }
  done
  if [[ $rest == *" ~~" ]]; then fields+=("${rest% ~~}" ""); else fields+=("$rest"); fi
}

# build_check KIND LOG: build, in the scratch copy, the library's unit tests (`lib`: std, release, into
# `$target_base/fresh-mutants-std`), the loom models (`loom`: test target `loom` under --cfg loom, into
# `$target_base/loom-weaken`), its integration tests (`int`) or property tests (`prop`); prints the test binary, or
# the build's tail to stderr and fails.
build_check() {
  local kind=$1 log=$2 flags="" dir="$target_base/fresh-mutants-std" what="--lib"
  if [ "$kind" = loom ]; then flags="--cfg loom"; dir="$target_base/loom-weaken"; what="--test loom"; fi
  if [ "$kind" = int ]; then what="--test integration"; fi
  if [ "$kind" = prop ]; then what="--test proptests"; fi
  # shellcheck disable=SC2086
  (cd "$scratch" && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$dir" cargo test --release $what --no-run >"$log" 2>&1) || {
    tail -20 "$log" >&2
    return 1
  }
  local bin
  bin=$(sed -nE 's/^ *Executable .*\((.*)\)$/\1/p' "$log" | tail -1)
  case $bin in /*) ;; *) bin="$scratch/$bin" ;; esac
  echo "$bin"
}

# run_table WHAT: the mutant tables of checker-mutants.sh and freshness-mutants.sh. Each line of `MUTANTS`
# (`name ~~ file ~~ check ~~ anchor ~~ replacement [~~ anchor ~~ replacement]...`) whose name is in `wanted`
# (" a b ", or blank for every row) is applied to the scratch copy, its check run, and the file put back. A check
# is `lib:TEST`, `loom:TEST`, `int:TEST` or `prop:TEST` (a test of that suite, run with --exact: `build_check`) or `sh:COMMAND`
# (run in the mutated copy). Prints a line a row (and what failed); exits 1 if a check passes with its mutant
# applied, if an edit changes nothing or an anchor does not occur exactly once, or if no row matched.
run_table() {
  local what=$1 uncaught=0 ran=0 line name file check kind test caught bin
  printf '%-38s %s\n' "mutant" "result"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    split_fields "$line"
    name=${fields[0]} file=${fields[1]} check=${fields[2]}
    if [ "$wanted" != "  " ] && [[ $wanted != *" $name "* ]]; then continue; fi
    ran=$((ran + 1))
    kind=${check%%:*} test=${check#*:}
    apply_row "$name" "$file" "${fields[@]:3}"
    if [ "$kind" = sh ]; then
      if (cd "$scratch" && bash -c "$test" >"$scratch/$name.run" 2>&1); then caught=0; else caught=1; fi
    else
      if ! bin=$(build_check "$kind" "$scratch/$name.log"); then
        echo "$name: the $kind suite did not build" >&2
        exit 1
      fi
      # Written out first: `grep -q` stops reading at its match, and under pipefail the lister's SIGPIPE would
      # fail the test.
      "$bin" --list >"$scratch/$name.list" 2>/dev/null || true
      if ! grep -qx "$test: test" "$scratch/$name.list"; then
        echo "$name: no test $test in the $kind suite" >&2
        exit 1
      fi
      if (cd "$scratch" && "$bin" --exact "$test" --test-threads=1 >"$scratch/$name.run" 2>&1); then caught=0; else caught=1; fi
    fi
    if [ "$caught" = 1 ]; then
      printf '%-38s %s\n' "$name" "caught by $check"
      # What failed: what a CI check printed, or a test's panic and its message.
      if [ "$kind" = sh ]; then
        head -5 "$scratch/$name.run" | sed 's/^/    /'
      else
        grep -m1 -A2 "panicked at" "$scratch/$name.run" | sed 's/^/    /' || true
      fi
    else
      printf '%-38s %s\n' "$name" "NOT CAUGHT by $check"
      uncaught=$((uncaught + 1))
    fi
    cp "$root/$file" "$scratch/$file"
  done <<<"$MUTANTS"
  if [ "$ran" -eq 0 ]; then
    echo "no mutant matched:$wanted" >&2
    exit 1
  fi
  if [ "$uncaught" -gt 0 ]; then
    echo "$uncaught $what mutant(s) not caught by their check" >&2
    exit 1
  fi
  echo "every $what mutant is caught by its check ($ran)"
}
