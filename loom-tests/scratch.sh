# Shared by weaken-orderings.sh and mutants.sh (sourced, not run): a scratch copy of the crate, building one
# checker's suite in it, and running each model in its own process.
#
# Set before sourcing: `root` (the crate), `scratch_name` (mktemp prefix) or `scratch_dir` (a fixed path),
# `target` (a target directory reused across edits: only the crate recompiles; for `build_suite`). Defines `scratch` (removed on exit) and `apply` (the mutants' literal
# edits, shared by mutants.sh and freshness-mutants.sh).

# Models in the order they are tried: the three-thread ones (tens of seconds each) last.
slow_models="p3_three_lookups_with_a_covered_pack p5_refresh_racing_loader_and_miss"

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

# build_suite CHECKER NAME: build the crate's unit tests (`--lib`, where the models are compiled in under
# `cfg(all(test, CHECKER))`: src/lib.rs) with `--cfg CHECKER` in the scratch copy; sets `bin` and `models_prefix`
# (the module the checker's models live in), or exits with the build's tail.
build_suite() {
  local checker=$1 name=$2 log="$scratch/$2.log"
  if ! (cd "$scratch" && RUSTFLAGS="--cfg $checker" CARGO_TARGET_DIR="$target" cargo test --release --lib \
    --no-run >"$log" 2>&1); then
    echo "$name: the $checker suite did not build:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  bin=$(sed -nE 's/^ *Executable .*\((.*)\)$/\1/p' "$log" | tail -1)
  case $bin in /*) ;; *) bin="$scratch/$bin" ;; esac
  [ -x "$bin" ] || { echo "$name: no test binary in the build log" >&2; exit 1; }
  models_prefix="${checker}_models::"
}

# run_models NAME STOP_AT_FIRST: run every model of `bin` (the tests under `models_prefix`, not the crate's other
# unit tests) but the witnesses, quick ones first, one process each (a deadlock that loom finds while other loom threads are blocked aborts the process, which must count as caught
# without hiding the other models); sets `caught` to the models that failed.
run_models() {
  local name=$1 first=$2 m
  local -a models ordered=()
  mapfile -t models < <("$bin" --list 2>/dev/null | sed -nE "s/^(${models_prefix}.*): test\$/\1/p" |
    grep -v "^${models_prefix}witness_")
  for m in "${models[@]}"; do [[ " $slow_models " == *" ${m#"$models_prefix"} "* ]] || ordered+=("$m"); done
  for m in $slow_models; do [[ " ${models[*]} " == *" $models_prefix$m "* ]] && ordered+=("$models_prefix$m"); done
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
