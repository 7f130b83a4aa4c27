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

# --- the files of src/store/ and of its folders (lookup/, listing/, queries/), each file a node named by its path
# (`mod`, `relist`, `lookup/handle`, `listing/mod`); freshness/ and watch/ hold their files' models and backends.
# A path `crate::store::a::b`, `super::...` or `self::...` (expanded through brace groups) names the file it
# reaches: a child file of a folder, the folder's `mod.rs`, a top file, or the `mod.rs` of the module it starts
# from. Each file edge between two folders (a top file is a folder of its own) is also a folder edge.
my $dir = 'src/store';
my @store = map { s{^$dir/}{}r =~ s{\.rs$}{}r } split /\n/, `find $dir -maxdepth 1 -name '*.rs' | sort`;
my @folders = grep { -f "$dir/$_/mod.rs" } map { s{^$dir/}{}r } split /\n/, `find $dir -mindepth 1 -maxdepth 1 -type d | sort`;
my %is_folder = map { $_ => 1 } @folders;
my %is_node = map { $_ => 1 } @store;
for my $d (@folders) {
    $is_node{$_} = 1 for map { s{^$dir/}{}r =~ s{\.rs$}{}r } split /\n/, `find $dir/$d -maxdepth 1 -name '*.rs' | sort`;
}
# The paths of a use tree starting at $pos: lists of segments (`a::{b, c::d}` gives [a, b], [a, c, d]).
sub tree_at {
    my ($s, $pos) = @_;
    my $rest = substr($s, $pos);
    $rest =~ /^\s*/g;
    my $p = $pos + pos($rest);
    my $c = substr($s, $p, 1);
    if ($c eq '{') {
        my (@all, $q);
        $q = $p + 1;
        while (1) {
            my ($paths, $e) = tree_at($s, $q);
            push @all, @$paths;
            my $t = substr($s, $e);
            $t =~ /^\s*/g;
            $e += pos($t);
            my $d = substr($s, $e, 1);
            if ($d eq ',') { $q = $e + 1; my $u = substr($s, $q); $u =~ /^\s*/g; last if substr($s, $q + pos($u), 1) eq '}'; next; }
            last;
        }
        my $t = substr($s, $p);
        # the end of the group: the matching brace
        my ($depth, $i) = (0, $p);
        for (; $i < length($s); $i++) {
            my $ch = substr($s, $i, 1);
            $depth++ if $ch eq '{';
            if ($ch eq '}') { $depth--; last if $depth == 0; }
        }
        return (\@all, $i + 1);
    }
    if (substr($s, $p) =~ /^(\w+)/) {
        my $id = $1;
        my $e = $p + length($id);
        if (substr($s, $e, 2) eq '::') {
            my ($paths, $f) = tree_at($s, $e + 2);
            return ([map { [$id, @$_] } @$paths], $f);
        }
        return ([[$id]], $e);
    }
    return ([['*']], $p + 1) if $c eq '*';
    return ([[]], $p + 1);
}
sub trees_after {
    my ($s, $prefix) = @_;
    my @paths;
    while ($s =~ /(?<![\w:])\Q$prefix\E::/g) {
        my ($ps) = tree_at($s, pos($s));
        push @paths, @$ps;
    }
    return @paths;
}
# The node a path reaches from the module @base (a list of segments below the store).
sub node_of {
    my ($base, $path) = @_;
    my @full = (@$base, @$path);
    my ($a, $b) = @full[0, 1];
    return 'mod' if !defined $a || $a eq '*';
    if ($is_folder{$a}) {
        return "$a/$b" if defined $b && $is_node{"$a/$b"} && $b ne 'mod';
        return "$a/mod";
    }
    return $a if $is_node{$a} && $a ne 'mod';
    return 'mod';
}
for my $f (sort keys %is_node) {
    my $s = slurp("$dir/$f.rs");
    # The module the file is, and the one `super` names.
    my @self = grep { $_ ne 'mod' } split m{/}, $f;
    my @parent = @self[0 .. $#self - 1];
    my $is_mod = $f eq 'mod' || $f =~ m{/mod$};
    # A mod file's declarations and re-exports are its public face, not uses.
    $s = join("\n", grep { $_ !~ /^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;/ && $_ !~ /^\s*pub\s+use\s+/ } split /\n/, $s) if $is_mod;
    my %to;
    # An inline `mod tests` (at the end of a file): its `super` is the file itself.
    my ($code, $tests) = split /^\s*mod tests \{\s*$/m, $s, 2;
    ($code, $tests) = ($code // "", $tests // "");
    for my $p (trees_after($s, 'crate::store')) { $to{node_of([], $p)} = 1; }
    for my $p (trees_after($code, 'super')) { next if @$p && $p->[0] eq 'super'; $to{node_of(\@parent, $p)} = 1; }
    for my $p (trees_after($tests, 'super::super')) { $to{node_of(\@parent, $p)} = 1; }
    if ($is_mod) {
        for my $p (trees_after($s, 'self')) { $to{node_of(\@self, $p)} = 1; }
        # `child::...` in a mod file: a use of the child.
        while ($s =~ /(?<![\w:])(\w+)::/g) {
            my $n = node_of(\@self, [$1]);
            $to{$n} = 1 if $n ne $f && ($is_node{join('/', @self, $1)} || (!@self && $is_node{$1}) || (!@self && $is_folder{$1}));
        }
    }
    delete $to{$f};
    print $o "store $f $_\n" for sort keys %to;
    my $folder_of = sub { my $n = shift; $n =~ m{^([^/]+)/} ? $1 : $n };
    my %fto = map { $folder_of->($_) => 1 } keys %to;
    delete $fto{$folder_of->($f)};
    print $o "folder " . $folder_of->($f) . " $_\n" for sort keys %fto;
}
close $o;
PERL

[[ $verbose == --verbose ]] && sed 's/^top /module: /; s/^store /src\/store\/: /; s/^folder /src\/store\/ folder: /' "$edges_file" | uniq


status=0
for level in top store folder; do
    case $level in
        top) what="modules of a package" ; name() { echo "$1"; } ;;
        store) what="files of src/store/" ; name() { echo "src/store/$1.rs"; } ;;
        folder) what="folders of src/store/" ; name() { echo "src/store/$1"; } ;;
    esac
    edges=$(awk -v l="$level" '$1 == l { print $2, $3 }' "$edges_file" | sort -u)
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
    echo "module-deps: no two modules of a package import each other ($(grep -c '^top ' "$edges_file") module edges in 6 packages and 6 test targets, $(grep -c '^store ' "$edges_file") store file edges, $(grep '^folder ' "$edges_file" | sort -u | wc -l) between its folders)"
fi
exit $status
