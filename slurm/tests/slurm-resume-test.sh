#!/usr/bin/env bash
# slurm/tests/slurm-resume-test.sh: submits slurm/suite.sbatch (host, quick) to the local Slurm,
# cancels it (scancel) once some steps finished, resubmits it on the same results folder, and checks
# that the finished steps were not run again (same attempt, start time and output mtimes; "skipped"
# in the new job's output), the cancelled step was redone, and the final folder is complete.
# Usage: slurm/tests/slurm-resume-test.sh BUILD_DIR        (ctest: slurm_cancel_resume)
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-resume-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir resume
res=$WORK/results
want=${OVB_RESUME_AFTER:-3}   # finished steps before the cancel

id=$(submit "$ROOT/slurm/suite.sbatch" --backend host --preset quick --out "$res")
say "submitted job $id; cancelling it once $want steps finished"
waited=0
until [ "$(finished_count "$res")" -ge "$want" ]; do
  state=$(job_field "$id" JobState)
  if [ "$state" != RUNNING ] && [ "$state" != PENDING ]; then
    show_job_output "$id"
    fail "job $id ended ($state) before $want steps finished: nothing to cancel mid-way"
  fi
  [ "$waited" -lt 1200 ] || { scancel "$id"; fail "$want steps not finished after 1200 s"; }
  sleep 0.5
  waited=$((waited + 1))
done
scancel "$id"
wait_job "$id" 120
show_job_output "$id"
[ "$(job_field "$id" JobState)" = CANCELLED ] || fail "job $id was not cancelled"

# What finished before the cancel: step -> (attempt, start, output mtimes).
snapshot() {
  "$PY" - "$res" <<'PY'
import glob, json, os, sys
root, out = sys.argv[1], {}
for f in sorted(glob.glob(os.path.join(root, ".suite", "state", "*.json"))):
    r = json.load(open(f))
    if r["status"] == "finished":
        out[r["step"]] = [r["attempt"], r["started_epoch"]]
print(json.dumps(out, sort_keys=True))
PY
}
outputs_mtimes() {
  find "$res" -path "$res/.suite" -prune -o -path "$res/logs" -prune -o -path "$res/report" -prune \
    -o -name suite-status.md -prune -o -type f -printf '%P %T@\n' | sort
}
before=$(snapshot)
mtimes_before=$(outputs_mtimes)
# Steps the cancel left unfinished; those it caught running are recorded interrupted (or running,
# when the driver was killed first) and must be redone.
left=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(r["step"] for r in d["steps"] if r["status"] != "finished"))' "$res/.suite/status.json")
unfinished=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(r["step"] for r in d["steps"] if r["status"] in ("interrupted","running")))' "$res/.suite/status.json")
say "finished before the cancel: $before; cut off: ${unfinished:-none}; not run: $left"
[ -n "$left" ] || fail "the job finished every step before the cancel: nothing was resumed"

id2=$(submit "$ROOT/slurm/suite.sbatch" --out "$res")
say "resubmitted as job $id2"
wait_job "$id2" 1800
show_job_output "$id2"
"$PY" "$ROOT/slurm/tests/check_results.py" "$res" || fail "final results incomplete"

after=$("$PY" - "$res" "$before" <<'PY'
import json, os, sys
root, before = sys.argv[1], json.loads(sys.argv[2])
bad = []
for step, (attempt, start) in before.items():
    r = json.load(open(os.path.join(root, ".suite", "state", step + ".json")))
    if (r["attempt"], r["started_epoch"]) != (attempt, start):
        bad.append(f"{step} ran again (attempt {r['attempt']})")
print("; ".join(bad))
PY
)
[ -z "$after" ] || fail "finished steps were rerun: $after"
for step in $("$PY" -c 'import json,sys; print(" ".join(json.loads(sys.argv[1])))' "$before"); do
  grep -q "$step: skipped, finished" "$WORK/job-$id2.out" || fail "$step not reported as skipped"
done
mtimes_after=$(outputs_mtimes)
while read -r path mtime; do
  grep -qxF "$path $mtime" <<<"$mtimes_after" || fail "$path was rewritten by the resumed job"
done <<<"$mtimes_before"
for step in $unfinished; do
  [ "$(step_json "$res" "$step" attempt)" -ge 2 ] || fail "$step was not redone"
done
say "PASS: cancelled job $id resumed by job $id2 without rerunning finished steps"
