#!/usr/bin/env bash
# slurm/gpu-check.sh: what a user with a GPU runs first, in one call on a bare GPU machine. Builds
# only what it runs, for the GPU at hand (one CUDA architecture from nvidia-smi's compute
# capability; the targets of the suite preset gpu-check), then runs that preset (CUDA MPS, every
# GPU-labelled ctest, the Llama kernels and llama-tiny, the memory options on 4 ranks against the
# serial run, device memory against the plan, the 1.3B headline with telemetry, GEMM rates on exact
# against random inputs, nccl-tests beside ovb-collective) with what is left of LIMIT as its budget. Every result lands in OUT_DIR as soon as
# its step ends; a step that would start too late is left for the next call with the same OUT_DIR
# (resumed; on a warm machine the build is then a no-op). OUT_DIR/summary.md ends every call.
# Usage: slurm/gpu-check.sh OUT_DIR [--limit S (default 570)] [--build DIR (default
#          build/gpu-check)] [--arch SM (default: nvidia-smi's, e.g. 90)] [--only LIST] [--dry-run]
#   --dry-run   prints every command (configure, build with its targets, the suite with each step,
#               its command and its limit) and runs nothing but cmake's configure when DIR has
#               none yet (the ctest steps come from the configured build's label gpu).
# Environment: OVB_PACK=ARCHIVE: OUT_DIR as one archive too, kept current during the call (slurm/lib/pack.sh).
# Output: OUT_DIR/ (the suite folder: ctest/, options/, memory/, headline/, gemm-inputs/, collectives/,
#   summary.md, suite-status.md, logs/), OUT_DIR/build.txt (architecture, targets, build time).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=slurm/lib/pack.sh
source "$root/slurm/lib/pack.sh"
usage="usage: slurm/gpu-check.sh OUT_DIR [--limit S] [--build DIR] [--arch SM] [--only LIST] [--dry-run]"
die() { echo "gpu-check.sh: error: $*" >&2; exit 2; }
out="" limit=570 build=$root/build/gpu-check arch="" only="" dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--limit needs seconds, e.g. --limit 570"
             limit=$2; shift ;;
    --build) [ -n "${2:-}" ] || die "--build needs a folder"; build=$2; shift ;;
    --arch) [[ "${2:-}" =~ ^[1-9][0-9]+a?$ ]] || die "--arch needs an SM number, e.g. --arch 90"
            arch=$2; shift ;;
    --only) [ -n "${2:-}" ] || die "--only needs a list of steps or groups"; only=$2; shift ;;
    --dry-run) dry=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) die "unknown option '$1' ($usage)" ;;
    *) [ -z "$out" ] || die "one OUT_DIR only, got '$out' and '$1'"; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || die "no OUT_DIR ($usage)"
build=$(mkdir -p "$build" && cd "$build" && pwd) || die "cannot create --build folder"
py=${OVB_PYTHON:-}
if [ -z "$py" ]; then
  py=python3
  [ -x "$root/.venv/bin/python" ] && py=$root/.venv/bin/python
fi
export OVB_PYTHON=$py PATH="/usr/local/cuda/bin:$PATH"
# The build's estimate on the GPU machine's 16 cores, from the cold build of these targets here
# (895 CPU-s; its longest compile 54 s): about 110 s, with configure and margin 180 s
# (docs/gpu-campaigns.md, "The GPU check"). It sets the dry run's budget; a real call measures.
build_estimate_s=180
# The summary step (always run, exempt from the budget), a step stopped at the budget's end (10 s
# of --grace between SIGTERM and SIGKILL) and the margin.
summary_reserve_s=30

if [ -z "$arch" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  if [[ "$cap" =~ ^[0-9]+$ ]]; then
    arch=$cap
  elif [ "$dry" = 1 ]; then
    arch=90
    echo "# no GPU visible (dry run): --arch 90 assumed; on the GPU machine nvidia-smi's compute capability"
  else
    die "nvidia-smi reports no compute capability (no GPU visible?): pass --arch SM"
  fi
fi
targets=$(cd "$root/slurm" && "$py" -c 'from ovb_suite.campaigns import gpu_check
print(" ".join(gpu_check.TARGETS))') || die "cannot read the gpu-check targets (slurm/ovb_suite)"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
configure=(cmake --preset cuda -B "$build" -DCMAKE_CUDA_ARCHITECTURES="$arch"
           -DPython3_EXECUTABLE="$(command -v "$py")" "${launcher[@]}")
# shellcheck disable=SC2206  # the target names are words
make=(cmake --build "$build" -j "$(nproc)" --target $targets)
suite=("$py" "$root/slurm/ovb-suite" run --preset gpu-check --backend cuda --build "$build"
       --out "$out" --heartbeat 60 --grace 10)
[ -n "$only" ] && suite+=(--only "$only")

if [ "$dry" = 1 ]; then
  echo "# gpu-check: limit ${limit} s; build about ${build_estimate_s} s on 16 cores (estimate);" \
       "the suite gets what is left less ${summary_reserve_s} s"
  echo "configure: ${configure[*]}"
  echo "build: ${make[*]}"
  echo "suite: ${suite[*]} --budget \$((limit - elapsed - ${summary_reserve_s}))"
  if [ ! -f "$build/CTestTestfile.cmake" ]; then
    "${configure[@]}" >/dev/null || die "configure failed in $build"
  fi
  exec "${suite[@]}" --budget $((limit - build_estimate_s - summary_reserve_s)) --dry-run
fi

mkdir -p "$out" || die "cannot create $out"
pack_start "$out"
start=$SECONDS
note() { echo "gpu-check: $*" | tee -a "$out/build.txt"; }
note "limit ${limit} s; GPU $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader | head -1); sm_${arch}"
note "configure: ${configure[*]}"
"${configure[@]}" > "$out/configure.log" 2>&1 || { note "configure FAILED (configure.log)"; exit 1; }
note "build (estimate ${build_estimate_s} s): ${make[*]}"
"${make[@]}" > "$out/build.log" 2>&1 || { note "build FAILED after $((SECONDS - start)) s (build.log)"; exit 1; }
note "configured and built in $((SECONDS - start)) s"
budget=$((limit - (SECONDS - start) - summary_reserve_s))
if [ "$budget" -lt 60 ]; then
  note "only ${budget} s left after the build: nothing run; call again with the same OUT_DIR"
  exit 1
fi
note "suite budget ${budget} s: ${suite[*]} --budget ${budget}"
rc=0
"${suite[@]}" --budget "$budget" 2>&1 | tee "$out/gpu-check.log" || rc=$?
note "suite exit status $rc after $((SECONDS - start)) s; summary: $out/summary.md"
exit "$rc"
