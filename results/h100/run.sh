#!/usr/bin/env bash
# results/h100/run.sh: every number of the single-GPU campaign - gpt4d on one H100 against the
# PyTorch reference, where its time goes, tracer overhead, memory, the GEMM table - in one command
# that finishes within 9 minutes. Builds nothing; BUILD_DIR is a CUDA build with the profiling,
# microbench and endtoend parts (cuDNN attention built in: -DOVB_ENABLE_CUDNN=ON). Steps, highest
# priority first, each with its own time limit and all inside a 530 s budget (a step that would
# start past it is skipped and reported as such):
#   kernels        every CUDA kernel against the host kernel, cuDNN attention included
#   gpt4d_1.3B     24 layers x 2048, 16 heads, seq 2048, vocab 50304, batch 4, bf16, 20 iterations
#                  (3 of warm-up): the headline number
#   torch_eager    results/h100/pytorch_gpt.py, the same GPT in plain PyTorch (SDPA flash
#                  attention, bf16 autocast, fused AdamW), side by side
#   traced / untraced   the 1.3B run for 8 iterations with --trace and without: the kernel
#                  breakdown (ovb-trace analyze) and the tracer overhead
#   gemm_*         ovb-gemm bf16: the GPT-1.3B/2.7B/6.7B layer GEMMs (batch 4, --autotune 8:
#                  percent of the best cuBLASLt algorithm) and 8192^3 (--autotune 16)
#   gpt4d_125M, gpt4d_350M, gpt4d_2.7B   the other shapes at batch 4 (2.7B: 2 when 4 does not fit)
#   batch_N        1.3B at batch 8, 12, 14, 16 until one does not fit (gpt4d's memory check)
#   torch_compile  the PyTorch reference under torch.compile
# writes OUT_DIR/*.json, OUT_DIR/trace/ (per-rank trace + analysis.json), OUT_DIR/logs/*.log and
# OUT_DIR/summary.md + summary.json (results/h100/summarize.py). A failed step is reported and the
# next one runs.
# Usage: results/h100/run.sh BUILD_DIR OUT_DIR     (e.g. build/cuda results/h100/latest)
# Exit status: 0 when every step passed, 1 when one failed or was skipped, 2 for bad use.
set -u
# shellcheck source=ci/lib/steps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/ci/lib/steps.sh"
ovb_script_args "$@"
here=$(cd "$(dirname "$0")" && pwd)
find_bin() {  # the first of the candidate paths that is executable
  for c in "$@"; do [ -x "$c" ] && { echo "$c"; return 0; }; done
  return 1
}
gpt4d=$(find_bin "$build/gpt4d" "$build/endtoend/gpt4d")
kernel_tests=$(find_bin "$build/endtoend/tests/ovb-gpt4d-cuda-kernel-tests")
gemm=$(find_bin "$build/ovb-gemm" "$build/microbench/ovb-gemm")
trace=$(find_bin "$build/ovb-trace" "$build/profiling/ovb-trace")
for v in gpt4d kernel_tests gemm trace; do
  if [ -z "${!v}" ]; then
    echo "run.sh: error: $v not found in $build: build the CUDA preset with the profiling," \
      "microbench and endtoend parts first" >&2
    exit 2
  fi
done
python=${OVB_PYTHON:-python3}
budget=${OVB_H100_BUDGET_S:-530}

# A step that may legitimately end in "does not fit": gpt4d's memory check before allocating
# (exit 2, "needs ... GiB per rank") or an allocation that fails anyway (cudaErrorMemoryAllocation).
# Recorded as such, not as a failure. Returns 0 when it ran, 2 when it did not fit.
fit_step() {
  local name=$1 before=$failed rc
  step "$@"
  rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 125 ] &&
    grep -qE "needs .* GiB per rank|out of memory|MemoryAllocation" "$out/logs/$name.log"; then
    results[${#results[@]} - 1]="| $name | does not fit (memory) | - |"
    failed=$before
    return 2
  fi
  [ "$rc" = 2 ] && return 1  # another usage error: a failure, not "does not fit"
  return "$rc"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  >"$out/logs/nvidia-smi.log" 2>&1 || true

gpt=(--backend cuda --seq 2048 --vocab 50304 --data synthetic --attention auto)

step kernels 120 "$kernel_tests" --gtest_output="json:$out/kernel_tests.json"
step gpt4d_1.3B 120 "$gpt4d" "${gpt[@]}" --preset 1.3B --batch 4 --iters 20 --warmup 3 \
  --out "$out/gpt4d_1.3B.json"
step torch_eager 120 "$python" "$here/pytorch_gpt.py" --preset 1.3B --batch 4 --iters 13 \
  --warmup 3 --out "$out/torch_1.3B_eager.json"

# Tracer overhead: the same run untraced and traced (8 iterations, 3 of warm-up).
step untraced 90 "$gpt4d" "${gpt[@]}" --preset 1.3B --batch 4 --iters 8 --warmup 3 \
  --out "$out/gpt4d_1.3B_untraced.json"
rm -rf "$out/trace"
step traced 120 "$gpt4d" "${gpt[@]}" --preset 1.3B --batch 4 --iters 8 --warmup 3 \
  --trace "$out/trace" --out "$out/gpt4d_1.3B_traced.json"
step trace_analyze 60 "$trace" analyze "$out/trace" --json "$out/trace/analysis.json" --top 30

for preset in 1.3B 2.7B 6.7B; do
  step "gemm_$preset" 60 "$gemm" --backend cuda --preset "$preset" --batch 4 --seq 2048 \
    --dtypes bf16 --autotune 8 --min-time 0.05 --benchmark_out="$out/gemm_$preset.json"
done
step gemm_8192 60 "$gemm" --backend cuda --shapes 8192x8192x8192,8192x8192x8192:nt --dtypes bf16 \
  --autotune 16 --repetitions 3 --min-time 0.2 --benchmark_out="$out/gemm_8192.json"

for preset in 125M 350M 2.7B; do
  fit_step "gpt4d_$preset" 90 "$gpt4d" "${gpt[@]}" --preset "$preset" --batch 4 --iters 13 \
    --warmup 3 --out "$out/gpt4d_$preset.json"
  if [ $? = 2 ]; then
    fit_step "gpt4d_${preset}_b2" 90 "$gpt4d" "${gpt[@]}" --preset "$preset" --batch 2 \
      --iters 13 --warmup 3 --out "$out/gpt4d_${preset}_b2.json"
  fi
done

# The largest batch of the 1.3B model that fits: ascending until gpt4d's memory check refuses.
for b in 8 12 14 16; do
  fit_step "batch_$b" 60 "$gpt4d" "${gpt[@]}" --preset 1.3B --batch "$b" --iters 5 --warmup 2 \
    --out "$out/gpt4d_1.3B_batch$b.json" || break
done

step torch_compile 240 "$python" "$here/pytorch_gpt.py" --preset 1.3B --batch 4 --iters 13 \
  --warmup 3 --compile --out "$out/torch_1.3B_compile.json"

{
  echo "# gpt4d on one GPU"
  echo
  echo "Produced by results/h100/run.sh in $(($(date +%s) - start_all)) s on $(hostname)," \
    "$(date -u +%FT%TZ); GPU: $(tail -n 1 "$out/logs/nvidia-smi.log" 2>/dev/null)."
  echo
  steps_table
  echo
  "$python" "$here/summarize.py" "$out" || echo "(summarize.py failed)"
} >"$out/summary.md"
echo "summary: $out/summary.md"
exit "$failed"
