#!/usr/bin/env bash
# Runs the reproduction inlined in docs/upstream/1-f1/ISSUE.md exactly as written there: its Cargo.toml
# dependencies (from the text), its ```rust block as src/main.rs, its ```sh block, in a temporary directory.
# Usage: upstream/issue-repro.sh [never|default]...   (default: never default; 60 s each, then `uptime`)
set -euo pipefail
issue=$(cd "$(dirname "$0")/.." && pwd)/docs/upstream/1-f1/ISSUE.md
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir "$tmp/src"
deps=$(tr '\n' ' ' < "$issue" | grep -o '`gix-[a-z]* = [^`]*`' | tr -d '`')
printf '[package]\nname = "f1"\nedition = "2021"\n[dependencies]\n%s\n' "$deps" > "$tmp/Cargo.toml"
sed -n '/^```rust$/,/^```$/p' "$issue" | sed '1d;$d' > "$tmp/src/main.rs"
sed -n '/^```sh$/,/^```$/p' "$issue" | sed '1d;$d' > "$tmp/run.sh"
cd "$tmp"
for mode in "${@:-never default}"; do
    for m in $mode; do
        echo "== $m"
        sed "s/never   # or: default\$/$m/" run.sh | bash -e
        rm -rf r
        uptime
    done
done
