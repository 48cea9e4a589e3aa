# slurm/tests/lib.sh: helpers of the Slurm tests (sourced): skip without Slurm, a per-test site
# configuration for the local cluster, submit, wait for a job, read its state, fail with context.
# The tests run against the cluster of ci/slurm-local.sh (ctest starts it as a fixture).
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=${OVB_TEST_PYTHON:-python3}

say() { echo "[$(date +%H:%M:%S)] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Exit 77 (ctest: Skipped) when the local cluster cannot be used here.
need_slurm() {
  if ! command -v sbatch >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
    echo "skipped: needs Slurm (ci/setup.sh) and root for the local daemons"; exit 77
  fi
  eval "$("$ROOT/ci/slurm-local.sh" env)"
  "$ROOT/ci/slurm-local.sh" status >/dev/null || "$ROOT/ci/slurm-local.sh" start ||
    fail "the local Slurm does not start (ci/slurm-local.sh start)"
}

# new_workdir NAME: an empty folder under the build folder, with site.sh for the local cluster.
new_workdir() {
  WORK=$BUILD/slurm-tests/$1
  rm -rf "$WORK"
  mkdir -p "$WORK"
  cat >"$WORK/site.sh" <<EOF
# Written by slurm/tests/lib.sh: the local test cluster (ranks share the cores).
OVB_SBATCH_ARGS=(--parsable --chdir=$WORK --output=$WORK/job-%j.out)
export OVB_BUILD_DIR=$BUILD
export OVB_SRUN_MPI=pmix
export OVB_PYTHON=${OVB_PYTHON:-$ROOT/.venv/bin/python}
EOF
  export OVB_SITE_CONFIG=$WORK/site.sh
}

# submit ARGS...: slurm/submit with the test's site configuration; prints the job id.
submit() {
  local out
  out=$("$ROOT/slurm/submit" "$@") || fail "submission failed: $out"
  echo "${out%%;*}"
}

job_field() {  # job_field JOBID FIELD: e.g. JobState, ExitCode, Restarts
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# wait_job JOBID LIMIT_S: until the job has left the queue (any final state); shows its output's
# progress lines meanwhile. Fails after LIMIT_S seconds (and cancels the job).
wait_job() {
  local id=$1 limit=$2 waited=0 state
  while :; do
    state=$(job_field "$id" JobState)
    case "$state" in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)
        say "job $id: $state (exit $(job_field "$id" ExitCode))"; return 0 ;;
      "") say "job $id: no longer known"; return 0 ;;
    esac
    if [ "$waited" -ge "$limit" ]; then
      scancel "$id" 2>/dev/null || true
      show_job_output "$id"
      fail "job $id still $state after ${limit}s"
    fi
    sleep 2
    waited=$((waited + 2))
  done
}

show_job_output() {
  local f=$WORK/job-$1.out
  if [ -f "$f" ]; then echo "---- $f (last 40 lines)"; tail -n 40 "$f"; fi
}

# step_json DIR STEP KEY: one key of a step's record (empty when absent).
step_json() {
  "$PY" -c 'import json,sys
try: print(json.load(open(sys.argv[1]+"/.suite/state/"+sys.argv[2]+".json")).get(sys.argv[3]) or "")
except FileNotFoundError: print("")' "$1" "$2" "$3"
}

finished_count() {  # finished_count DIR: steps recorded as finished
  grep -l '"status": "finished"' "$1"/.suite/state/*.json 2>/dev/null | wc -l
}
