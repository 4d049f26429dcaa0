#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""No two source files of the library, of the gdrmap command or of the
simulated GPU's CUDA library call each other in a loop, directly or through others: a file's functions may
use another file's only where that file does not, through any chain, use
the first one's.  The calls are read from the objects the build made
(nm: the symbols each object defines and the ones it needs), so a call
through a header's inline function counts where it is made.

Each group of objects linked together is checked on its own; the build
directory is $GDRMAP_BUILD (default build/).  A circle is shown with the
symbols behind each of its edges.  Exit 0 pass, 1 fail, 77 skip (nothing
built, or no nm)."""

import os
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("GDRMAP_BUILD") or os.path.join(TOP, "build")

# Objects linked together, by the directories of their sources.
GROUPS = {
    "the library (lib/*/, common/)": ["lib/" + d for d in (
        "base", "isa", "diag", "backends", "paths", "api")] + ["common"],
    "the gdrmap command (tools/)": ["tools"],
    "the simulated GPU's CUDA (sim/libcuda/)": ["sim/libcuda"],
}


def symbols(obj, *flags):
    out = subprocess.run(["nm", *flags, obj], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def edges_of(objs):
    """{object: {object it uses: [symbols]}}"""
    where = {}
    for o in objs:
        for s in symbols(o, "--defined-only", "-g"):
            where.setdefault(s, o)
    edges = {o: {} for o in objs}
    for o in objs:
        for s in sorted(symbols(o, "-u")):
            d = where.get(s)
            if d and d != o:
                edges[o].setdefault(d, []).append(s)
    return edges


def circles(edges):
    """The strongly connected components of more than one object."""
    index, low, stack, on, found = {}, {}, [], set(), []

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
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    if not shutil.which("nm"):
        print("SKIP: nm is missing (apt-get install binutils)")
        return 77
    passed = failed = 0
    for name, dirs in GROUPS.items():
        objs = []
        for d in dirs:
            path = os.path.join(BUILD, d)
            if os.path.isdir(path):
                objs += [os.path.join(path, f) for f in sorted(os.listdir(path))
                         if f.endswith(".o")]
        if not objs:
            print("no objects of %s in %s: build it first" % (name, BUILD))
            failed += 1
            continue
        edges = edges_of(objs)
        found = circles(edges)
        if not found:
            passed += 1
            continue
        failed += 1
        for comp in found:
            rel = [os.path.relpath(o, BUILD) for o in comp]
            print("FAIL: %s: these files call each other in a loop: %s"
                  % (name, " ".join(rel)))
            for a in comp:
                for b, syms in sorted(edges[a].items()):
                    if b in comp:
                        print("    %s -> %s: %s" % (
                            os.path.relpath(a, BUILD),
                            os.path.relpath(b, BUILD), " ".join(syms[:6])))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
