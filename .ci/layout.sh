#!/usr/bin/env bash
# The library's layout measures (issue 31): fails on a file of src/ over 600 lines without a one-line reason at
# its top (a comment line starting `Over 600 lines:` among its first 5 lines), on a function of src/ over 80 lines
# outside tests, and on an `allow(clippy::too_many_arguments)` in src/.
#
# Functions are found by a heuristic: a line `fn name` (with any qualifiers) to the first later line that is a
# closing brace at the same indent (or, for a one-line signature ending `{ ... }`, that line). Test code is left
# out: files named `tests.rs` or `*_tests.rs`, and everything from a `#[cfg(test)]` / `#[cfg(all(test, ...))]`
# line followed by a `mod` line on (test modules sit at the end of their file).
#
# Usage: .ci/layout.sh [--report]   (--report prints the measures and never fails)
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-}

out=$(find src -name '*.rs' | sort | perl -e '
    my $status = 0;
    while (my $f = <STDIN>) {
        chomp $f;
        open(my $h, "<", $f) or die "$f: $!";
        my @l = <$h>;
        close $h;
        my $n = @l;
        if ($n > 600) {
            my $top = join("", @l[0 .. ($n < 5 ? $n - 1 : 4)]);
            if ($top !~ m{^\s*//[!/]?\s*Over 600 lines:}m) {
                print "file $f $n lines, no reason at its top\n";
            } else {
                print "ok-file $f $n lines (reason given)\n";
            }
        }
        next if $f =~ m{(^|/)(\w+_)?tests\.rs$};
        my $end = $n;
        for my $i (0 .. $n - 2) {
            if ($l[$i] =~ /^\s*#\[cfg\((?:all\()?test\b/ && $l[$i + 1] =~ /^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s/) {
                $end = $i;
                last;
            }
        }
        for my $i (0 .. $end - 1) {
            next unless $l[$i] =~ /^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+"C")\s+)*fn\s+(\w+)/;
            my ($indent, $name) = ($1, $2);
            next if $l[$i] =~ /;\s*$/;    # a declaration without a body (trait method)
            my $j = $i;
            while ($j < $end && $l[$j] !~ /^\Q$indent\E\}\s*$/ && !($j == $i && $l[$j] =~ /\}\s*$/)) { $j++; }
            my $len = $j - $i + 1;
            print "fn $f:" . ($i + 1) . " $name $len lines\n" if $len > 80;
        }
    }
')
allows=$(grep -rn 'allow(clippy::too_many_arguments)' src || true)

if [[ $report == --report ]]; then
    echo "$out"
    [[ -n $allows ]] && echo "$allows" | sed 's/^/allow /'
    echo "src/ files over 600 lines: $(grep -c '^\(ok-\)\?file ' <<<"$out" || true); functions over 80 lines: $(grep -c '^fn ' <<<"$out" || true); allow(too_many_arguments): $(grep -c . <<<"$allows" || true)"
    exit 0
fi
status=0
if grep -q '^file \|^fn ' <<<"$out"; then
    grep '^file \|^fn ' <<<"$out" >&2
    status=1
fi
if [[ -n $allows ]]; then
    echo "$allows" >&2
    status=1
fi
if [[ $status == 0 ]]; then
    echo "layout: no src/ file over 600 lines without a reason, no function over 80 lines, no allow(too_many_arguments)"
else
    echo "layout: the measures above fail (issue 31: files over 600 lines need a one-line reason at their top)" >&2
fi
exit $status
