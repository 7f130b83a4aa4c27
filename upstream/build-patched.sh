#!/usr/bin/env bash
# Builds a patched copy of gix-odb 0.87.0 outside the tracked tree:
#   1. takes gix-odb 0.87.0's source from the cargo registry (fetching it if needed),
#   2. copies it to DEST (default target/gix-odb-patched),
#   3. renames the package to NAME (default `gix-odb-patched`, lib `gix_odb_patched`), so it can sit beside the
#      real 0.87.0 in one dependency graph (`[patch]` would replace every gix-odb 0.87 in the graph instead),
#   4. applies the DIFFs in order (default: the four pull requests of docs/upstream/ as upstream/series-087.sh lists
#      them for 0.87.0).
# Usage: upstream/build-patched.sh [DEST NAME DIFF...]    (then: cd upstream && cargo run --release -- ...)
# upstream/deterministic.sh calls it with its own DEST, NAME and the delay hook added.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/target/gix-odb-patched}
name=${2:-gix-odb-patched}
if [ $# -gt 2 ]; then
    diffs=("${@:3}")
else
    mapfile -t diffs < <("$root/upstream/series-087.sh")
fi
[ "${#diffs[@]}" -gt 0 ] && [ -f "${diffs[0]}" ] || { echo "no diff to apply" >&2; exit 1; }
lib=${name//-/_}
find_src() { ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/gix-odb-0.87.0 2>/dev/null | head -n 1; }
src=$(find_src)
if [ -z "$src" ]; then
    # The repository's own manifest names gix-odb =0.87.0, so fetching it brings the source into the registry.
    cargo fetch --manifest-path "$root/Cargo.toml" >&2
    src=$(find_src)
fi
[ -n "$src" ] || { echo "gix-odb 0.87.0 not found in the cargo registry" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
cp -R "$src" "$dest"
chmod -R u+w "$dest"
# Drop the registry's lock and the original manifest copy; rename package and lib.
rm -f "$dest/Cargo.lock" "$dest/Cargo.toml.orig" "$dest/.cargo_vcs_info.json" "$dest/.cargo-ok"
sed -i -e "s/^name = \"gix-odb\"\$/name = \"$name\"/" -e "s/^name = \"gix_odb\"\$/name = \"$lib\"/" "$dest/Cargo.toml"
grep -q "^name = \"$name\"\$" "$dest/Cargo.toml" && grep -q "^name = \"$lib\"\$" "$dest/Cargo.toml" \
    || { echo "could not rename the package in $dest/Cargo.toml" >&2; exit 1; }
for d in "${diffs[@]}"; do
    (cd "$dest" && patch -p1 --quiet < "$d")
done
# cp gives the copies the time of copying; cargo's fingerprints compare mtimes, so make the sources newer than any
# earlier build of a previous copy at the same place.
find "$dest/src" -name '*.rs' -exec touch {} +
echo "$dest"
