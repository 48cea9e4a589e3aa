#!/usr/bin/env bash
# GPU check of the performance model (docs/model.md): on one GPU shared by 4 ranks (CUDA MPS, NCCL over
# loopback), calibrate the model from this machine's microbenchmarks, predict every configuration
# of a small GPT, run gpt4d on 8 of them (the 7 best predicted and the worst), and compare:
# prediction error per configuration and per (dimension, collective), Spearman's rho, and whether
# the fastest measured configuration is in the predicted top 3. Also times the configuration
# search (ovb-model-bench). Builds nothing; about 5 minutes on an H100.
#   analysis/model/gpu/run.sh BUILD_DIR OUT_DIR      (BUILD_DIR: a CUDA build with every part)
# Writes OUT_DIR/pipeline/ (microbench/, model/{machine,search,compare}.json, gpt4d/, logs/),
# OUT_DIR/search-speed.json and OUT_DIR/summary.md.
set -uo pipefail
if [ $# -ne 2 ]; then echo "usage: run.sh BUILD_DIR OUT_DIR" >&2; exit 2; fi
build=$1 out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"
command -v nvidia-smi >/dev/null && nvidia-smi -L

# CUDA MPS so that the 4 ranks' kernels run concurrently (docs/ranks-per-gpu.md); stopped on exit.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb_mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ovb_mps_log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=0
if nvidia-cuda-mps-control -d 2>/dev/null; then mps=1; else echo "warning: CUDA MPS did not start"; fi
trap '[ "$mps" = 1 ] && echo quit | nvidia-cuda-mps-control' EXIT
export OVB_RANKS_PER_GPU=4

status=0
bench=$(find "$build" -name ovb-model-bench -type f -perm -u+x | head -n 1)
if [ -n "$bench" ]; then
  "$bench" --benchmark_out="$out/search-speed.json" --benchmark_out_format=json || status=1
else
  echo "warning: ovb-model-bench not built (Google Benchmark missing?)"
fi
timeout 540 bash "$here/../scripts/pipeline.sh" --backend cuda --ranks 4 --configs 8 --shape small \
  "$build" "$out/pipeline" || status=1
{
  echo "# ovb-model on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
  echo
  echo "4 ranks share the GPU (CUDA MPS: $([ "$mps" = 1 ] && echo on || echo off)); communication"
  echo "runs over loopback sockets, so its bandwidth is emulated (never a network figure)."
  echo
  [ -s "$out/pipeline/summary.md" ] && cat "$out/pipeline/summary.md" || echo "pipeline FAILED: see pipeline/logs"
} >"$out/summary.md"
cat "$out/summary.md"
exit "$status"
