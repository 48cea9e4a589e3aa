#!/usr/bin/env bash
# ci/test.sh: the one test command. Installs what is missing (ci/setup.sh), configures and builds
# the host backend (preset host) and, where nvcc and NCCL are found, the CUDA backend too (preset cuda:
# compile and link; its GPU tests run only where a GPU is visible and are reported as skipped
# elsewhere), runs every test (ctest: unit, multi-rank MPI, smoke, Slurm; the CUDA pass leaves the
# Slurm and backend-neutral tests to the host pass; pytest for analysis/; and the shell-script
# lint) and prints one summary line. Exit status non-zero on any failure.
# Usage: ci/test.sh [--no-setup] [--host-only] [-j N]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here" || exit 1
setup=1 host_only=0 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --no-setup) setup=0 ;;
    --host-only) host_only=1 ;;
    -j)
      if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "ci/test.sh: error: -j needs a number of parallel jobs, e.g. -j 4 (see --help)" >&2
        exit 2
      fi
      shift; jobs=$1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "ci/test.sh: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
export PATH="/usr/local/cuda/bin:$PATH"
# The independent reference (ctest gpt4d.reference.jax) fails instead of skipping when JAX is
# missing: ci/setup.sh installs it, so a skip here would hide a broken install.
export OVB_REQUIRE_REFERENCE=1
start=$(date +%s)
declare -a results=()
failed=0
step() {  # step NAME COMMAND...: runs, records pass/fail, never stops the script
  local name=$1; shift
  echo "==== $name: $*"
  if "$@"; then results+=("$name: ok"); else results+=("$name: FAILED"); failed=1; fi
}

if [ "$setup" = 1 ]; then
  ci/setup.sh || { echo "ci/test.sh: setup failed" >&2; exit 1; }
fi

# NCCL's header where cmake/FindNCCL.cmake looks for it (NCCL_ROOT/NCCL_HOME, the toolkit, /usr).
have_nccl() {
  local d
  for d in "${NCCL_ROOT:-/nonexistent}" "${NCCL_HOME:-/nonexistent}" /usr/local/cuda /usr; do
    [ -f "$d/include/nccl.h" ] && return 0
  done
  return 1
}
presets=(host)
if [ "$host_only" = 0 ] && command -v nvcc >/dev/null 2>&1; then
  if have_nccl; then
    presets+=(cuda)
  else
    echo "ci/test.sh: note: nvcc found but no NCCL (nccl.h): the CUDA pass is skipped;" \
      "install NCCL (e.g. libnccl-dev) or set NCCL_ROOT"
    results+=("cuda: SKIPPED (nvcc without NCCL)")
  fi
fi

# ccache (ci/setup.sh installs it): a second run, or another checkout, recompiles only what
# changed, and the CUDA pass compiles only the CUDA code: every other object has the same command
# in both builds (ctest tree.cuda_objects), so ccache reuses the host pass's.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
for p in "${presets[@]}"; do
  step "configure-$p" cmake --preset "$p" -DPython3_EXECUTABLE="$here/.venv/bin/python" \
    "${launcher[@]}"
  step "build-$p" cmake --build --preset "$p" -j "$jobs"
  # ctest's own summary lists the GPU tests as "Skipped" when no GPU is visible. The Slurm tests
  # exercise the driver and job scripts, the same in both builds, and the tests labelled
  # backend-neutral run programs built by the same commands in both builds (ctest
  # tree.backend_neutral, in the CUDA pass, proves it against the host build): they run in the
  # host pass only.
  exclude=()
  [ "$p" = cuda ] && exclude=(-LE 'slurm|backend-neutral')
  step "ctest-$p" ctest --preset "$p" -j "$jobs" --timeout 1200 "${exclude[@]}"
done

# On every core the tests are allowed (pytest-xdist, analysis/requirements.txt): each uses its own
# temporary folders.
step pytest "$here/.venv/bin/python" -m pytest -q -n "$jobs" analysis/tests
mapfile -t scripts < <(git ls-files '*.sh' '*.sbatch' 'ci/*' '.ci/*' 'slurm/*' | sort -u |
                        while read -r f; do head -c 64 "$f" | grep -q '^#!.*\(bash\|sh\)' && echo "$f"; done)
step shellcheck shellcheck -x "${scripts[@]}"

echo
echo "==== summary"
printf '  %s\n' "${results[@]}"
elapsed=$(( $(date +%s) - start ))
if [ "$failed" = 0 ]; then
  echo "ci/test.sh: PASSED (${#results[@]} steps, presets: ${presets[*]}, ${elapsed}s)"
else
  echo "ci/test.sh: FAILED (see the steps marked FAILED above, ${elapsed}s)"
fi
exit "$failed"
