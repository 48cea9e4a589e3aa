#!/usr/bin/env bash
# slurm/gpu-check.sh: the GPU check of the suite driver (builds nothing). On a machine with a GPU and
# a CUDA build, runs the quick suite on the CUDA backend with RANKS ranks sharing each GPU (CUDA MPS
# started for them, per-rank NCCL host ids by the binaries' --ranks-per-gpu logic), then checks the
# results folder strictly (slurm/tests/check_results.py) and keeps the driver's output.
# Usage: slurm/gpu-check.sh BUILD_DIR OUT_DIR [RANKS_PER_GPU (default 4)] [PRESET (default quick)]
#   e.g. slurm/gpu-check.sh build/cuda /tmp/out 4
# Output: OUT_DIR/suite/ (results, report, suite-status.md), OUT_DIR/gpu-check.log.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: gpu-check.sh BUILD_DIR OUT_DIR [RANKS_PER_GPU] [PRESET]}" && pwd)
out=${2:?usage: gpu-check.sh BUILD_DIR OUT_DIR [RANKS_PER_GPU] [PRESET]}
rpg=${3:-4}
preset=${4:-quick}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-check.log
py=${OVB_PYTHON:-python3}
[ -x "$root/.venv/bin/python" ] && [ -z "${OVB_PYTHON:-}" ] && py=$root/.venv/bin/python
export OVB_PYTHON=$py

# MPS lets the ranks sharing the GPU run their kernels concurrently (docs/ranks-per-gpu.md).
mps_started=0
if command -v nvidia-cuda-mps-control >/dev/null 2>&1 && [ "$rpg" -gt 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/ovb_mps_pipe}
  export CUDA_MPS_LOG_DIRECTORY=${CUDA_MPS_LOG_DIRECTORY:-/tmp/ovb_mps_log}
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && mps_started=1
fi
# shellcheck disable=SC2317  # called through the EXIT trap
stop_mps() { if [ "$mps_started" = 1 ]; then echo quit | nvidia-cuda-mps-control || true; fi; }
trap stop_mps EXIT

rc=0
"$py" "$root/slurm/ovb-suite" run --out "$out/suite" --build "$build" --backend cuda \
  --preset "$preset" --ranks-per-gpu "$rpg" --heartbeat 60 2>&1 | tee "$log" || rc=$?
"$py" "$root/slurm/tests/check_results.py" "$out/suite" 2>&1 | tee -a "$log" || rc=1
echo "gpu-check: driver and results check exit status $rc (log $log)" | tee -a "$log"
exit "$rc"
