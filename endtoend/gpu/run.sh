#!/usr/bin/env bash
# endtoend/gpu/run.sh: gpt4d on one GPU, as one batch on a GPU machine (about 5 minutes on an
# H100). Builds nothing; uses BUILD_DIR (a CUDA build with the endtoend part):
#   1. every CUDA kernel against the host kernel (ovb-gpt4d-cuda-kernel-tests, fp32 and bf16);
#   2. the same tiny GPT on the committed text on host (fp32), CUDA fp32 and CUDA bf16 (1 rank,
#      30 iterations): CUDA fp32 must follow the host's loss curve;
#   3. the 1.3B reference shape on 1 rank: 24 layers, hidden 2048, 16 heads, seq 2048, vocab
#      50304, batch 4, bf16, no recomputation, 20 iterations (3 of warm-up);
#   4. 4 ranks sharing the GPU under CUDA MPS (loopback NCCL, --ranks-per-gpu 4) on a small GPT,
#      grid 1x2x2x1, for every overlap-flag subset: iteration time, communication and exposed
#      communication per flag set;
#   5. the multi-rank tests on the CUDA backend (ovb-gpt4d-parallel-tests, 4 ranks under MPS):
#      loss equivalence with 1 rank, gradients, collective log and memory against the plan;
# writes OUT_DIR/*.json, OUT_DIR/summary.md and OUT_DIR/logs/*.log. A failed step is reported and
# the next one runs.
# Usage: endtoend/gpu/run.sh BUILD_DIR OUT_DIR        (e.g. build/cuda results/h100/gpt4d)
# Exit status: 0 when every step passed, 1 when one failed, 2 for bad use.
set -u
# shellcheck source=ci/lib/steps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/ci/lib/steps.sh"
ovb_script_args "$@"
here=$(cd "$(dirname "$0")" && pwd)
gpt4d=$build/gpt4d
[ -x "$gpt4d" ] || gpt4d=$build/endtoend/gpt4d
tests=$build/endtoend/tests
for f in "$gpt4d" "$tests/ovb-gpt4d-cuda-kernel-tests" "$tests/ovb-gpt4d-parallel-tests"; do
  if [ ! -x "$f" ]; then
    echo "run.sh: error: $f not found: build the CUDA preset with the endtoend part first" >&2
    exit 2
  fi
done
text=$here/../data/declaration.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none)
# 1. Kernels.
step kernels 180 "$tests/ovb-gpt4d-cuda-kernel-tests" --gtest_output="json:$out/kernel_tests.json"

# 2. The same model on host, CUDA fp32 and CUDA bf16.
tiny=(--preset tiny --seq 64 --batch 8 --iters 30 --warmup 2 --lr 3e-3 --warmup-iters 5
      --data "text:$text" --quiet)
step compare_host 120 "$gpt4d" --backend host "${tiny[@]}" --out "$out/compare_host.json"
step compare_cuda_fp32 120 "$gpt4d" --backend cuda --dtype fp32 "${tiny[@]}" --out "$out/compare_cuda_fp32.json"
step compare_cuda_bf16 120 "$gpt4d" --backend cuda --dtype bf16 "${tiny[@]}" --out "$out/compare_cuda_bf16.json"

# 3. The 1.3B shape on one GPU.
step gpt_1.3B_1gpu 300 "$gpt4d" --backend cuda --preset 1.3B --seq 2048 --vocab 50304 --batch 4 \
  --iters 20 --warmup 3 --data synthetic --out "$out/gpt4d_1.3B_1gpu.json"

# 4. and 5. Four ranks sharing the GPU under MPS.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb-e2e-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ovb-e2e-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=0
if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d; then
  mps=1
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
else
  echo "warning: CUDA MPS not started: the 4 ranks time-slice the GPU" >&2
fi
small=(--backend cuda --ranks-per-gpu 4 --gx 1 --gy 2 --gz 2 --gdata 1 --layers 4 --hidden 1024
       --heads 16 --seq 512 --vocab 8192 --batch 8 --iters 8 --warmup 3 --data synthetic --quiet)
for flags in none oar ors oag oar,ors oar,oag ors,oag oar,ors,oag; do
  step "overlap_${flags//,/_}" 120 "${mpi[@]}" -np 4 "$gpt4d" "${small[@]}" --overlap "$flags" \
    --out "$out/overlap_${flags//,/_}.json"
done
step parallel_tests 240 "${mpi[@]}" -np 4 "$tests/ovb-gpt4d-parallel-tests" --backend=cuda \
  --ranks-per-gpu=4
[ "$mps" = 1 ] && { echo quit | nvidia-cuda-mps-control; trap - EXIT; }

# Summary.
{
  echo "# gpt4d on the GPU"
  echo
  echo "Produced by endtoend/gpu/run.sh in $(($(date +%s) - start_all)) s on $(hostname), $(date -u +%FT%TZ)."
  echo "MPS for the 4-rank runs: $([ "$mps" = 1 ] && echo on || echo off)."
  echo
  steps_table
  echo
  python3 "$here/summarize.py" "$out" || echo "(summarize.py failed)"
} >"$out/summary.md"
echo "summary: $out/summary.md"
exit "$failed"
