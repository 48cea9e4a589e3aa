#!/usr/bin/env bash
# slurm/tests/slurm-suite-test.sh: submits slurm/suite.sbatch (host backend, quick preset) to the
# local Slurm (ci/slurm-local.sh), waits, and checks the results folder strictly: every step
# finished, every result file parses and has its keys (results/SCHEMA.md), the report exists.
# Usage: slurm/tests/slurm-suite-test.sh BUILD_DIR          (ctest: slurm_suite_job)
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-suite-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir suite

# One round of gpt4d runs: the job's mechanics are the point here; the preset's 3 rounds run in
# slurm_suite_workstation.
id=$(submit "$ROOT/slurm/suite.sbatch" --backend host --preset quick --rounds 1 \
       --out "$WORK/results" --heartbeat 30)
say "submitted suite job $id (results $WORK/results)"
wait_job "$id" 1800
show_job_output "$id"
"$PY" "$ROOT/slurm/tests/check_results.py" "$WORK/results" ||
  fail "results folder incomplete (see the problems above and $WORK/results/suite-status.md)"
state=$(job_field "$id" JobState)
[ "$state" = COMPLETED ] || fail "job $id ended $state, not COMPLETED"
grep -q "ovb-suite: job $id" "$WORK/job-$id.out" || fail "job output lacks the job header"
say "PASS: suite job $id finished every step"
