#!/usr/bin/env bash
# slurm/gpu-check.sh: the GPU check of the suite driver (builds nothing). On a machine with a GPU
# and a CUDA build, runs the quick suite on the CUDA backend with RANKS ranks sharing each GPU
# (ovb-suite starts CUDA MPS for them; per-rank NCCL host ids by the binaries' --ranks-per-gpu
# logic), then checks the results folder strictly (slurm/tests/check_results.py) and keeps the
# driver's output.
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

rc=0
"$py" "$root/slurm/ovb-suite" run --out "$out/suite" --build "$build" --backend cuda \
  --preset "$preset" --ranks-per-gpu "$rpg" --heartbeat 60 2>&1 | tee "$log" || rc=$?
"$py" "$root/slurm/tests/check_results.py" "$out/suite" 2>&1 | tee -a "$log" || rc=1
echo "gpu-check: driver and results check exit status $rc (log $log)" | tee -a "$log"
exit "$rc"
