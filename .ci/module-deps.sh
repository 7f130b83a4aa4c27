#!/usr/bin/env bash
# Fails if two modules of a package import each other, naming the pair; also fails on a longer import cycle.
#
# Looks at two levels:
#  - the top-level modules of every package of the workspace (the library, cli, gix, bench, testkit, downstream)
#    and of every test target with modules (loom-tests, proptests, tests/integration, cli and gix tests:
#    each `mod x;` of the crate root, `DIR/x.rs` or everything under `DIR/x/`, which counts as one module): a
#    reference `crate::x::...`, `use crate::{x::..., ...}`, or `crate::Name` where the root imports `Name` from
#    `x` (`super::` in the module's own file `x.rs` or `x/mod.rs` counts as `crate::`), in a file of module `m`
#    means m -> x;
#  - the files of `src/store/`: in a child file, `super::f::...` (f a sibling file) means child -> f, any other
#    `super::Name` (or `crate::store::Name`) means child -> mod.rs; in `mod.rs`, `f::...` means mod -> f, except
#    in the `mod f;` declarations and the `pub use f::...` re-exports that make up the module's public face.
# Comment lines (`//`, `///`, `//!`) are skipped: doc links are not imports.
#
# Usage: .ci/module-deps.sh [--verbose]   (prints the edges with --verbose)
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=${1:-}

edges_file=$(mktemp)
trap 'rm -f "$edges_file"' EXIT

perl - "$edges_file" <<'PERL'
use strict;
use warnings;
my $out = shift @ARGV;
open(my $o, '>', $out) or die "$out: $!";

sub slurp {
    my ($f) = @_;
    open(my $h, '<', $f) or die "$f: $!";
    my @l = grep { $_ !~ m{^\s*//} } <$h>;
    close $h;
    return join('', @l);
}

# The elements of a brace group starting just after `{` at $pos in $s: the first path segment of each element
# at depth 1.
sub brace_heads {
    my ($s, $pos) = @_;
    my @heads;
    my $depth = 1;
    my $start = 1;
    for (my $i = $pos; $i < length($s) && $depth > 0; $i++) {
        my $c = substr($s, $i, 1);
        if ($c eq '{') { $depth++; next; }
        if ($c eq '}') { $depth--; next; }
        if ($depth == 1 && $c eq ',') { $start = 1; next; }
        if ($depth == 1 && $start && $c =~ /\w/) {
            substr($s, $i) =~ /^(\w+)/;
            push @heads, $1;
            $start = 0;
            $i += length($1) - 1;
        } elsif ($c !~ /\s/) {
            $start = 0 if $depth == 1;
        }
    }
    return @heads;
}

# Every first segment after `$prefix::` in $s (`prefix::x`, `prefix::{x, y::z}`).
sub heads_after {
    my ($s, $prefix) = @_;
    my @heads;
    while ($s =~ /\b\Q$prefix\E::(\{|\w+)/g) {
        if ($1 eq '{') {
            push @heads, brace_heads($s, pos($s));
        } else {
            push @heads, $1;
        }
    }
    return @heads;
}

# --- top-level modules of each package: (crate root, its source directory, a label)
for my $pkg (['src/lib.rs', 'src', 'odb-index'], ['cli/src/main.rs', 'cli/src', 'cli'],
             ['gix/src/lib.rs', 'gix/src', 'gix'], ['bench/src/main.rs', 'bench/src', 'bench'],
             ['testkit/src/lib.rs', 'testkit/src', 'testkit'], ['downstream/src/lib.rs', 'downstream/src', 'downstream'],
             # The test targets with modules of their own (each a crate: the models, the property, integration,
             # command and adapter tests).
             ['loom-tests/main.rs', 'loom-tests', 'loom'], ['loom-tests/shuttle.rs', 'loom-tests', 'shuttle'],
             ['proptests/main.rs', 'proptests', 'proptests'], ['tests/integration/main.rs', 'tests/integration', 'integration'],
             ['cli/tests/cli/main.rs', 'cli/tests/cli', 'cli-tests'], ['gix/tests/interop/main.rs', 'gix/tests/interop', 'interop']) {
    my ($root, $src, $label) = @$pkg;
    next unless -f $root;
    my $lib = slurp($root);
    my %is_mod;
    $is_mod{$1} = 1 while $lib =~ /^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/mg;
    # Names the root re-exports: `pub use x::{A, B};` / `pub use x::A;`.
    my %reexport;
    while ($lib =~ /^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(\w+)::(\{[^}]*\}|\w+)\s*;/mg) {
        my ($m, $names) = ($1, $2);
        $names =~ s/[{}]//g;
        for my $n (split /\s*,\s*/, $names) {
            $n =~ s/^\s+|\s+$//g;
            $n =~ s/.*\s+as\s+//;
            $reexport{$n} = $m if $n ne '' && $is_mod{$m};
        }
    }
    for my $m (sort keys %is_mod) {
        my @files;
        if (-d "$src/$m") {
            @files = split /\n/, `find $src/$m -name '*.rs' | sort`;
        } elsif (-f "$src/$m.rs") {
            @files = ("$src/$m.rs");
        }
        my %to;
        for my $f (@files) {
            my $s = slurp($f);
            # In the module's own file (`x.rs`, `x/mod.rs`), `super::` is the crate root.
            my @heads = heads_after($s, 'crate');
            push @heads, heads_after($s, 'super') if $f eq "$src/$m.rs" || $f eq "$src/$m/mod.rs";
            for my $h (@heads) {
                my $t = $is_mod{$h} ? $h : $reexport{$h};
                $to{$t} = 1 if defined $t && $t ne $m;
            }
        }
        print $o "top $src/$m $src/$_\n" for sort keys %to;
    }
}

# --- the files of src/store/
my $dir = 'src/store';
my @store = map { s{^$dir/}{}r =~ s{\.rs$}{}r } split /\n/, `find $dir -maxdepth 1 -name '*.rs' | sort`;
my %is_file = map { $_ => 1 } @store;
for my $f (@store) {
    my $s = slurp("$dir/$f.rs");
    my %to;
    if ($f eq 'mod') {
        # The module's declarations and re-exports are its public face, not uses.
        my $body = join("\n", grep { $_ !~ /^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;/ && $_ !~ /^\s*pub\s+use\s+/ } split /\n/, $s);
        while ($body =~ /(?<![\w:])(\w+)::/g) {
            $to{$1} = 1 if $is_file{$1} && $1 ne 'mod';
        }
        for my $h (heads_after($body, 'self')) {
            $to{$h} = 1 if $is_file{$h} && $h ne 'mod';
        }
    } else {
        for my $h (heads_after($s, 'super'), heads_after($s, 'crate::store')) {
            next if $h eq 'super' || $h eq 'self';
            my $t = ($is_file{$h} && $h ne 'mod') ? $h : 'mod';
            $to{$t} = 1 if $t ne $f;
        }
    }
    print $o "store $f $_\n" for sort keys %to;
}
close $o;
PERL

[[ $verbose == --verbose ]] && sed 's/^top /module: /; s/^store /src\/store\/: /' "$edges_file"


status=0
for level in top store; do
    case $level in
        top) what="modules of a package" ; name() { echo "$1"; } ;;
        store) what="files of src/store/" ; name() { echo "src/store/$1.rs"; } ;;
    esac
    edges=$(awk -v l="$level" '$1 == l { print $2, $3 }' "$edges_file")
    # Pairs that import each other.
    while read -r a b; do
        [[ -z $a ]] && continue
        if [[ $a < $b ]] && grep -qx "$b $a" <<<"$edges"; then
            echo "module-deps: $what import each other: $(name "$a") <-> $(name "$b")" >&2
            status=1
        fi
    done <<<"$edges"
    # Longer cycles.
    if [[ -n $edges ]] && ! tsort <<<"$edges" >/dev/null 2>"$edges_file.tsort"; then
        members=$(grep -v 'input contains a loop' "$edges_file.tsort" | sed 's/^tsort: //' | sort -u | tr '\n' ' ')
        echo "module-deps: $what form an import cycle through: $members" >&2
        status=1
    fi
    rm -f "$edges_file.tsort"
done
if [[ $status == 0 ]]; then
    echo "module-deps: no two modules of a package import each other ($(grep -c '^top ' "$edges_file") module edges in 6 packages and 6 test targets, $(grep -c '^store ' "$edges_file") store file edges)"
fi
exit $status
