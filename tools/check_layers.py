#!/usr/bin/env python3
"""check_layers.py: the include discipline of src/ (issue 13), run by .ci/run.

Fails (exit 1) when
  - a file of src/cuda/ includes a header of a stage above its own: the stages and their
    order are read from the line starting with "Order:" in src/cuda/README.md, e.g.
    Order: `kernels < device < lower < engine < impl < compile.c < execute.c < context.c`
    where a name is a folder of src/cuda/ (its files and headers) or a file of src/cuda/;
  - a file of src/cuda/ is in none of the stages (a new folder or file must be placed);
  - a file outside src/cuda/ includes a header of src/cuda/ (the core reaches the backend
    only through src/internal.h);
  - a file of src/onnx/ (the ONNX importer, a library above the public API) includes a header
    of src/ outside src/onnx/: it reaches nnop through include/nnop/*.h only;
  - the include graph of src/ has a cycle.
usage: tools/check_layers.py [ROOT]   (ROOT: the repository, default: this script's parent)"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "src")
CUDA = os.path.join(SRC, "cuda")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def read_order():
    with open(os.path.join(CUDA, "README.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("Order:"):
                names = [n.strip() for n in line.split(":", 1)[1].strip().strip("`").split("<")]
                return {n: i for i, n in enumerate(names)}
    sys.exit("check_layers: no 'Order:' line in src/cuda/README.md")


def stage_of(rel, order):
    """Stage rank of a path relative to src/cuda, or None."""
    head = rel.split("/", 1)[0]
    return order.get(head)


def resolve(path, name):
    """The file an #include "name" in path means: next to path, else under src/."""
    for base in (os.path.dirname(path), SRC):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(cand):
            return cand
    return None


def main():
    order = read_order()
    files = []
    for d, _, names in os.walk(SRC):
        files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h", ".cu", ".cuh"))]
    problems, edges = [], {}
    for path in sorted(files):
        rel = os.path.relpath(path, SRC)
        in_cuda = rel.startswith("cuda/")
        mine = stage_of(os.path.relpath(path, CUDA), order) if in_cuda else None
        if in_cuda and mine is None:
            problems.append(f"src/{rel}: in no stage of the Order line in src/cuda/README.md")
        edges[path] = []
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(path, m.group(1))
                if target is None:
                    continue  # a system or generated header
                edges[path].append(target)
                trel = os.path.relpath(target, SRC)
                if rel.startswith("onnx/") and not trel.startswith("onnx/"):
                    problems.append(f"src/{rel}:{n}: includes src/{trel}: the ONNX importer "
                                    "reaches nnop through include/nnop/*.h only")
                if not trel.startswith("cuda/"):
                    continue
                theirs = stage_of(os.path.relpath(target, CUDA), order)
                if not in_cuda:
                    problems.append(f"src/{rel}:{n}: includes src/{trel}: the core reaches the "
                                    "CUDA backend only through src/internal.h")
                elif theirs is not None and mine is not None and theirs > mine:
                    problems.append(f"src/{rel}:{n}: includes src/{trel}, a stage above its own")
    # cycles (Tarjan, iterative)
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            recurse = False
            for j in range(i, len(edges.get(v, []))):
                w = edges[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in edges.get(v, []):
                    sccs.append(sorted(os.path.relpath(c, ROOT) for c in comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    for c in sccs:
        problems.append("include cycle: " + " -> ".join(c))
    for p in problems:
        print(p)
    print(f"check_layers: {len(files)} files, order "
          + " < ".join(sorted(order, key=order.get))
          + (f": {len(problems)} problem(s)" if problems else ": ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
