#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Finds import circles among rroce's Rust files, and imports of the driver
from the abstraction layer.

Every file is a node; a file that names an item of another file (a `use`,
or a path such as `crate::qp::Qp` in code) has an edge to it. A name
re-exported by a `mod.rs` leads to the file that defines it, and a parent
declaring or re-exporting its children is no edge. Prints each circle (a
strongly connected component of more than one file) and each file under
rust/ that names an item of the driver (rust/kernel is compiled into the
driver's crate, so the compiler does not keep that boundary), and exits 1
if there is either; `-v` prints every edge.
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
DRIVER = "drivers/infiniband/sw/rroce"
# The crate's top modules that live outside the driver's directory.
MOUNTS = {"kernel_ext": "rust/kernel", "bindings": "rust/bindings", "trace": "rust/trace"}
def module_file(mod):
    """The file of module path `mod` (a list, from the crate root), if any."""
    if not mod:
        return f"{DRIVER}/rroce_main.rs"
    base = MOUNTS.get(mod[0])
    parts = [base] + mod[1:] if base else [DRIVER] + mod
    path = "/".join(parts)
    for cand in (path + ".rs", path + "/mod.rs"):
        if os.path.isfile(os.path.join(ROOT, cand)):
            return cand
    if base and len(mod) == 1:
        return base + "/mod.rs"
    return None


def module_of(path):
    """The module path of a file."""
    for name, base in MOUNTS.items():
        if path.startswith(base + "/"):
            rest = path[len(base) + 1:]
            head = [name]
            break
    else:
        rest = path[len(DRIVER) + 1:]
        head = []
    if rest == "rroce_main.rs":
        return []
    rest = rest[:-3]
    parts = rest.split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return head + parts


def strip(src):
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
    # The host-only tests of a file may reach anything.
    return re.split(r"#\[cfg\(test\)\]\s*mod tests", src)[0]


def expand(tree):
    """The paths a use tree names: 'a::{b, c::d}' -> [a::b, a::c::d]."""
    tree = tree.strip()
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = tree[:i]
                inner = tree[i + 1:tree.rindex("}")]
                out = []
                for part in split_top(inner):
                    out += [prefix + p for p in expand(part)]
                return out
            depth += 1
        elif ch == "}":
            depth -= 1
    return [re.sub(r"\s+as\s+\w+$", "", tree)] if tree else []


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def uses(src):
    """(visibility, path) of each `use` and of each path in code."""
    out = []
    for m in re.finditer(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", src):
        for p in expand(m.group(2)):
            out.append((bool(m.group(1)), re.sub(r"\s+", "", p)))
    code = re.sub(r"\buse\s+[^;]+;", "", src)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", code):
        out.append((False, m.group(1)))
    return out


def absolute(path, mod, is_mod_rs):
    segs = path.split("::")
    here = mod if is_mod_rs else mod[:-1]
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] == "self":
        return (mod if is_mod_rs else mod) + segs[1:]
    if segs[0] == "super":
        base = mod
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        return base + segs
    # A path relative to the current module (e.g. a child of a mod.rs).
    if module_file(here + segs[:1]):
        return here + segs
    return None


def main():
    verbose = "-v" in sys.argv
    files = []
    for top in (DRIVER, "rust/kernel", "rust/trace"):
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            files += [os.path.relpath(os.path.join(d, n), ROOT)
                      for n in names if n.endswith(".rs")]
    parsed = {}
    for f in files:
        with open(os.path.join(ROOT, f)) as fh:
            parsed[f] = uses(strip(fh.read()))
    # Names a mod.rs re-exports, and where from.
    reexports = {}
    for f, us in parsed.items():
        if not f.endswith("mod.rs"):
            continue
        mod = module_of(f)
        for public, p in us:
            a = absolute(p, mod, True)
            if public and a and len(a) > len(mod):
                reexports[tuple(mod + [a[-1]])] = a

    def target(a):
        for _ in range(4):
            for n in range(len(a), -1, -1):
                if module_file(a[:n]):
                    break
            rest = a[n:]
            if rest and tuple(a[:n + 1]) in reexports:
                a = reexports[tuple(a[:n + 1])] + rest[1:]
                continue
            return module_file(a[:n])
        return None

    edges = {f: set() for f in files}
    crossings = []
    for f, us in parsed.items():
        mod = module_of(f)
        # A parent module: a mod.rs, the crate root, or a file beside the
        # directory of its children (proto/window.rs and proto/window/).
        is_mod_rs = (f.endswith("mod.rs") or f.endswith("rroce_main.rs")
                     or os.path.isdir(os.path.join(ROOT, f[:-3])))
        for public, p in us:
            a = absolute(p, mod, is_mod_rs)
            if a is None:
                continue
            t = target(a)
            if not t or t == f or t not in edges:
                continue
            tmod = module_of(t)
            # A parent re-exporting from its tree is no import; a parent
            # using what a child defines is, and then the child must not use
            # the parent.
            if is_mod_rs and public and tmod[:len(mod)] == mod:
                continue
            edges[f].add(t)
            if f.startswith("rust/") and t.startswith(DRIVER + "/"):
                crossings.append(f"{f} -> {t}  ({p})")
            if verbose:
                print(f"{f} -> {t}  ({p})")

    # Tarjan's strongly connected components.
    index, low, stack, on, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    circles = [sorted(c) for c in sccs if len(c) > 1]
    for c in circles:
        print("check-imports: import circle: " + ", ".join(c))
        for v in c:
            for w in sorted(edges[v] & set(c)):
                print(f"    {v} -> {w}")
    for c in crossings:
        print("check-imports: the abstraction layer imports the driver: " + c)
    if circles or crossings:
        return 1
    print(f"check-imports: {len(files)} files, no import circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
