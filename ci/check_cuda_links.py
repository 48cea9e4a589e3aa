#!/usr/bin/env python3
"""ci/check_cuda_links.py: in a CUDA build, only the programs that run CUDA code link CUDA. The
CUDA libraries (cudart, cuBLAS(Lt), NCCL, CUPTI, cuDNN: some 200 MB) are mapped by every program
that links them, at start, whether it calls them or not; the analysis tools (ovb-trace, ovb-model)
never do and must start without them. For each program after --host: the libraries the dynamic
loader maps at start (ldd: the whole tree of DT_NEEDED entries) must name no CUDA library, and its
symbol tables (nm) no CUDA function, as statically linked CUDA code would (cudart_static, NVTX).
For each program after --cuda (those that link ovb::cuda_backend): it must link a CUDA library,
so a check that went blind (no ldd output, a changed soname) fails instead of passing, and carry
the backend's hooks (ovb::cuda::backend_hooks, core/src/cuda/entry.cpp), without which it would
have CUDA's libraries but run on the host backend.
Exit status 0 when clean, 1 with the findings listed, 2 on bad usage or a program not found.
Usage: ci/check_cuda_links.py --host PROGRAM... --cuda PROGRAM... (ctest: tree.cuda_links)."""

import os
import re
import subprocess
import sys

# Sonames of CUDA's libraries (the driver's libcuda and NVML included): libcudart.so.13, ...
CUDA_LIBRARY = re.compile(r"^lib(cuda|cublas|nccl|cupti|cudnn|nvrtc|nvidia-ml|nvToolsExt|"
                          r"nvJitLink|cufft|curand|cusolver|cusparse)")
# C functions of those libraries, and what nvcc's registration code and NVTX define.
CUDA_SYMBOL = re.compile(r"^(__cuda|cuda|cublas|nccl|cupti|cudnn|nvtx)[A-Z_]")
# ovb::cuda::backend_hooks, as the linker names it.
BACKEND_HOOKS = "_ZN3ovb4cuda13backend_hooksE"


def cuda_libraries(ldd_output):
    """(soname, where) of each CUDA library in ldd's output."""
    found = []
    for line in ldd_output.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = os.path.basename(parts[0])
        if CUDA_LIBRARY.match(name):
            where = parts[0]
            if len(parts) > 2 and parts[1] == "=>":
                where = "not found" if parts[2] == "not" else parts[2]
            found.append((name, where))
    return found


def has_backend_hooks(nm_output):
    """True when `nm -P` output defines the hooks (as data: D or R)."""
    return any(line.split()[:2] in ([BACKEND_HOOKS, "D"], [BACKEND_HOOKS, "R"])
               for line in nm_output.splitlines())


def cuda_symbols(nm_output):
    """Names of CUDA functions in `nm -P` output (defined or undefined), sorted, once each."""
    names = set()
    for line in nm_output.splitlines():
        parts = line.split()
        if parts and CUDA_SYMBOL.match(parts[0]):
            names.add(parts[0].split("@")[0])
    return sorted(names)


def run(cmd):
    """stdout of cmd; a missing tool is an error, a non-zero status (nm: no symbols) is not."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError as e:
        raise SystemExit(f"check_cuda_links: error: cannot run {cmd[0]}: {e}") from e


def findings(host_programs, cuda_programs, ldd=lambda p: run(["ldd", p]),
             nm=lambda p: run(["nm", "-P", p]) + run(["nm", "-P", "-D", p])):
    out = []
    for p in host_programs:
        name = os.path.basename(p)
        for lib, where in cuda_libraries(ldd(p)):
            out.append(f"{name}: links {lib} ({where}), but runs no CUDA code")
        symbols = cuda_symbols(nm(p))
        if symbols:
            shown = ", ".join(symbols[:5]) + (", ..." if len(symbols) > 5 else "")
            out.append(f"{name}: contains {len(symbols)} CUDA function(s) ({shown}), but runs "
                       "no CUDA code")
    for p in cuda_programs:
        name = os.path.basename(p)
        if not cuda_libraries(ldd(p)):
            out.append(f"{name}: links no CUDA library, but runs CUDA code (or ldd's output "
                       "could not be read)")
        if not has_backend_hooks(nm(p)):
            out.append(f"{name}: lacks the CUDA backend's hooks (ovb::cuda::backend_hooks): "
                       "link ovb::cuda_backend, which links the backend whole")
    return out


def main(argv):
    groups = {"--host": [], "--cuda": []}
    current = None
    for a in argv[1:]:
        if a in groups:
            current = a
        elif current is None:
            print(f"check_cuda_links: error: '{a}' before --host or --cuda", file=sys.stderr)
            return 2
        else:
            groups[current].append(a)
    if not groups["--host"] or not groups["--cuda"]:
        print("usage: check_cuda_links.py --host PROGRAM... --cuda PROGRAM...", file=sys.stderr)
        return 2
    missing = [p for p in groups["--host"] + groups["--cuda"] if not os.path.isfile(p)]
    if missing:
        print(f"check_cuda_links: error: no such program: {', '.join(missing)}", file=sys.stderr)
        return 2
    problems = findings(groups["--host"], groups["--cuda"])
    for p in problems:
        print(p)
    print(f"check_cuda_links: {len(groups['--host'])} programs without CUDA, "
          f"{len(groups['--cuda'])} with, {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
