#!/usr/bin/env bash
# microbench/gpu/run.sh: the microbenchmarks on one GPU, as one batch on a GPU machine (about
# 3-4 minutes on an H100). Builds nothing; runs, from BUILD_DIR/microbench:
#   1 rank:  ovb-gemm (bf16 8192^3 autotuned: the "within 5% of the best algorithm" target; all
#            precisions; GPT-13B layer GEMMs on a 2x2x2 grid; a cold-L2 variant), ovb-collective,
#            ovb-overlap (sweep incl. CUDA_DEVICE_MAX_CONNECTIONS 1 and default);
#   2 and 4 ranks sharing the GPU under CUDA MPS (NCCL over loopback sockets: emulated bandwidth):
#            ovb-collective and ovb-overlap;
# and writes OUT_DIR/*.json (Google Benchmark JSON with the run context), OUT_DIR/logs/*.log and
# OUT_DIR/summary.md. A failed step is reported and the next one runs.
# Usage: microbench/gpu/run.sh BUILD_DIR OUT_DIR     (e.g. build/cuda results/h100/microbench)
# Exit status: 0 when every step passed, 1 when one failed, 2 for bad use.
set -u
# shellcheck source=ci/lib/steps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/ci/lib/steps.sh"
ovb_script_args "$@"
bin=$build/microbench
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for exe in ovb-gemm ovb-collective ovb-overlap; do
  if [ ! -x "$bin/$exe" ]; then
    echo "run.sh: error: $bin/$exe not found: build the CUDA preset first (cmake --preset cuda && cmake --build --preset cuda)" >&2
    exit 2
  fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none)
sweep=$here/overlap-cdmc-sweep.sh
nvidia-smi -L >"$out/logs/nvidia-smi.txt" 2>&1 || echo "run.sh: warning: nvidia-smi failed (see logs/nvidia-smi.txt)"
cat "$out/logs/nvidia-smi.txt"

# ---- one rank ----
step gemm-target 120 "$bin/ovb-gemm" --backend cuda --shapes 8192x8192x8192,8192x8192x8192:nt \
  --dtypes bf16 --autotune 16 --repetitions 3 --min-time 0.3 --benchmark_out="$out/gemm-target.json"
step gemm-types 150 "$bin/ovb-gemm" --backend cuda --shapes 4096x4096x4096:nt,8192x8192x8192:nt \
  --dtypes fp32,tf32,fp16,bf16,fp8 --autotune 4 --min-time 0.1 --benchmark_out="$out/gemm-types.json"
step gemm-gpt13b 120 "$bin/ovb-gemm" --backend cuda --preset 13B --gx 2 --gy 2 --gz 2 --batch 16 \
  --dtypes bf16,fp8 --min-time 0.05 --benchmark_out="$out/gemm-gpt13b.json"
step gemm-coldl2 60 "$bin/ovb-gemm" --backend cuda --shapes 8192x8192x8192,2048x2048x2048 \
  --dtypes bf16 --l2-flush --min-time 0.1 --benchmark_out="$out/gemm-coldl2.json"
step collective-1 90 "$bin/ovb-collective" --backend cuda -b 64K -e 64M -f 8 --dtypes bf16 \
  --inner 5 --min-time 0.05 --benchmark_out="$out/collective-1.json"
step overlap-1 150 "$sweep" "$out/overlap-1" "$bin/ovb-overlap" --backend cuda \
  --shapes 8192x8192x8192:nt,4096x4096x4096:nt --sizes 64M --colls all_reduce \
  --priorities equal,comm_high,compute_high --orders comm_first,gemm_first --max-ctas default,8 \
  --cdmc 1,default --min-time 0.05

# ---- 2 and 4 ranks sharing the GPU, under CUDA MPS ----
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb-mps-pipe-$$ CUDA_MPS_LOG_DIRECTORY=/tmp/ovb-mps-log-$$
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=0
if nvidia-cuda-mps-control -d >"$out/logs/mps.log" 2>&1; then
  mps=1
  trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
else
  echo "run.sh: warning: could not start CUDA MPS (logs/mps.log): ranks will time-slice the GPU"
  results+=("| mps | FAILED (not started; multi-rank numbers time-sliced) | - |")
fi
for n in 2 4; do
  grid=()
  groups=world
  if [ "$n" = 4 ]; then
    grid=(--gx 2 --gy 2)
    groups=world,x
  fi
  step "collective-$n" 150 "${mpi[@]}" -np "$n" "$bin/ovb-collective" --backend cuda \
    --ranks-per-gpu "$n" -b 4K -e 16M -f 4 --dtypes bf16 --groups "$groups" "${grid[@]}" \
    --min-time 0.05 --benchmark_out="$out/collective-$n.json"
  step "overlap-$n" 150 "$sweep" "$out/overlap-$n" "${mpi[@]}" -np "$n" "$bin/ovb-overlap" \
    --backend cuda --ranks-per-gpu "$n" --shapes 4096x4096x4096:nt --sizes 4M,16M \
    --colls all_reduce,reduce_scatter --priorities equal,comm_high --orders comm_first \
    --cdmc 1,default --min-time 0.05
done
if [ "$mps" = 1 ]; then
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  trap - EXIT
fi

# ---- summary ----
{
  echo "## Steps"
  echo
  steps_table
  echo
  echo "Total: $(($(date +%s) - start_all)) s. Logs: logs/. Multi-rank runs share one GPU:"
  echo "their NCCL bandwidth goes over loopback sockets (emulated), never an NVLink/IB figure."
} >"$out/steps.md"
if ! python3 "$here/gpu/summarize.py" "$out" >"$out/summary.md"; then
  echo "run.sh: summarize.py failed; summary.md holds only the step list" >&2
  cp "$out/steps.md" "$out/summary.md"
  failed=1
fi
echo "==== wrote $out/summary.md"
cat "$out/summary.md"
exit "$failed"
