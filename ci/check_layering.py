#!/usr/bin/env python3
"""ci/check_layering.py: the suite's dependencies point down, never in a circle, and no two C/C++
files share a name. Reads every quoted #include of the C++/CUDA sources (and the Python imports
between the suite's packages) and reports, one line each:
  - an include from a lower part into a higher one, or between two parts of one level
    (core at the bottom; microbench, profiling, analysis on core; endtoend on those; and inside
    endtoend/src: the model layout; the data and the kernels; the options (config, which asks the
    kernels what the build has); the trainer; its input/output; gpt4d's main);
  - include cycles between modules (a module = a header and its source, x.hpp + x.cpp);
  - two headers, or two sources outside a program's entry point, with one file name;
  - a Python package of a lower part importing one of a higher part (analysis -> slurm).
Exit status 0 when clean, 1 with the findings listed. Usage: ci/check_layering.py [REPO_ROOT]
(ctest: tree.layering)."""

import os
import re
import sys
from collections import defaultdict

CXX = (".hpp", ".h", ".cpp", ".cu", ".cuh")
# The level of each part: an include may go to the same part or to a part of a lower level.
LEVELS = {"core": 0, "microbench": 1, "profiling": 1, "analysis": 1, "endtoend": 2, "slurm": 3}
# Inside endtoend/src, its own layers (a folder, or a file at its top).
ENDTOEND_LEVELS = {"model": 0, "data": 1, "kernels": 1, "config": 2, "train": 3, "io": 4,
                   "gpt4d": 5}
# Quoted includes of files made at build time.
GENERATED = {"ovb/build_info.hpp", "et_def.pb.h"}
SKIP_DIRS = {".git", "build", ".venv", "node_modules", "__pycache__"}
# Python packages and the part each belongs to.
PY_PACKAGES = {"ovb_analysis": "analysis", "ovb_suite": "slurm"}


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            yield os.path.relpath(os.path.join(d, f), root)


def include_roots(root):
    """Every include/ folder and every src/ folder of the tree, each part's top folder, and the
    top of endtoend/src: where a quoted include may be found besides the including file's folder."""
    roots = []
    for d, dirs, _ in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        rel = os.path.relpath(d, root)
        if os.path.basename(d) in ("include", "src") or rel in LEVELS:
            roots.append(rel)
    return roots


def part_of(path):
    top = path.split(os.sep, 1)[0]
    return top if top in LEVELS else None


def endtoend_layer(path):
    """The endtoend/src layer of a file, or None (tests, scripts, other folders)."""
    parts = path.split(os.sep)
    if len(parts) < 3 or parts[:2] != ["endtoend", "src"]:
        return None
    name = parts[2] if len(parts) > 3 else os.path.splitext(parts[2])[0]
    return name


def resolve(root, path, inc, roots):
    for base in [os.path.dirname(path)] + roots:
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def find_cycles(graph):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def check(root):
    problems = []
    roots = include_roots(root)
    files = [p for p in sources(root) if p.endswith(CXX) and part_of(p)]
    modules = defaultdict(set)  # module -> modules it includes
    names = defaultdict(list)
    for path in files:
        base = os.path.basename(path)
        # A program's entry point and test files may share names; headers and library sources not.
        if "/tests/" not in f"/{path}" and not base.startswith("test_"):
            names[base].append(path)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or m.group(1) in GENERATED:
                continue
            target = resolve(root, path, m.group(1), roots)
            if target is None:
                problems.append(f"{path}:{n}: #include \"{m.group(1)}\" names no file of the tree")
                continue
            a, b = part_of(path), part_of(target)
            if b and a != b and LEVELS[b] >= LEVELS[a]:
                problems.append(f"{path}:{n}: {a} includes {target} of {b}, a part of the same "
                                "or a higher level")
            la, lb = endtoend_layer(path), endtoend_layer(target)
            if la in ENDTOEND_LEVELS and lb in ENDTOEND_LEVELS and la != lb and \
                    ENDTOEND_LEVELS[lb] >= ENDTOEND_LEVELS[la]:
                problems.append(f"{path}:{n}: endtoend/src/{la} includes {target}, of the same "
                                "or a higher layer")
            ma, mb = os.path.splitext(path)[0], os.path.splitext(target)[0]
            if ma != mb:
                modules[ma].add(mb)
    for comp in find_cycles(modules):
        problems.append("include cycle between modules: " + " -> ".join(comp))
    by_stem = defaultdict(set)
    for base, paths in names.items():
        if len(paths) > 1:
            problems.append(f"one file name, several files: {', '.join(sorted(paths))}")
        for p in paths:
            if base.endswith((".hpp", ".h", ".cuh")):
                by_stem[os.path.splitext(base)[0]].add(p)
    # A header is found beside its source by name: two headers may not share a stem either.
    for stem, paths in by_stem.items():
        if len(paths) > 1:
            problems.append(f"headers of one name '{stem}': {', '.join(sorted(paths))}")
    for path in (p for p in sources(root) if p.endswith(".py") and part_of(p)):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = re.match(r"\s*(?:from|import)\s+(\w+)", line)
                if not m or m.group(1) not in PY_PACKAGES:
                    continue
                a, b = part_of(path), PY_PACKAGES[m.group(1)]
                if a != b and LEVELS[b] >= LEVELS[a]:
                    problems.append(f"{path}:{n}: {a} imports {m.group(1)} of {b}, a part of "
                                    "the same or a higher level")
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.path.isdir(os.path.join(root, "core")):
        print(f"check_layering: error: {root} is not the suite's source tree (no core/)",
              file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(p)
    print(f"check_layering: {len(problems)} problem(s)" if problems else
          "check_layering: dependencies point down, no cycles, names unique")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
