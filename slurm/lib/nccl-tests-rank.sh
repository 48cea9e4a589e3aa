#!/usr/bin/env bash
# slurm/lib/nccl-tests-rank.sh: runs one rank of an nccl-tests program when several ranks share
# one GPU, as ovb-collective --ranks-per-gpu does for its own ranks: each rank gets its own
# NCCL_HOSTID (NCCL otherwise refuses "Duplicate GPU detected") and NCCL's socket transport over
# loopback, and every rank uses device 0. Rank 0 also copies its output (the table) into OUTFILE.
# Usage (one MPI rank): nccl-tests-rank.sh OUTFILE PROGRAM [ARGS...]
set -euo pipefail
[ $# -ge 2 ] || { echo "nccl-tests-rank.sh: error: usage: nccl-tests-rank.sh OUTFILE PROGRAM [ARGS...]" >&2; exit 2; }
out=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-${SLURM_PROCID:-}}}}
[ -n "$rank" ] || { echo "nccl-tests-rank.sh: error: no MPI rank in the environment (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID): start it through mpirun or srun" >&2; exit 2; }
[ -x "$1" ] || { echo "nccl-tests-rank.sh: error: $1: not an executable (build nccl-tests first)" >&2; exit 2; }
export NCCL_HOSTID="ovb-host-r$rank" NCCL_SOCKET_IFNAME="${NCCL_SOCKET_IFNAME:-lo}" NCCL_TESTS_DEVICE=0
if [ "$rank" = 0 ]; then
  mkdir -p "$(dirname "$out")"
  "$@" | tee "$out"
  exit "${PIPESTATUS[0]}"
fi
exec "$@"
