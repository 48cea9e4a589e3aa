#!/usr/bin/env bash
# slurm/tests/local-suite-test.sh: the README's one command without Slurm - `slurm/ovb-suite run
# --out DIR --backend host --preset quick` with mpirun - then a strict check of the folder (every
# step finished, result files parse with their keys, report present) and a rerun that must skip
# every step.
# Usage: slurm/tests/local-suite-test.sh BUILD_DIR          (ctest: slurm_suite_workstation)
set -euo pipefail
BUILD=$(cd "${1:?usage: local-suite-test.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${OVB_TEST_PYTHON:-python3}
res=$BUILD/slurm-tests/workstation/results
rm -rf "$res"
env -u SLURM_JOB_ID -u SLURM_NTASKS OVB_LAUNCHER=mpirun "$PY" "$ROOT/slurm/ovb-suite" run \
  --out "$res" --build "$BUILD" --backend host --preset quick --heartbeat 30 || true
"$PY" "$ROOT/slurm/tests/check_results.py" "$res" || { echo "FAIL: results incomplete" >&2; exit 1; }
if grep -rl $'\x1b\[' "$res/logs" "$res/.suite" >/dev/null 2>&1; then
  grep -rl $'\x1b\[' "$res/logs" "$res/.suite" >&2
  echo "FAIL: terminal colour codes in the suite's logs" >&2
  exit 1
fi
# The rerun names the build too: this test belongs to BUILD, wherever it was configured (the
# suite's own search looks only under the checkout's build/).
again=$(env -u SLURM_JOB_ID -u SLURM_NTASKS OVB_LAUNCHER=mpirun "$PY" "$ROOT/slurm/ovb-suite" run \
          --out "$res" --build "$BUILD")
n=$(grep -c "skipped, finished" <<<"$again" || true)
total=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' \
          "$res/.suite/status.json")
[ "$n" = "$total" ] || { echo "$again"; echo "FAIL: rerun skipped $n of $total steps" >&2; exit 1; }
echo "PASS: the quick suite ran on the host backend without Slurm; the rerun skipped every step"
