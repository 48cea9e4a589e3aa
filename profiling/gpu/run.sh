#!/usr/bin/env bash
# profiling/gpu/run.sh: the tracer on one GPU, as one batch on a GPU machine (about 3 minutes
# on an H100). Builds nothing; uses BUILD_DIR (a CUDA build with the profiling part):
#   1. the GPU tests of profiling/ (ctest -L gpu -R profiling): the linked tracer on
#      ovb-trace-demo (and gpt4d when built) with 2 ranks sharing the GPU, the injected tracer on a
#      plain CUDA program (whole run, and an NVTX-iteration window);
#   2. the injected tracer on ovb-inject-sample, analyzed (OUT_DIR/inject/);
#   3. a linked trace of ovb-trace-demo, 2 ranks under CUDA MPS, analyzed and merged for Perfetto
#      (OUT_DIR/demo/);
#   4. the tracer's overhead: the same run traced and untraced, alternating, 3 times each -
#      gpt4d (8 layers x 2048 hidden, seq 2048, batch 4) when built, and ovb-trace-demo (1 rank,
#      GEMMs 4096^3) - median iteration times into OUT_DIR/overhead.json;
# and writes OUT_DIR/summary.md and OUT_DIR/logs/*.log. A failed step is reported, the next runs.
# Usage: profiling/gpu/run.sh BUILD_DIR OUT_DIR        (e.g. build/cuda results/h100/profiling)
# Exit status: 0 when every step passed, 1 when one failed, 2 for bad use.
set -u
# shellcheck source=ci/lib/steps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/ci/lib/steps.sh"
ovb_script_args "$@"
for f in ovb-trace ovb-trace-demo ovb-inject-sample libovb-inject.so; do
  if [ ! -e "$build/$f" ]; then
    echo "run.sh: error: $build/$f not found: build the CUDA preset with the profiling part first" >&2
    exit 2
  fi
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none)
gpt4d=$build/gpt4d
[ -x "$gpt4d" ] || gpt4d=$build/endtoend/gpt4d
nvidia-smi -L >"$out/logs/nvidia-smi.txt" 2>&1 || echo "run.sh: warning: nvidia-smi failed"
cat "$out/logs/nvidia-smi.txt"

# ---- 1. GPU tests ----
step ctest-gpu 150 ctest --test-dir "$build" -L gpu -R '^profiling\.' --output-on-failure

# ---- 2. injection on a plain CUDA program ----
rm -rf "$out/inject"
step inject 60 env CUDA_INJECTION64_PATH="$build/libovb-inject.so" OVB_TRACE_DIR="$out/inject" \
  "$build/ovb-inject-sample" 16
step inject-analyze 30 "$build/ovb-trace" analyze "$out/inject" --json "$out/inject/analysis.json"

# ---- 3. linked tracer, 2 ranks sharing the GPU under MPS ----
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb-prof-mps-pipe-$$ CUDA_MPS_LOG_DIRECTORY=/tmp/ovb-prof-mps-log-$$
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
mps=0
if nvidia-cuda-mps-control -d >"$out/logs/mps.log" 2>&1; then
  mps=1
  trap 'echo quit | nvidia-cuda-mps-control >/dev/null 2>&1' EXIT
else
  echo "run.sh: warning: could not start CUDA MPS (logs/mps.log): ranks time-slice the GPU"
fi
rm -rf "$out/demo"
step demo-2ranks 90 "${mpi[@]}" -np 2 "$build/ovb-trace-demo" --backend cuda --ranks-per-gpu 2 \
  --gx 2 --layers 4 --hidden 256 --heads 8 --seq 128 --vocab 1024 --gemm 2048 --iters 5 \
  --trace "$out/demo/traces"
step demo-analyze 30 "$build/ovb-trace" analyze "$out/demo/traces" --json "$out/demo/analysis.json"
step demo-merge 30 "$build/ovb-trace" merge "$out/demo/traces" -o "$out/demo/merged.trace.json"
if [ "$mps" = 1 ]; then
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  trap - EXIT
fi

# ---- 4. overhead: traced vs untraced, alternating ----
over=$out/overhead
rm -rf "$over"
mkdir -p "$over"
for rep in 1 2 3; do
  for mode in untraced traced; do
    trace_args=()
    [ "$mode" = traced ] && trace_args=(--trace "$over/traces-demo-$rep")
    step "overhead-demo-$mode-$rep" 60 "$build/ovb-trace-demo" --backend cuda --gemm 4096 \
      --iters 40 --warmup 5 --out "$over/demo-$mode-$rep.json" "${trace_args[@]}"
    if [ -x "$gpt4d" ]; then
      trace_args=()
      [ "$mode" = traced ] && trace_args=(--trace "$over/traces-gpt4d-$rep")
      step "overhead-gpt4d-$mode-$rep" 120 "$gpt4d" --backend cuda --layers 8 --hidden 2048 \
        --heads 16 --seq 2048 --vocab 50304 --batch 4 --iters 12 \
        --out "$over/gpt4d-$mode-$rep.json" "${trace_args[@]}"
    fi
  done
done

# overhead.json: per program, the median over repetitions of each run's median iteration time.
python3 - "$over" "$out/overhead.json" >"$out/overhead.md" 2>"$out/logs/overhead-summary.log" <<'PY' ||
import glob, json, os, statistics, sys
over, target = sys.argv[1], sys.argv[2]
result = {"programs": {}}
lines = ["| program | untraced median ms | traced median ms | overhead % | runs |", "|---|---|---|---|---|"]
for prog in ("gpt4d", "demo"):
    med = {}
    for mode in ("untraced", "traced"):
        vals = []
        for f in sorted(glob.glob(os.path.join(over, f"{prog}-{mode}-*.json"))):
            vals.append(json.load(open(f))["summary"]["median_time_ms"])
        med[mode] = vals
    if not med["untraced"] or not med["traced"]:
        continue
    u, t = statistics.median(med["untraced"]), statistics.median(med["traced"])
    pct = 100.0 * (t - u) / u
    result["programs"][prog] = {"untraced_ms": med["untraced"], "traced_ms": med["traced"],
                                "untraced_median_ms": u, "traced_median_ms": t, "overhead_pct": pct}
    lines.append(f"| {prog} | {u:.3f} | {t:.3f} | {pct:+.2f} | {len(med['traced'])} |")
json.dump(result, open(target, "w"), indent=2)
print("\n".join(lines))
PY
{
  results+=("| overhead-summary | FAILED (see logs/overhead-summary.log) | - |")
  failed=1
}

# ---- summary ----
{
  echo "# Profiling on the GPU"
  echo
  echo "## Steps"
  echo
  steps_table
  echo
  echo "## Tracer overhead (same run traced and untraced; target < 3 %)"
  echo
  cat "$out/overhead.md" 2>/dev/null
  echo
  for a in inject demo; do
    if [ -f "$out/$a/analysis.json" ]; then
      echo "## ovb-trace analyze: $a"
      echo
      echo '```'
      "$build/ovb-trace" analyze "$out/$a" --top 10 2>&1 | tail -n +3
      echo '```'
      echo
    fi
  done
  echo "Total: $(($(date +%s) - start_all)) s. Logs: logs/. The 2-rank runs share one GPU: NCCL"
  echo "goes over loopback sockets (emulated bandwidth), never an NVLink/IB figure."
} >"$out/summary.md"
echo "==== wrote $out/summary.md"
cat "$out/summary.md"
exit "$failed"
