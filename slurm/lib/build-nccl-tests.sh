#!/usr/bin/env bash
# slurm/lib/build-nccl-tests.sh: unpacks an nccl-tests source tarball and builds its MPI-enabled
# perf programs, for the side-by-side campaign (nccl-tests is a comparison tool, built where it
# runs, never part of the suite). Extra words are make variables (MPI_HOME=..., NCCL_HOME=...).
# Usage: build-nccl-tests.sh TARBALL DEST [MAKEVAR=VALUE...]   -> DEST/build/all_reduce_perf, ...
set -euo pipefail
[ $# -ge 2 ] || { echo "build-nccl-tests.sh: error: usage: build-nccl-tests.sh TARBALL DEST [MAKEVAR=VALUE...]" >&2; exit 2; }
tarball=$1 dest=$2
shift 2
[ -f "$tarball" ] || { echo "build-nccl-tests.sh: error: $tarball: no such file (pass the nccl-tests tarball with --param nccl_tests=PATH)" >&2; exit 2; }
command -v nvcc >/dev/null || { echo "build-nccl-tests.sh: error: nvcc not found: nccl-tests needs the CUDA toolkit" >&2; exit 2; }
mkdir -p "$dest"
tar xzf "$tarball" -C "$dest" --strip-components=1
jobs=$(nproc 2>/dev/null || echo 4)
make -C "$dest" -j "$jobs" MPI=1 "$@"
for p in all_reduce_perf reduce_scatter_perf all_gather_perf; do
  [ -x "$dest/build/$p" ] || { echo "build-nccl-tests.sh: error: $dest/build/$p was not built" >&2; exit 1; }
done
echo "build-nccl-tests.sh: built $dest/build/{all_reduce,reduce_scatter,all_gather}_perf"
