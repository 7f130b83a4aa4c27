#!/bin/sh
# Run git's own t/t1006-cat-file.sh with every `git cat-file --batch-check` / `--batch` that `odb-index
# batch-check` can serve routed to it. Run before a release, not in CI: it needs git's source tree, built.
#
#   scripts/git-t1006.sh GIT_SRC [ODB_INDEX]
#
# GIT_SRC: a git source tree built with `make` (e.g. `git archive v2.47.3` of github.com/git/git, then
# `make -j2 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1 NO_CURL=1 NO_EXPAT=1`); ODB_INDEX: the command
# (default: target/release/odb-index, built with `cargo build --release -p odb-index-cli`).
# The build's bin-wrappers/git is replaced for the run by a router (restored at the end): `git cat-file` with
# only options the command has (--batch-check[=F], --batch[=F], --batch-command[=F], --buffer,
# --batch-all-objects, --unordered) runs
# `odb-index batch-check ... <git dir>`; everything else runs git. Prints git's test summary, the failed tests,
# and how many invocations were routed. Results are recorded in README.md ("git's own test suite").
set -eu
src=$(cd "${1:?usage: $0 GIT_SRC [ODB_INDEX]}" && pwd)
odb=$(cd "$(dirname "${2:-target/release/odb-index}")" && pwd)/$(basename "${2:-target/release/odb-index}")
test -x "$src/git" || { echo "$src/git: not built" >&2; exit 2; }
test -x "$odb" || { echo "$odb: not built" >&2; exit 2; }
wrapper="$src/bin-wrappers/git"
test -f "$wrapper.orig" || cp "$wrapper" "$wrapper.orig"
log=$(mktemp -d)/routed.log
trap 'cp "$wrapper.orig" "$wrapper"' EXIT
cat >"$wrapper" <<ROUTER
#!/bin/sh
if test "\$1" = cat-file; then
	routed=yes; batch=no
	for a in "\$@"; do
		case "\$a" in
		cat-file|--buffer|--batch-all-objects|--unordered) ;;
		--batch-check|--batch-check=*|--batch|--batch=*|--batch-command|--batch-command=*) batch=yes ;;
		*) routed=no ;;
		esac
	done
	if test \$routed = yes && test \$batch = yes; then
		dir=\$("$wrapper.orig" rev-parse --git-dir 2>/dev/null) || dir=.
		echo "\$*" >>"$log"
		shift
		exec "$odb" batch-check "\$@" "\$dir"
	fi
fi
exec "$wrapper.orig" "\$@"
ROUTER
chmod +x "$wrapper"
cd "$src/t"
status=0
sh t1006-cat-file.sh -v >"$log.out" 2>&1 || status=$?
grep -E '^(ok|not ok) ' "$log.out" | sed 's/^ok [0-9]* - .*/ok/' | sort | uniq -c | sed -n '/ ok$/p'
grep -E '^not ok ' "$log.out" || true
grep -E '^# (passed|failed|still have|fixed|test_expect_)' "$log.out" | tail -5 || true
echo "routed to odb-index: $(wc -l <"$log" 2>/dev/null || echo 0) invocations"
echo "full output: $log.out"
exit $status
