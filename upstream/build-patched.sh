#!/usr/bin/env bash
# Builds the patched gix-odb that `upstream/` (the comparison package) depends on:
#   1. takes gix-odb 0.87.0's source from the cargo registry (fetching it if needed),
#   2. copies it to target/gix-odb-patched (outside the tracked tree),
#   3. renames the package to `gix-odb-patched` (lib `gix_odb_patched`), so it can sit beside the real 0.87.0 in
#      one dependency graph (`[patch]` would replace every gix-odb 0.87 in the graph instead),
#   4. applies docs/upstream/gix-odb-0.87-blocking-wait.diff.
# Usage: upstream/build-patched.sh     (then: cd upstream && cargo run --release -- ...)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
diff=$root/docs/upstream/gix-odb-0.87-blocking-wait.diff
find_src() { ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/gix-odb-0.87.0 2>/dev/null | head -n 1; }
src=$(find_src)
if [ -z "$src" ]; then
    # The repository's own manifest names gix-odb =0.87.0, so fetching it brings the source into the registry.
    cargo fetch --manifest-path "$root/Cargo.toml" >&2
    src=$(find_src)
fi
[ -n "$src" ] || { echo "gix-odb 0.87.0 not found in the cargo registry" >&2; exit 1; }
dest=$root/target/gix-odb-patched
rm -rf "$dest"
mkdir -p "$root/target"
cp -R "$src" "$dest"
chmod -R u+w "$dest"
# Drop the registry's lock and the original manifest copy; rename package and lib.
rm -f "$dest/Cargo.lock" "$dest/Cargo.toml.orig" "$dest/.cargo_vcs_info.json" "$dest/.cargo-ok"
sed -i -e 's/^name = "gix-odb"$/name = "gix-odb-patched"/' -e 's/^name = "gix_odb"$/name = "gix_odb_patched"/' "$dest/Cargo.toml"
grep -q '^name = "gix-odb-patched"$' "$dest/Cargo.toml" && grep -q '^name = "gix_odb_patched"$' "$dest/Cargo.toml" \
    || { echo "could not rename the package in $dest/Cargo.toml" >&2; exit 1; }
(cd "$dest" && patch -p1 --quiet < "$diff")
echo "$dest"
