#!/usr/bin/env bash
# results/h100/multirank.sh: the multi-rank GPU campaign - gpt4d with 4 and 8 ranks sharing one GPU
# (CUDA MPS, loopback NCCL: communication bandwidth is emulated, ~2-3 GB/s, so these runs show
# overlap behaviour, never network speed). Builds nothing; BUILD_DIR is a build with the endtoend
# part. Parts (all by default, in this order; name some to run only those):
#   grids4       4 ranks, every grid of GRIDS4, overlap none and oar,ors,oag
#   grids8       8 ranks, every grid of GRIDS8, overlap none and oar,ors,oag
#   flags8       8 ranks, grid 2x2x2x1, each overlap flag alone (oar, ors, oag)
#   priorities   4 ranks 1x2x2x1 and 8 ranks 2x2x2x1 with every overlap flag, under each stream
#                priority setting side by side: comm high / compute normal (gpt4d's default),
#                both normal, comm normal / compute high
# Every run writes OUT_DIR/PART/NAME.json (gpt4d's result, written atomically) and
# OUT_DIR/logs/PART-NAME.log; a run whose JSON exists is not redone, so a sweep cut off by its time
# budget or killed resumes where it stopped when started again with the same OUT_DIR. At the end,
# multirank_summary.py writes OUT_DIR/summary.md and summary.json (iteration time, communication,
# exposed communication per grid dimension, the effect of the overlap flags and the priorities)
# and ovb-analysis makes OUT_DIR/plots/PART/iteration_breakdown.{png,pdf} where Matplotlib is
# installed (OVB_PYTHON: the Python to use, default python3).
# Usage: results/h100/multirank.sh BUILD_DIR OUT_DIR [PART...]
# Environment (defaults in brackets):
#   OVB_BACKEND        cuda or host [cuda]; host runs the same sweep on the CPU (tests, demos)
#   OVB_MODEL          gpt4d model options [--layers 4 --hidden 1024 --heads 16 --seq 512
#                      --vocab 8192 --batch 8 --iters 8 --warmup 3]
#   OVB_GRIDS4 / OVB_GRIDS8   GxxGyxGzxGdata lists [see below]
#   OVB_BUDGET_S       total seconds; a run that would start later is left for the next call [540]
#   OVB_RUN_LIMIT_S    seconds per run [150]
# Exit status: 0 when every run is done, 1 when one failed or is left for a later call, 2 for bad use.
set -u
# shellcheck source=ci/lib/steps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/ci/lib/steps.sh"
case "${1:-}" in -h | --help) ovb_help; exit 0 ;; esac
if [ $# -lt 2 ]; then
  ovb_help >&2
  exit 2
fi
build_arg=$1 out_arg=$2
shift 2
parts=("$@")
[ ${#parts[@]} = 0 ] && parts=(grids4 grids8 flags8 priorities)
for p in "${parts[@]}"; do
  case "$p" in grids4 | grids8 | flags8 | priorities) ;;
    *) echo "multirank.sh: error: unknown part '$p' (grids4, grids8, flags8, priorities)" >&2; exit 2 ;;
  esac
done
ovb_dirs "$build_arg" "$out_arg"
here=$(cd "$(dirname "$0")" && pwd)
gpt4d=$build/gpt4d
[ -x "$gpt4d" ] || gpt4d=$build/endtoend/gpt4d
[ -x "$gpt4d" ] || { echo "multirank.sh: error: no gpt4d in $build: build the endtoend part" >&2; exit 2; }
backend=${OVB_BACKEND:-cuda}
case "$backend" in cuda | host) ;;
  *) echo "multirank.sh: error: OVB_BACKEND must be cuda or host, not '$backend'" >&2; exit 2 ;;
esac
read -r -a model <<<"${OVB_MODEL:---layers 4 --hidden 1024 --heads 16 --seq 512 --vocab 8192 --batch 8 --iters 8 --warmup 3}"
read -r -a grids4 <<<"${OVB_GRIDS4:-1x1x1x4 1x1x4x1 1x2x1x2 1x2x2x1 2x2x1x1 1x4x1x1 1x1x2x2 4x1x1x1}"
read -r -a grids8 <<<"${OVB_GRIDS8:-2x2x2x1 1x2x2x2 2x2x1x2 1x2x4x1 1x1x4x2 1x1x1x8}"
budget=${OVB_BUDGET_S:-540}
run_limit=${OVB_RUN_LIMIT_S:-150}

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none)
if [ "$backend" = cuda ]; then
  # CUDA MPS so that the ranks' kernels run concurrently instead of time-slicing (docs/ranks-per-gpu.md).
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/ovb-multirank-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ovb-multirank-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d; then
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
    echo "CUDA MPS started"
  else
    echo "warning: CUDA MPS not started: the ranks time-slice the GPU" >&2
  fi
fi

start_all=$(date +%s)
done_runs=0 new_runs=0 failed=0 left=0

# one PART NAME RANKS GRID OVERLAP [gpt4d options...]: one gpt4d run, skipped when its JSON exists.
one() {
  local part=$1 name=$2 ranks=$3 grid=$4 overlap=$5
  shift 5
  local json=$out/$part/$name.json log=$out/logs/$part-$name.log
  if [ -s "$json" ]; then
    done_runs=$((done_runs + 1))
    echo "  $part/$name: done earlier"
    return 0
  fi
  local now remaining limit
  now=$(date +%s)
  remaining=$((start_all + budget - now))
  if [ "$remaining" -lt 20 ]; then
    left=$((left + 1))
    echo "  $part/$name: left for the next call (time budget)"
    return 0
  fi
  limit=$run_limit
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  local g
  IFS=x read -r -a g <<<"$grid"
  mkdir -p "$out/$part"
  local cmd=("${mpi[@]}" -np "$ranks" "$gpt4d" --backend "$backend" --gx "${g[0]}" --gy "${g[1]}"
             --gz "${g[2]}" --gdata "${g[3]}" "${model[@]}" --data synthetic --quiet
             --overlap "$overlap" "$@" --out "$json")
  [ "$backend" = cuda ] && cmd+=(--ranks-per-gpu "$ranks")
  echo "  $part/$name: $ranks ranks, grid $grid, overlap $overlap $*"
  echo "${cmd[*]}" >"$log"
  timeout --kill-after=15 "$limit" "${cmd[@]}" >>"$log" 2>&1
  local rc=$?
  if [ "$rc" = 0 ] && [ -s "$json" ]; then
    new_runs=$((new_runs + 1))
    echo "    ok ($(($(date +%s) - now)) s)"
  else
    failed=$((failed + 1))
    [ "$rc" = 124 ] && rc="timeout after ${limit}s"
    echo "    FAILED ($rc); last lines of $log:"
    tail -n 5 "$log" | sed 's/^/    | /'
  fi
}

all=oar,ors,oag
for part in "${parts[@]}"; do
  echo "== $part"
  case "$part" in
    grids4 | grids8)
      ranks=${part#grids}
      [ "$ranks" = 4 ] && list=("${grids4[@]}") || list=("${grids8[@]}")
      for grid in "${list[@]}"; do
        one "$part" "g${grid}-none" "$ranks" "$grid" none
        one "$part" "g${grid}-all" "$ranks" "$grid" "$all"
      done ;;
    flags8)
      for flag in oar ors oag; do one flags8 "g2x2x2x1-$flag" 8 2x2x2x1 "$flag"; done ;;
    priorities)
      for rg in 4:1x2x2x1 8:2x2x2x1; do
        ranks=${rg%%:*} grid=${rg#*:}
        one priorities "g${grid}-comm_high-compute_normal" "$ranks" "$grid" "$all" \
          --comm-priority high --compute-priority normal
        one priorities "g${grid}-comm_normal-compute_normal" "$ranks" "$grid" "$all" \
          --comm-priority normal --compute-priority normal
        one priorities "g${grid}-comm_normal-compute_high" "$ranks" "$grid" "$all" \
          --comm-priority normal --compute-priority high
      done ;;
  esac
done

echo "runs: $new_runs new, $done_runs done earlier, $failed failed, $left left for the next call" \
  "($(($(date +%s) - start_all)) s)"
python=${OVB_PYTHON:-python3}
"$python" "$here/multirank_summary.py" "$out" >"$out/summary.md" || { echo "multirank_summary.py failed" >&2; failed=1; }
echo "summary: $out/summary.md"
# One breakdown plot per part (exposed communication per grid dimension); needs Matplotlib
# (analysis/requirements.txt) - without it, make them later where it is installed.
for part in "${parts[@]}"; do
  [ -d "$out/$part" ] || continue
  if "$python" "$here/../../analysis/ovb-analysis" plot breakdown "$out/$part" -o "$out/plots/$part" \
    >"$out/logs/plot-$part.log" 2>&1; then
    echo "plot: $out/plots/$part/iteration_breakdown.png"
  else
    echo "plot of $part not made: $(tail -n 1 "$out/logs/plot-$part.log")"
  fi
done
[ "$failed" = 0 ] && [ "$left" = 0 ]
