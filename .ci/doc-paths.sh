#!/usr/bin/env bash
# What the documents name exists in this repository: every path, and every Rust item.
#
# The documents: README.md, cli/README.md, gix/README.md, fuzz/README.md, .ci/README.md, docs/*.md, the upstream
# pull requests' texts (docs/upstream/), upstream/repro/README.md, and the comments of loom-tests/ and proptests/
# (not CHANGELOG.md, whose entries name files and items as they were then).
#
# Paths: a word with a slash and a file extension whose first component is a directory at the top of the
# repository (`tests/integration/stress.rs`) or, written relative to `src/`, a directory there (`store/mod.rs`);
# anything else (`/tmp/x.svg`, gix-odb's own `src/store_impls/...` inside `gix-odb-0.87.0/`, git's
# `t/t1006-cat-file.sh`) is not this repository's. Globs (`docs/upstream/[123]-*/`) and paths outside the
# repository (`../shared/...`) are skipped.
#
# Items: in every backticked span, each path of Rust identifiers (`Type::method`, `module::item`,
# `scan::tests::a_test_name`, the part after a file's name in `tests/integration/x.rs::a_test`), and a span that
# is one identifier shaped like an item (`snake_case_fn`, `CamelCase`, `SCREAMING_CASE`, with `()` or arguments
# after it or not). Each identifier of it must occur in the workspace's sources: the `.rs`, `.sh`, `.py` and
# `.toml` files under git, their comment lines left out (so that a comment does not keep a gone name alive), the
# upstream pull requests' patches of gix-odb, and the files' names. Paths into other crates (`std::`,
# `gix_pack::`, `rustix::`, ...) are not checked; names of git, Linux and other crates written without their
# crate are in the allow-list below, with the reason. A grep, not a resolver: it catches a name that is gone, not
# one that moved to another type.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=()
for f in README.md cli/README.md gix/README.md fuzz/README.md .ci/README.md docs/*.md docs/upstream/README.md \
    docs/upstream/*/*.md upstream/repro/README.md; do
    [ -f "$f" ] && docs+=("$f")
done
# The comments of the model and property-test files, as text of their own (line numbers kept).
comments=$(mktemp -d)
trap 'rm -rf "$comments"' EXIT
while IFS= read -r f; do
    mkdir -p "$comments/$(dirname "$f")"
    sed -E 's#^[[:space:]]*//[/!]?[[:space:]]?##; t; s#.*##' "$f" >"$comments/$f"
    docs+=("$comments/$f")
done < <(git ls-files -co --exclude-standard -- 'loom-tests/*.rs' 'proptests/*.rs')
name_of() { local d=${1#"$comments"/}; [ "$d" = "$1" ] && echo "$1" || echo "$d (comments)"; }

missing=0
while IFS=: read -r doc path; do
    case "$path" in *'*'* | *'['*) continue ;; esac
    first=${path%%/*}
    # Outside the repository (`../shared/...`, the workplace's notes): not checked.
    case "$first" in . | ..) continue ;; esac
    if [ "$first" != target ] && [ -d "$first" ]; then
        want=$path
    elif [ -d "src/$first" ]; then
        want=src/$path
    else
        continue
    fi
    if [ ! -e "$want" ]; then
        echo "$(name_of "$doc") names $path: there is no $want" >&2
        missing=1
    fi
done < <(grep -oE '[A-Za-z0-9_.*[-]+(/[A-Za-z0-9_.*[-]+)*/[A-Za-z0-9_.*[-]+\.(rs|md|sh|diff|toml|py|svg|txt|json|lock)\b' "${docs[@]}" \
    | grep -vE ':/' | sort -u)

# Items. The allow-list: names a document may use that are not this workspace's, each group with its reason
# (`reason: name name ...`). A name goes here only when it is someone else's, never to quiet a stale one.
allow=$(cat <<'ALLOW'
git's functions (the documents compare with git's code): prepare_packed_git_one reprepare_packed_git
  mark_bad_packed_object bsearch_pack midx_pack_order find_pack_entry_one find_unique_abbrev prepare_alt_odb
  check_packed_git_idx use_pack add_packed_git skip_object_info
  files_read_raw_ref packed_read_raw_ref get_snapshot validate_snapshot stat_validity_check
gix-ref's and gix-fs's code (docs/upstream/gix-ref-pack-refs/ describes it): follow peel_to_id find_packed
  recent_snapshot
Linux's inotify and VFS code (FRESHNESS.md §1 argues from it): vfs_rename vfs_mkdir vfs_link fsnotify_move
  fsnotify_mkdir fsnotify_link fsnotify_create fsnotify_add_event fsnotify_wait_marks_destroyed
  fsnotify_destroy_group wait_for_completion inotify_read inotify_ioctl inotify_handle_inode_event get_one_event
  spin_lock notification_lock
Linux's and libc's constants and fields: IN_UNMOUNT IN_Q_OVERFLOW IN_MOVE_SELF IN_IGNORED IN_DELETE_SELF d_type
  d_ino PATH_MAX O_PATH O_DIRECTORY RESOLVE_NO_SYMLINKS
gix-odb's code (the loom model of gix-odb 0.87 and UPSTREAM.md describe it): contains_with_refresh_mode
  clear_cache
other crates' items named without their crate: fetch_update (std's atomics) LOOM_MAX_PREEMPTIONS
  MAX_ATOMIC_HISTORY (loom) Backoff snooze (crossbeam) HybridStrategy (arc-swap) inflate_table (zlib-rs)
ALLOW
)
if ! python3 - "$comments" "$allow" "${docs[@]}" <<'PY'; then
import os, re, subprocess, sys

comments, allow_text, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
allow = set(re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"^[^:\n]*:", "", allow_text, flags=re.M)))
# Other crates, and the language's own path roots: not this workspace's items.
external = re.compile(r"^(std|core|alloc|crate|self|super|Self|gix(_\w+)?|rustix|libc|loom|shuttle|memmap2|xorf"
                      r"|crossbeam(_\w+)?|tokio|arc_swap|sharded_slab|proptest|zlib_rs|flate2|serde(_\w+)?"
                      r"|tempfile|parking_lot|once_cell|bstr|smallvec|hashbrown|sha1(_\w+)?|thiserror)$")

files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True,
                       check=True).stdout.split("\n")
word = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
known = set()
for f in files:
    if not f or f.startswith("target/") or not os.path.isfile(f):
        continue
    known.update(word.findall(f))  # the file's name and folders (`snapshot`, `integration`, `odb-index`)
    ext = f.rsplit(".", 1)[-1]
    if ext not in ("rs", "sh", "py", "toml") and not (ext in ("diff", "patch") and "upstream/" in f):
        continue
    comment = "//" if ext == "rs" else "#"
    with open(f, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            s = line.lstrip("+- \t") if ext in ("diff", "patch") else line.lstrip()
            if not s.startswith(comment):
                known.update(word.findall(line))

span = re.compile(r"`([^`]+)`")
path = re.compile(r"(?<![\w:.])[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+")
in_file = re.compile(r"\.rs::([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)")
alone = re.compile(r"^[&*]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
                   r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # CamelCase
                   r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"  # SCREAMING_CASE
                   r"(?:\(.*\)|!|<.*>)?$", re.S)  # then arguments, a macro's `!` or generics

# Test paths: a span's path with a test module in it (`store::listing::scan::tests::a_test`,
# `store::relist_tests::a_test`, an integration test file's `never_wrong::a_test`) is resolved module by module
# from a crate root, as rustc would (`x.rs` or `x/mod.rs` in the folder of the module above, or an inline
# `mod x {`), and its last name must be a function of the file it ends in: a test that moved to another module
# keeps its name but not its path, and a mutant row or a document naming its old path would find nothing.
roots = {"lib": ["src/lib.rs", "gix/src/lib.rs", "cli/src/main.rs", "testkit/src/lib.rs", "bench/src/main.rs"],
         "int": ["tests/integration/main.rs"], "loom": ["loom-tests/main.rs", "loom-tests/shuttle.rs"],
         "prop": ["proptests/main.rs"],
         "tests": ["cli/tests/cli/main.rs", "gix/tests/interop/main.rs"]
         + ["gix/tests/" + f for f in sorted(os.listdir("gix/tests")) if f.endswith(".rs")]}
all_roots = [r for rs in roots.values() for r in rs]
_texts = {}
def text_of(f):
    if f not in _texts:
        _texts[f] = open(f, encoding="utf-8", errors="replace").read() if os.path.isfile(f) else None
    return _texts[f]
def resolves(root, segs):
    f = root
    if os.path.basename(root) not in ("lib.rs", "main.rs", "mod.rs", "shuttle.rs"):
        # A test file that is a crate root of its own (`gix/tests/answers.rs`): its items directly.
        pass
    for k, seg in enumerate(segs):
        last = k == len(segs) - 1
        t = text_of(f)
        if last:
            return t is not None and re.search(r"\bfn " + re.escape(seg) + r"\b", t) is not None
        d = os.path.dirname(f) if os.path.basename(f) in ("lib.rs", "main.rs", "mod.rs", "shuttle.rs") else f[:-3]
        if f in all_roots and os.path.basename(f) not in ("lib.rs", "main.rs", "shuttle.rs"):
            d = os.path.dirname(f)
        declared = t is not None and re.search(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod " + re.escape(seg) + r"\s*;", t, re.M)
        inline = t is not None and re.search(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod " + re.escape(seg) + r"\s*\{", t, re.M)
        if declared and os.path.isfile(f"{d}/{seg}.rs"):
            f = f"{d}/{seg}.rs"
        elif declared and os.path.isfile(f"{d}/{seg}/mod.rs"):
            f = f"{d}/{seg}/mod.rs"
        elif inline:
            continue
        else:
            return False
    return False
def is_test_path(segs):
    return len(segs) >= 2 and any(x == "tests" or x.endswith("_tests") for x in segs[:-1])
def test_path_ok(segs, kinds=None):
    return any(resolves(r, segs) for k in (kinds or roots) for r in roots[k])
bad = 0
for doc in docs:
    name = doc[len(comments) + 1:] + " (comments)" if doc.startswith(comments + "/") else doc
    text = open(doc, encoding="utf-8").read()
    out, fenced = [], False  # fenced blocks blanked (their backticks are shell's), lines kept
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    text = "\n".join(out)
    for m in span.finditer(text):
        s = m.group(1)
        names = [p.group(0).split("::") for p in path.finditer(s)]
        names += [p.group(1).split("::") for p in in_file.finditer(s)]  # `tests/x.rs::a_test`
        one = alone.match(s.strip())
        if one and "::" not in s:
            names.append([one.group(1)])
        for segs in names:
            if external.match(segs[0]):
                continue
            gone = [x for x in segs if x not in known and x not in allow and not external.match(x)]
            if not gone and is_test_path(segs) and not test_path_ok(segs):
                line = text.count("\n", 0, m.start()) + 1
                print(f"{name}:{line} names the test `{'::'.join(segs)}`: no such module path", file=sys.stderr)
                bad = 1
            if gone:
                line = text.count("\n", 0, m.start()) + 1
                print(f"{name}:{line} names `{'::'.join(segs)}`: no {', '.join(gone)} in the sources",
                      file=sys.stderr)
                bad = 1
# The mutant lists' checks (`lib:store::relist_tests::a_test`, `int:chain::a_test`, `loom:p1::a_model`,
# `prop:filter::a_property`): each a whole test path from its target's root, whatever its module names.
for f in sorted(x for x in files if x.startswith("loom-tests/") and x.endswith(".sh")):
    for n, line in enumerate(open(f, encoding="utf-8"), 1):
        for m in re.finditer(r"~~ (lib|int|loom|prop):([A-Za-z_][\w:]*)", line):
            segs = m.group(2).split("::")
            if not test_path_ok(segs, [m.group(1)]):
                print(f"{f}:{n} checks with `{m.group(1)}:{m.group(2)}`: no such test", file=sys.stderr)
                bad = 1
sys.exit(bad)
PY
    missing=1
fi
if [ "$missing" -ne 0 ]; then
    echo "fix the paths and names above (or the files and items they name; a name of git's: the allow-list)" >&2
    exit 1
fi
echo "every repository path and Rust item named in the documents exists (${#docs[@]} documents)"
