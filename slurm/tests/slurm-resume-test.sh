#!/usr/bin/env bash
# slurm/tests/slurm-resume-test.sh: cancel-and-resubmit of slurm/suite.sbatch (host, quick) on the
# local Slurm, three times, each resubmission on the same folder: job 1 while a multi-rank srun
# step computes (its ranks have printed benchmark results), job 2 as a gpt4d step starts (srun
# creating the step), job 3 while the last step (the report) runs; job 4 completes the folder.
# Checked after each: the step cut off is recorded interrupted (never failed) and redone by the
# next job (attempt 2, "was interrupted: running it again"); every step finished before a cancel is not rerun (same attempt and start in its record,
# "skipped" in the job output, every result file with the same mtime and SHA-256); at the end the
# folder is complete and passes check_results.py's reference checks.
# Usage: slurm/tests/slurm-resume-test.sh BUILD_DIR        (ctest: slurm_cancel_resume)
# Environment: OVB_RESUME_STEP (the step of job 1 to cut, default microbench-collective),
# OVB_RESUME_LINE (a regex of its output lines to wait for, default manual_time), OVB_RESUME_STEP2
# (job 2's, default gpt4d-g2x2x1x1-none: the suite's jobs have 4 tasks).
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-resume-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir resume
res=$WORK/results
cut1=${OVB_RESUME_STEP:-microbench-collective}
line1=${OVB_RESUME_LINE:-manual_time}
cut2=${OVB_RESUME_STEP2:-gpt4d-g2x2x1x1-none}
# The driver's grace stays below the cluster's KillWait (10 s): it records the step before Slurm
# kills it.
opts=(--grace 5 --heartbeat 30)

attempt_output() {  # attempt_output STEP: the lines of the step's latest attempt so far
  awk '/^==== ovb-suite: .* attempt [0-9]+ at /{n=0; delete l; next} {l[++n]=$0}
       END{for (i = 1; i <= n; i++) print l[i]}' "$res/logs/$1.txt" 2>/dev/null
}

running_for() {  # running_for STEP SECONDS: its record says running, since at least SECONDS
  grep -qs '"status": "running"' "$res/.suite/state/$1.json" &&
    "$PY" -c 'import json,sys,time; r=json.load(open(sys.argv[1]))
sys.exit(0 if time.time() - r["started_epoch"] >= float(sys.argv[2]) else 1)' \
      "$res/.suite/state/$1.json" "$2"
}

# cut JOBID STEP REGEX MIN_S: scancel the job while STEP runs - its record has said running for
# MIN_S seconds and, with a REGEX, its current attempt has printed a matching line - then wait for
# the job to end and check the step's record.
cut() {
  local id=$1 step=$2 regex=$3 min_s=$4 waited=0 state
  say "job $id: cancelling it while $step runs${regex:+ (after a line matching \"$regex\")}"
  until running_for "$step" "$min_s" &&
        { [ -z "$regex" ] || attempt_output "$step" | grep -Eq "$regex"; }; do
    state=$(job_field "$id" JobState)
    if [ "$state" != RUNNING ] && [ "$state" != PENDING ] ||
       grep -qs '"status": "finished"' "$res/.suite/state/$step.json"; then
      show_job_output "$id"
      fail "job $id ($state) got past $step before it could be cancelled during it"
    fi
    [ "$waited" -lt 3000 ] || { scancel "$id"; fail "$step not running after 300 s"; }
    sleep 0.1
    waited=$((waited + 1))
  done
  scancel "$id"
  wait_job "$id" 120
  show_job_output "$id"
  [ "$(job_field "$id" JobState)" = CANCELLED ] || fail "job $id was not cancelled"
  [ "$(step_json "$res" "$step" status)" = interrupted ] ||
    fail "$step, cut off by the cancel, is recorded '$(step_json "$res" "$step" status)'" \
         "($(step_json "$res" "$step" error)), not interrupted"
  [ "$(step_json "$res" "$step" signal)" = SIGTERM ] || fail "$step: no SIGTERM in its record"
  say "$step: $(step_json "$res" "$step" error) after $(step_json "$res" "$step" duration_s) s"
}

steps_of() {  # steps_of SNAPSHOT: the finished steps it holds
  "$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["steps"]))' "$1"
}

# not_rerun SNAPSHOT JOBID: the snapshot's finished steps untouched, each "skipped" by the job.
not_rerun() {
  local step
  "$PY" "$ROOT/slurm/tests/folder_snapshot.py" same "$1" "$res" ||
    fail "the resubmitted job $2 reran finished steps or rewrote their results"
  for step in $(steps_of "$1"); do
    grep -q ") $step: skipped, finished" "$WORK/job-$2.out" || fail "$step not skipped by job $2"
  done
}

redone() {  # redone STEP JOBID: finished in attempt 2, rerun by the job as interrupted
  [ "$(step_json "$res" "$1" status)/$(step_json "$res" "$1" attempt)" = finished/2 ] ||
    fail "$1 was not redone: $(step_json "$res" "$1" status)," \
         "attempt $(step_json "$res" "$1" attempt)"
  grep -q ") $1: attempt 1 was interrupted: running it again" "$WORK/job-$2.out" ||
    fail "job $2 did not say it redid the interrupted $1"
}

t0=$(date +%s)
# One round (the folder records it: the later jobs, given only --out, resume with it).
id1=$(submit "$ROOT/slurm/suite.sbatch" --backend host --preset quick --rounds 1 --out "$res" \
        "${opts[@]}")
cut "$id1" "$cut1" "$line1" 0
"$PY" "$ROOT/slurm/tests/folder_snapshot.py" take "$res" >"$WORK/snap1.json"
n1=$(steps_of "$WORK/snap1.json" | wc -w)
[ "$n1" -ge 1 ] || fail "no step finished before $cut1: nothing to check for reruns"

# The moment an audit of resumption caught: the cancel comes as srun starts the step, which may then
# fail to be created ("srun: Unable to create step") before the driver has its SIGTERM.
id2=$(submit "$ROOT/slurm/suite.sbatch" --out "$res" "${opts[@]}")
cut "$id2" "$cut2" "" 0
redone "$cut1" "$id2"
not_rerun "$WORK/snap1.json" "$id2"
"$PY" "$ROOT/slurm/tests/folder_snapshot.py" take "$res" >"$WORK/snap2.json"
n2=$(steps_of "$WORK/snap2.json" | wc -w)

id3=$(submit "$ROOT/slurm/suite.sbatch" --out "$res" "${opts[@]}")
cut "$id3" report "" 0.5    # the report takes seconds (Python start, plots)
redone "$cut2" "$id3"
not_rerun "$WORK/snap2.json" "$id3"
"$PY" "$ROOT/slurm/tests/folder_snapshot.py" take "$res" >"$WORK/snap3.json"
n3=$(steps_of "$WORK/snap3.json" | wc -w)

id4=$(submit "$ROOT/slurm/suite.sbatch" --out "$res" "${opts[@]}")
wait_job "$id4" 600
show_job_output "$id4"
[ "$(job_field "$id4" JobState)" = COMPLETED ] || fail "job $id4 ended $(job_field "$id4" JobState)"
redone report "$id4"
not_rerun "$WORK/snap3.json" "$id4"
"$PY" "$ROOT/slurm/tests/check_results.py" "$res" || fail "final results incomplete or wrong"
others=$("$PY" - "$res" "$cut1" "$cut2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/.suite/status.json"))
print(" ".join(f"{r['step']}:{r.get('attempt')}" for r in d["steps"]
               if r["step"] not in (sys.argv[2], sys.argv[3], "report") and r.get("attempt") != 1))
PY
)
[ -z "$others" ] || fail "steps run more than once: $others"
say "PASS: $cut1, $cut2 and report, cut off by scancel, were redone; the $n1, $n2 and $n3" \
    "steps finished before each cancel were not rerun; the folder is complete" \
    "($(( $(date +%s) - t0 )) s)"
