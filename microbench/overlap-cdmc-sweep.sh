#!/usr/bin/env bash
# overlap-cdmc-sweep.sh: runs ovb-overlap once per CUDA_DEVICE_MAX_CONNECTIONS value. The CUDA
# driver reads the variable when a process creates its CUDA context, so one process cannot sweep
# it; this script asks the command for its --cdmc values (from the command line or the sweep file, via
# --print-cdmc) and starts one run per value, with the variable set (or unset for "default") and
# --cdmc-run naming it, each writing its own JSON file.
#
# Usage: microbench/overlap-cdmc-sweep.sh OUT_PREFIX COMMAND [ARGS...]
#   COMMAND ARGS  how to run ovb-overlap, launcher included, e.g.
#                 mpirun -np 8 build/cuda/microbench/ovb-overlap --sweep full
#   writes        OUT_PREFIX.cdmc-<value>.json for every value (e.g. out/overlap.cdmc-1.json)
# Exit status: 0 when every run succeeded, 1 when one failed (the others still run), 2 for bad use.
set -u
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
if [ $# -lt 2 ]; then
  usage >&2
  exit 2
fi
prefix=$1
shift
if ! listing=$("$@" --print-cdmc); then
  echo "overlap-cdmc-sweep.sh: error: could not get the --cdmc values from: $* --print-cdmc" >&2
  exit 2
fi
values=$(printf '%s\n' "$listing" | grep -E '^(default|env|[0-9]+)$')
if [ -z "$values" ]; then
  echo "overlap-cdmc-sweep.sh: error: no --cdmc values in the output of: $* --print-cdmc" >&2
  exit 2
fi
status=0
for v in $values; do
  out="$prefix.cdmc-$v.json"
  echo "==== CUDA_DEVICE_MAX_CONNECTIONS=$v -> $out"
  case "$v" in
    default) env -u CUDA_DEVICE_MAX_CONNECTIONS "$@" --cdmc-run default --benchmark_out="$out" ;;
    env) "$@" --cdmc-run env --benchmark_out="$out" ;;
    *) env CUDA_DEVICE_MAX_CONNECTIONS="$v" "$@" --cdmc-run "$v" --benchmark_out="$out" ;;
  esac || {
    echo "overlap-cdmc-sweep.sh: the run with CUDA_DEVICE_MAX_CONNECTIONS=$v failed" >&2
    status=1
  }
done
exit "$status"
