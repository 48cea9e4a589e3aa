#!/usr/bin/env bash
# The model's end-to-end check on one machine: microbenchmarks -> ovb-model calibrate -> search
# -> gpt4d on several configurations -> ovb-model compare. It builds nothing: it runs the
# binaries of BUILD_DIR (ovb-collective, ovb-gemm, ovb-overlap, gpt4d, ovb-model) and writes
# everything into OUT_DIR (microbench/, model/machine.json, model/search.json, gpt4d/,
# model/compare.json, summary.md).
#
#   pipeline.sh [--backend host|cuda] [--ranks N] [--configs K] [--shape small|tiny] BUILD_DIR OUT_DIR
#
# Host (CI): 4 ranks, a tiny GPT; the numbers mean little, the plumbing is what is tested (the
# script fails when a step fails or a result lacks what compare needs). CUDA: the ranks share the
# GPU (OVB_RANKS_PER_GPU, set by analysis/model/gpu/run.sh together with CUDA MPS).
set -uo pipefail
backend=host ranks=4 nconfigs=6 shape=tiny
while [ $# -gt 2 ]; do
  case "$1" in
    --backend) backend=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --configs) nconfigs=$2; shift 2 ;;
    --shape) shape=$2; shift 2 ;;
    *) echo "pipeline.sh: error: unknown option '$1'" >&2; exit 2 ;;
  esac
done
if [ $# -ne 2 ]; then
  echo "usage: pipeline.sh [--backend host|cuda] [--ranks N] [--configs K] [--shape tiny|small] BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || { echo "pipeline.sh: error: no build folder $1" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

find_bin() {  # find_bin SUBDIR NAME: where the build puts NAME (never a test's stand-in)
  local f=$build/$1/$2
  [ -x "$f" ] || { echo "pipeline.sh: error: $f not found (build it first)" >&2; exit 2; }
  echo "$f"
}
model=$(find_bin analysis/model ovb-model) gemm=$(find_bin microbench ovb-gemm)
coll=$(find_bin microbench ovb-collective) overlap=$(find_bin microbench ovb-overlap)
gpt4d=$(find_bin endtoend gpt4d)
# ovb-trace (profiling part): the first configuration also runs traced, so that compare checks the
# plan against the collectives counted in gpt4d's own trace; skipped when not built.
trace_tool=$build/ovb-trace
[ -x "$trace_tool" ] || trace_tool=$build/profiling/ovb-trace
[ -x "$trace_tool" ] || trace_tool=

mpi=(mpirun)
if mpirun --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  mpi+=(--allow-run-as-root --oversubscribe --bind-to none)
  export OMPI_MCA_mpi_yield_when_idle=1
fi

# The GPT: "tiny" for CI on the host, "small" for a GPU shared by the ranks.
case "$shape" in
  tiny) layers=2 hidden=64 heads=4 seq=32 vocab=256 batch=8 iters=6 warmup=2 ;;
  small) layers=4 hidden=1024 heads=16 seq=512 vocab=8192 batch=16 iters=12 warmup=4 ;;
  *) echo "pipeline.sh: error: unknown shape '$shape' (tiny or small)" >&2; exit 2 ;;
esac
model_args=(--layers "$layers" --hidden "$hidden" --heads "$heads" --seq "$seq" --vocab "$vocab"
            --batch "$batch")
if [ "$backend" = host ]; then base=host-cpu; else base=generic-h100-8nic; fi
# Ranks sharing one device: on the host all ranks share the CPU that ovb-gemm measured alone.
rpd=${OVB_RANKS_PER_GPU:-1}
[ "$backend" = host ] && rpd=$ranks

rm -rf "${out:?}/microbench" "$out/model" "$out/gpt4d" "$out/logs"  # a rerun must not compare stale results
mkdir -p "$out/microbench" "$out/model" "$out/gpt4d" "$out/logs"
failed=0
step() {  # step NAME COMMAND...: runs with its log in logs/NAME.log; a failure is recorded
  local name=$1; shift
  echo "==== $name"
  if "$@" >"$out/logs/$name.log" 2>&1; then
    tail -n 2 "$out/logs/$name.log"
  else
    echo "FAILED: $name (see $out/logs/$name.log)"; tail -n 5 "$out/logs/$name.log"; failed=1
  fi
}
gb=(--benchmark_out_format=json --min-time 0.02)

# 1. Microbenchmarks: the collectives over the world and the x, y groups of a 2x2 grid (group
#    sizes 2 and 4, strides 1 and 2), the GEMM shapes of every configuration, the overlap sweep.
step collective "${mpi[@]}" -np "$ranks" "$coll" --backend "$backend" --groups world,x,y \
  --gx 2 --gy $((ranks / 2)) --colls all_reduce,reduce_scatter,all_gather -b 4K -e 4M -f 4 \
  --in-place 0 --no-table --benchmark_out="$out/microbench/collective.json" "${gb[@]}"
mapfile -t grids < <(python3 - "$ranks" <<'EOF'
import sys
n = int(sys.argv[1])
for gx in range(1, n + 1):
    for gy in range(1, n + 1):
        for gz in range(1, n + 1):
            if n % (gx * gy * gz) == 0:
                print(f"{gx} {gy} {gz} {n // (gx * gy * gz)}")
EOF
)
gemm_files=()
for g in "${grids[@]}"; do
  read -r gx gy gz gd <<<"$g"
  tag="${gx}x${gy}x${gz}x${gd}"
  # Skip grids the plan rejects (ovb-model explain says so) - nothing to measure there.
  "$model" explain "$tag" --machine "$base" "${model_args[@]}" >/dev/null 2>&1 || continue
  nseq=$((batch / (gd * gz))) hl=$((heads / gy)) hd=$((hidden / heads))
  rows=$((nseq * hl * seq))
  step "gemm-$tag" "$gemm" --backend "$backend" --preset tiny --hidden "$hidden" --heads "$heads" \
    --seq "$seq" --vocab "$vocab" --batch "$batch" --gx "$gx" --gy "$gy" --gz "$gz" --gdata "$gd" \
    --shapes "${rows}x${seq}x${hd},${rows}x${hd}x${seq}" \
    --benchmark_out="$out/microbench/gemm-$tag.json" "${gb[@]}"
  [ -s "$out/microbench/gemm-$tag.json" ] && gemm_files+=(--gemm "$out/microbench/gemm-$tag.json")
done
step overlap "${mpi[@]}" -np "$ranks" "$overlap" --backend "$backend" --sweep quick \
  --benchmark_out="$out/microbench/overlap.json" "${gb[@]}"

# 2. Calibrate, then rank every configuration of this rank count.
step calibrate "$model" calibrate --base "$base" --name "pipeline-$backend" \
  --collective "$out/microbench/collective.json@2x$((ranks / 2))x1x1" "${gemm_files[@]}" \
  --overlap "$out/microbench/overlap.json" --gpus-per-node $((ranks / rpd)) \
  --ranks-per-device "$rpd" --out "$out/model/machine.json"
step search "$model" search --machine "$out/model/machine.json" "${model_args[@]}" \
  --gpus "$ranks" --overlap all --top 0 --json "$out/model/search.json"

# 3. gpt4d on the K best predicted configurations (and the worst, so the ranking is tested).
mapfile -t picks < <(python3 - "$out/model/search.json" "$nconfigs" <<'EOF'
import json, sys
cfgs = [c for c in json.load(open(sys.argv[1]))["configs"] if c["fits"]]
k = int(sys.argv[2])
pick = cfgs[:k - 1] + cfgs[-1:] if len(cfgs) > k else cfgs
for c in pick:
    print(c["gx"], c["gy"], c["gz"], c["gdata"], c["order"])
EOF
)
[ "${#picks[@]}" -gt 0 ] || { echo "FAILED: no configuration to run"; failed=1; }
traced=
for p in "${picks[@]}"; do
  read -r gx gy gz gd order <<<"$p"
  tag="g${gx}x${gy}x${gz}x${gd}-${order//,/}"
  trace_args=()
  if [ -n "$trace_tool" ] && [ -z "$traced" ]; then
    traced=$tag
    trace_args=(--trace "$out/gpt4d/$tag.trace")
  fi
  step "gpt4d-$tag" "${mpi[@]}" -np "$ranks" "$gpt4d" --backend "$backend" --gx "$gx" --gy "$gy" \
    --gz "$gz" --gdata "$gd" --grid-order "$order" "${model_args[@]}" --iters "$iters" \
    --warmup "$warmup" --seed 1234 --lr 1e-3 --data synthetic --overlap oar,ors,oag --quiet \
    "${trace_args[@]}" --out "$out/gpt4d/$tag.json"
done
if [ -n "$traced" ]; then
  step "trace-$traced" "$trace_tool" analyze "$out/gpt4d/$traced.trace" \
    --json "$out/gpt4d/$traced.trace-analysis.json"
  rm -rf "${out:?}/gpt4d/$traced.trace"  # the analysis is what compare reads
fi

# 4. Model vs measurement.
step compare "$model" compare "$out/gpt4d" --machine "$out/model/machine.json" --top-k 3 \
  --json "$out/model/compare.json"
if [ -s "$out/model/compare.json" ]; then
  python3 "$here/summary.py" "$out" >"$out/summary.md" && cat "$out/summary.md"
  # gpt4d counts its collectives per (kind, group): they must be the plan's, call for call and
  # byte for byte (compare warns otherwise), or the model costs something gpt4d did not run.
  if ! python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['warnings']; print(*w, sep='\n'); sys.exit(1 if w else 0)" \
      "$out/model/compare.json"; then
    echo "FAILED: gpt4d's collectives differ from the plan the model costs"; failed=1
  fi
  # The traced run: compare paired its trace analysis and found the plan's collectives in it
  # (count and bytes per group and kind; a difference is one of the warnings above).
  if [ -n "$traced" ] && ! python3 -c "import json,sys; c=[r for r in json.load(open(sys.argv[1]))['configs'] if 'trace' in r]; sys.exit(0 if c and c[0]['trace']['terms'] else 1)" \
      "$out/model/compare.json"; then
    echo "FAILED: compare did not pair the trace of $traced"; failed=1
  fi
else
  failed=1
fi
[ "$failed" = 0 ] && echo "pipeline: PASSED ($out)" || echo "pipeline: FAILED ($out)"
exit "$failed"
