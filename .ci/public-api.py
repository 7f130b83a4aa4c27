#!/usr/bin/env python3
"""Print the public API of a crate from rustdoc's JSON output, one item per line, sorted.

Usage: .ci/public-api.py target/doc/odb_index.json > docs/public-api.txt
(the JSON comes from `cargo +nightly rustdoc -p odb-index -- -Z unstable-options --output-format json`;
`.ci/public-api.sh` runs both and compares with the committed file).

Walks the crate from its root module through public modules and re-exports (`pub use`), and prints every item
reachable by a user: modules, types, traits, functions with their signatures, constants, public fields, enum
variants, inherent methods and associated items, and the traits each type implements (auto traits and blanket
impls left out: they follow from the fields; so are impls of hidden traits, the compiler's derive markers). Items
marked `#[doc(hidden)]` are listed too (rustdoc runs with `--document-hidden-items`), with a `#[doc(hidden)]` prefix:
hidden is still surface.
"""
import json
import sys


def main(path):
    doc = json.load(open(path))
    index = doc["index"]
    paths = doc["paths"]
    root = doc["root"]
    out = set()

    def kind_of(item):
        return next(iter(item["inner"]))

    def hidden(item):
        attrs = item.get("attrs") or []
        return any("hidden" in (a if isinstance(a, str) else json.dumps(a)) for a in attrs)

    def ty(t):
        """Render a rustdoc JSON type (the common shapes; anything else as its kind)."""
        if t is None:
            return "()"
        k, v = next(iter(t.items()))
        if k == "resolved_path":
            name = v.get("path") or v.get("name")
            name = name.split("::")[-1]
            return name + generic_args(v.get("args"))
        if k == "primitive":
            return v
        if k == "generic":
            return v
        if k == "borrowed_ref":
            lt = (v.get("lifetime") + " ") if v.get("lifetime") else ""
            m = "mut " if v.get("is_mutable") else ""
            return "&" + lt + m + ty(v["type"])
        if k == "raw_pointer":
            return ("*mut " if v.get("is_mutable") else "*const ") + ty(v["type"])
        if k == "slice":
            return "[" + ty(v) + "]"
        if k == "array":
            return "[" + ty(v["type"]) + "; " + str(v["len"]) + "]"
        if k == "tuple":
            return "(" + ", ".join(ty(x) for x in v) + ")"
        if k == "impl_trait":
            return "impl " + " + ".join(bound(b) for b in v)
        if k == "dyn_trait":
            return "dyn " + " + ".join(p["trait"]["path"].split("::")[-1] + generic_args(p["trait"].get("args")) for p in v["traits"])
        if k == "qualified_path":
            return "<" + ty(v["self_type"]) + ">::" + v["name"]
        if k == "function_pointer":
            return "fn(..)"
        return k

    def generic_args(a):
        if not a:
            return ""
        if "angle_bracketed" in a:
            parts = []
            for g in a["angle_bracketed"].get("args", []):
                gk, gv = next(iter(g.items())) if isinstance(g, dict) else (g, None)
                if gk == "type":
                    parts.append(ty(gv))
                elif gk == "lifetime":
                    parts.append(gv)
                elif gk == "const":
                    parts.append(str(gv.get("expr", "_")))
                else:
                    parts.append("_")
            for c in a["angle_bracketed"].get("constraints", []):
                b = c.get("binding", {})
                if "equality" in b:
                    parts.append(c["name"] + " = " + ty(b["equality"].get("type")))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            return "(" + ", ".join(ty(x) for x in p["inputs"]) + ")" + (" -> " + ty(p["output"]) if p.get("output") else "")
        return ""

    def crate_of(iid):
        """`<crate>::` for an item of another crate, "" for this crate's (or unknown)."""
        p = paths.get(str(iid)) if iid is not None else None
        if not p or p.get("crate_id", 0) == 0:
            return ""
        c = doc.get("external_crates", {}).get(str(p["crate_id"]))
        return c["name"] + "::" if c and c["name"] not in ("std", "alloc", "core") else ""

    def trait_args(a):
        """A trait's generic arguments, each type named with its crate (`From<gix_error::Error>`):
        two impls of one trait for types of the same name in different crates stay two lines."""
        parts = []
        for g in ((a or {}).get("angle_bracketed") or {}).get("args", []):
            gk, gv = next(iter(g.items())) if isinstance(g, dict) else (g, None)
            if gk == "type" and "resolved_path" in gv:
                rp = gv["resolved_path"]
                parts.append(crate_of(rp.get("id")) + rp["path"].split("::")[-1] + generic_args(rp.get("args")))
            elif gk == "type":
                parts.append(ty(gv))
            else:
                return generic_args(a)
        return "<" + ", ".join(parts) + ">" if parts else generic_args(a)

    def bound(b):
        if "trait_bound" in b:
            t = b["trait_bound"]["trait"]
            maybe = "?" if b["trait_bound"].get("modifier") == "maybe" else ""
            return maybe + t["path"].split("::")[-1] + generic_args(t.get("args"))
        if "outlives" in b:
            return b["outlives"]
        return "?"

    def sig(item, owner=None):
        f = item["inner"]["function"]
        s = f["sig"]
        gens = [
            p["name"]
            for p in f["generics"]["params"]
            if not (isinstance(p.get("kind"), dict) and p["kind"].get("type", {}).get("is_synthetic"))
        ]
        g = "<" + ", ".join(gens) + ">" if gens else ""

        def arg(name, t):
            if name != "self":
                return name + ": " + ty(t)
            if "borrowed_ref" in t:
                return "&mut self" if t["borrowed_ref"].get("is_mutable") else "&self"
            return "self"

        args = ", ".join(arg(name, t) for name, t in s["inputs"])
        ret = " -> " + ty(s["output"]) if s.get("output") else ""
        h = f.get("header", {})
        pre = ("const " if h.get("is_const") else "") + ("unsafe " if h.get("is_unsafe") else "")
        name = (owner + "::" if owner else "") + item["name"]
        return pre + "fn " + name + g + "(" + args + ")" + ret

    def emit(line, item):
        out.add(("#[doc(hidden)] " if hidden(item) else "") + line)

    def impls(owner, ids):
        for iid in ids:
            imp = index.get(str(iid)) or index.get(iid)
            if imp is None:
                continue
            i = imp["inner"]["impl"]
            if i.get("is_synthetic") or i.get("blanket_impl"):
                continue
            if i.get("trait"):
                if hidden(imp):
                    continue  # an impl of a hidden trait: the compiler's derive markers (TrivialClone), not ours
                emit("impl " + i["trait"]["path"].split("::")[-1] + trait_args(i["trait"].get("args")) + " for " + owner, imp)
                continue
            for mid in i["items"]:
                m = index.get(str(mid)) or index.get(mid)
                if m is None or m.get("visibility") != "public":
                    continue
                k = kind_of(m)
                if k == "function":
                    emit("pub " + sig(m, owner), m)
                elif k == "assoc_const":
                    emit("pub const " + owner + "::" + m["name"] + ": " + ty(m["inner"][k].get("type")), m)
                else:
                    emit("pub " + k + " " + owner + "::" + m["name"], m)

    seen = set()

    def walk(iid, prefix):
        item = index.get(str(iid)) or index.get(iid)
        if item is None:
            return
        k = kind_of(item)
        if k == "use":
            u = item["inner"]["use"]
            target = u.get("id")
            if target is None:
                emit("pub use " + prefix + "::" + u["name"] + " (from " + u["source"] + ")", item)
                return
            if u.get("is_glob"):
                t = index.get(str(target)) or index.get(target)
                if t is not None and kind_of(t) == "module":
                    for c in t["inner"]["module"]["items"]:
                        walk(c, prefix)
                return
            t = index.get(str(target)) or index.get(target)
            if t is None:
                # An item of another crate: named as the `use` names it (its public path there), not by where it
                # is defined (which moves with that crate's private layout).
                emit("pub use " + prefix + "::" + u["name"] + " (" + u["source"] + ")", item)
                return
            t = dict(t)
            t["name"] = u["name"]
            walk_item(t, prefix, target)
            return
        walk_item(item, prefix, iid)

    def walk_item(item, prefix, iid):
        k = kind_of(item)
        name = item.get("name")
        path = prefix + "::" + name if name else prefix
        if (iid, path) in seen:
            return
        seen.add((iid, path))
        v = item["inner"][k]
        if k == "module":
            emit("pub mod " + path, item)
            for c in v["items"]:
                walk(c, path)
        elif k == "struct":
            emit("pub struct " + path, item)
            sk = v["kind"]
            if isinstance(sk, dict) and "plain" in sk:
                for fid in sk["plain"]["fields"]:
                    f = index.get(str(fid)) or index.get(fid)
                    if f and f.get("visibility") == "public":
                        emit("pub " + path + "::" + f["name"] + ": " + ty(f["inner"]["struct_field"]), f)
            elif isinstance(sk, dict) and "tuple" in sk:
                for n, fid in enumerate(sk["tuple"]):
                    if fid is not None:
                        f = index.get(str(fid)) or index.get(fid)
                        if f and f.get("visibility") == "public":
                            emit("pub " + path + "::" + str(n) + ": " + ty(f["inner"]["struct_field"]), f)
            impls(path, v["impls"])
        elif k == "enum":
            emit("pub enum " + path, item)
            for vid in v["variants"]:
                var = index.get(str(vid)) or index.get(vid)
                vk = var["inner"]["variant"]["kind"]
                fields = ""
                if isinstance(vk, dict) and "struct" in vk:
                    names = []
                    for fid in vk["struct"]["fields"]:
                        f = index.get(str(fid)) or index.get(fid)
                        names.append(f["name"] + ": " + ty(f["inner"]["struct_field"]))
                    fields = " { " + ", ".join(names) + " }"
                elif isinstance(vk, dict) and "tuple" in vk:
                    tys = []
                    for fid in vk["tuple"]:
                        f = index.get(str(fid)) or index.get(fid) if fid is not None else None
                        tys.append(ty(f["inner"]["struct_field"]) if f else "_")
                    fields = "(" + ", ".join(tys) + ")"
                emit(path + "::" + var["name"] + fields, var)
            impls(path, v["impls"])
        elif k == "function":
            emit("pub " + sig(item, prefix), item)
        elif k == "constant":
            emit("pub const " + path + ": " + ty(v.get("type")), item)
        elif k == "static":
            emit("pub static " + path + ": " + ty(v.get("type")), item)
        elif k == "trait":
            emit("pub trait " + path, item)
            for mid in v["items"]:
                m = index.get(str(mid)) or index.get(mid)
                if m and kind_of(m) == "function":
                    emit("pub " + sig(m, path), m)
                elif m:
                    emit("pub " + kind_of(m) + " " + path + "::" + m["name"], m)
        elif k == "type_alias":
            emit("pub type " + path + " = " + ty(v.get("type")), item)
        elif k == "macro":
            emit("pub macro " + path, item)
        else:
            emit("pub " + k + " " + path, item)

    top = index[str(root)] if str(root) in index else index[root]
    crate = top["name"]
    emit("pub mod " + crate, top)
    for c in top["inner"]["module"]["items"]:
        walk(c, crate)
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
