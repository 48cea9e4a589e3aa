#!/usr/bin/env bash
# slurm/gpu-overlap.sh: the overlap-matters campaign in one GPU call of at most 10 minutes, build
# included. Builds, for one CUDA architecture on every core, only what the preset runs (the
# binaries its plan names: gpt4d, ovb-collective, ovb-model, and ovb-gpu-probe, which the driver
# runs for --backend cuda; cuDNN attention on, as in the committed runs), then runs `ovb-suite run
# --preset overlap-matters` into OUT_DIR/overlap-matters with the preset's budget counted from
# this script's start (--budget-start), so the build counts: no step starts past it, every result
# lands in the folder as its step ends, the summary is written at the end with what finished, and
# `timeout` stops the driver (which records the step it cut as interrupted) 10 s before the call's
# limit.
# Usage: slurm/gpu-overlap.sh OUT_DIR [--dry-run] [--resume DIR] [-- OVB_SUITE_RUN_OPTIONS...]
#   --dry-run     print the build commands and the driver's plan with its time estimate; builds and
#                 runs nothing, needs no GPU (ctest slurm_gpu_overlap_plan checks that plan)
#   --resume DIR  a results folder of an earlier call (carried to this machine): copied into
#                 OUT_DIR/overlap-matters first, so that its finished steps are skipped
#   e.g. on the GPU machine: slurm/gpu-overlap.sh "$OUT"
# Environment: OVB_GPU_ARCH (90), OVB_GPU_BUILD (build/gpu-overlap), OVB_CALL_LIMIT_S (600),
#   OVB_PYTHON (python3, or the repository's .venv).
#   OVB_PACK=ARCHIVE: OUT_DIR as one archive too, kept current during the call (slurm/lib/pack.sh).
# Output: OUT_DIR/overlap-matters/ (summary.md, runs/, sockets/, model/, logs/), OUT_DIR/build.log,
#   OUT_DIR/gpu-overlap.log (each phase with its seconds). Exit status: the driver's (0: all done).
set -euo pipefail
start=$(date +%s)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: gpu-overlap.sh OUT_DIR [--dry-run] [--resume DIR] [-- OVB_SUITE_RUN_OPTIONS...]"
die() { echo "gpu-overlap.sh: error: $*" >&2; exit 2; }
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then die "$usage"; fi
out=$1
shift
dry=0 resume=""
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1 ;;
    --resume) [ $# -ge 2 ] || die "--resume needs a folder"; resume=$2; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1' ($usage)" ;;
  esac
  shift
done
[ -z "$resume" ] || [ -f "$resume/.suite/suite.json" ] ||
  die "--resume $resume: not a results folder of ovb-suite (no .suite/suite.json)"
# shellcheck source=slurm/lib/gpu-call-env.sh
source "$root/slurm/lib/gpu-call-env.sh"
# shellcheck source=slurm/lib/pack.sh
source "$root/slurm/lib/pack.sh"
gpu_call_env gpu-overlap
export OVB_PYTHON=$py
suite=("$py" "$root/slurm/ovb-suite")
# The targets: the binaries the preset's plan runs, and the GPU probe the driver runs.
mapfile -t targets < <("${suite[@]}" list --preset overlap-matters --backend cuda --binaries)
[ ${#targets[@]} -gt 0 ] || die "no binaries in the overlap-matters plan"
configure=(cmake --preset cuda -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DOVB_ENABLE_CUDNN=ON
           -DOVB_BUILD_TESTS=OFF)
compile=(cmake --build "$build" -j "$(nproc)" --target "${targets[@]}")
run=(run --preset overlap-matters --backend cuda --build "$build" --out "$out/overlap-matters"
     --budget-start "$start" --heartbeat 60 "$@")

if [ "$dry" = 1 ]; then
  echo "# build (cd $root):"
  echo "${configure[*]}"
  echo "${compile[*]}"
  echo "# then (stopped by timeout $((limit - 10)) s after the start):"
  echo "ovb-suite ${run[*]}"
  mkdir -p "$build"  # the driver lists the plan against it (binaries not built yet are marked)
  exec "${suite[@]}" "${run[@]}" --dry-run
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
pack_start "$out"
log=$out/gpu-overlap.log
note() { echo "gpu-overlap: $* ($(($(date +%s) - start)) s since the start)" | tee -a "$log"; }
note "start: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), architecture $arch," \
  "targets ${targets[*]}"
if [ -n "$resume" ]; then
  mkdir -p "$out/overlap-matters"
  cp -a "$resume/." "$out/overlap-matters/"
  note "resumed from $resume"
fi
rc=0
(cd "$root" && "${configure[@]}" && "${compile[@]}") > "$out/build.log" 2>&1 || rc=$?
note "build exit status $rc (log build.log)"
[ "$rc" = 0 ] || { tail -20 "$out/build.log" >&2; exit "$rc"; }
left=$((start + limit - 10 - $(date +%s)))
[ "$left" -gt 30 ] || { note "no time left for the runs"; exit 1; }
timeout -k 5 "$left" "${suite[@]}" "${run[@]}" 2>&1 | tee -a "$log" || rc=$?
note "driver exit status $rc (summary: overlap-matters/summary.md)"
exit "$rc"
