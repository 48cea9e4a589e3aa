#!/usr/bin/env python3
"""ci/check_cuda_objects.py: in a CUDA build, only the CUDA code sees CUDA. Every C++ object
outside the CUDA code compiles with the same command as in a host build, so that ccache, after one
of the two builds, hits for it in the other (ci/test.sh builds both). Reads the build's
compile_commands.json and reports, one line each, a C++ source outside the CUDA code whose command
names a CUDA switch (OVB_HAVE_CUDA, OVB_HAVE_CUDNN, OVB_TRACE_HAVE_CUPTI) or one of the CUDA
include folders given. The CUDA code: .cu files, sources in a folder named cuda/, the tracing
session (profiling/src/trace_session.cpp, which drives CUPTI), and the programs built only with
CUDA that call it directly (the GPU probe, the CUPTI export test).
Exit status 0 when clean, 1 with the findings listed.
Usage: ci/check_cuda_objects.py BUILD_DIR [CUDA_INCLUDE_DIR...] (ctest: tree.cuda_objects)."""

import json
import os
import shlex
import sys

SWITCHES = ("OVB_HAVE_CUDA", "OVB_HAVE_CUDNN", "OVB_TRACE_HAVE_CUPTI")
CUDA_CODE = ("profiling/src/trace_session.cpp", "core/tools/gpu_probe.cpp",
             "profiling/tests/test_cuda_export.cpp")


def is_cuda_code(path):
    p = path.replace(os.sep, "/")
    return p.endswith(".cu") or "/cuda/" in p or p.endswith(CUDA_CODE)


def findings(commands, include_dirs):
    dirs = {os.path.normpath(d) for d in include_dirs if d}
    out = []
    for entry in commands:
        src = entry["file"]
        if is_cuda_code(src):
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        for i, a in enumerate(args):
            if any(a.startswith(f"-D{s}") for s in SWITCHES):
                out.append(f"{src}: compiled with {a}")
            d = None
            if a in ("-I", "-isystem") and i + 1 < len(args):
                d = args[i + 1]
            elif a.startswith("-isystem") and a != "-isystem":
                d = a[len("-isystem"):]
            elif a.startswith("-I") and a != "-I":
                d = a[2:]
            if d is not None and os.path.normpath(d) in dirs:
                out.append(f"{src}: sees the CUDA include folder {d}")
    return out


def main(argv):
    if len(argv) < 2:
        print("usage: check_cuda_objects.py BUILD_DIR [CUDA_INCLUDE_DIR...]", file=sys.stderr)
        return 2
    path = os.path.join(argv[1], "compile_commands.json")
    try:
        with open(path) as f:
            commands = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_cuda_objects: error: cannot read {path}: {e}", file=sys.stderr)
        return 2
    problems = findings(commands, argv[2:])
    for p in problems:
        print(p)
    checked = sum(1 for e in commands if not is_cuda_code(e["file"]))
    print(f"check_cuda_objects: {checked} objects outside the CUDA code, {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
