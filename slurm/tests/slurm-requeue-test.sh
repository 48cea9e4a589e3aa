#!/usr/bin/env bash
# slurm/tests/slurm-requeue-test.sh: the time-limit path on the local Slurm, with small fake steps
# (independent of the suite's binaries). A job with a 1-minute limit and --signal=B:USR1@50 runs a
# steps file whose second step hangs in the first allocation: Slurm's USR1 reaches the driver, the
# step gets SIGTERM and flushes a partial result, is recorded as interrupted, and the driver requeues
# the job; in the next allocation the finished step is skipped and the rest completes. On the way,
# a 2-rank step launched by srun hangs and is stopped by the watchdog (its ranks must be gone).
# Usage: slurm/tests/slurm-requeue-test.sh BUILD_DIR        (ctest: slurm_requeue_signal)
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-requeue-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir requeue
res=$WORK/results
# In the first allocation (while $WORK/first-allocation exists) "hang" hangs - the watchdog stops
# its 2 ranks (srun) after 3 s - and b waits for the time-limit signal, then writes what it has.
# A marker file, not SLURM_RESTART_COUNT: Slurm may requeue a job whose launch failed on a busy
# node before the driver ever ran, and that must not count as the first allocation's end.
first=$WORK/first-allocation
touch "$first"
sed "s#@FIRST@#$first#g" >"$WORK/steps.json" <<'EOF2'
{"steps": [
  {"name": "a", "command": ["sh", "-c", "echo '{}' > {tmp}/a.json"], "outputs": ["a.json"]},
  {"name": "hang", "ranks": 2, "timeout_s": 3, "command": ["sh", "-c",
   "if [ -e @FIRST@ ]; then echo rank $SLURM_PROCID hangs; exec sleep 987; fi"]},
  {"name": "b", "outputs": ["b.json"], "timeout_s": 600, "command": ["sh", "-c",
   "if [ -e @FIRST@ ]; then trap 'echo flushed > {tmp}/partial.txt; exit 143' TERM; echo waiting for the time limit; sleep 600 & wait; fi; echo '{\"restart\": 1}' > {tmp}/b.json"]},
  {"name": "c", "command": ["sh", "-c", "echo '{}' > {tmp}/c.json"], "outputs": ["c.json"],
   "needs": ["b"]}
]}
EOF2
id=$(submit --time=1 --signal=B:USR1@50 "$ROOT/slurm/suite.sbatch" --steps-file "$WORK/steps.json" \
       --backend host --out "$res" --grace 5)
say "submitted job $id (1 min limit, USR1 50 s before it)"
waited=0
until [ "$(step_json "$res" b status)" = interrupted ] && [ "$(job_field "$id" JobState)" = PENDING ]; do
  [ "$waited" -lt 240 ] || { show_job_output "$id"; scancel "$id"; fail "job $id was not requeued"; }
  if [ "$(job_field "$id" JobState)" = PENDING ] && [ "$(job_field "$id" Restarts)" != 0 ] &&
     [ "$(step_json "$res" b status)" != interrupted ]; then
    say "job $id requeued before step b ran ($(job_field "$id" Reason)); starting it again"
    scontrol release "$id" >/dev/null 2>&1 || true
    scontrol update jobid="$id" StartTime=now >/dev/null 2>&1 || true
  fi
  sleep 1
  waited=$((waited + 1))
done
say "job $id requeued after ${waited}s; releasing its begin-time hold"
rm -f "$first"
[ "$(step_json "$res" b status)" = interrupted ] || fail "step b not recorded as interrupted"
[ "$(step_json "$res" b signal)" = SIGUSR1 ] || fail "step b not interrupted by SIGUSR1"
# slurmd refuses to launch a job whose credential is no newer, in whole seconds, than its last
# kill ("Job N already killed, do not launch batch job"): start the requeued job a second later.
sleep 2
scontrol update jobid="$id" StartTime=now
wait_job "$id" 240
show_job_output "$id"
[ "$(job_field "$id" JobState)" = COMPLETED ] || fail "requeued job did not complete"
"$PY" "$ROOT/slurm/tests/check_results.py" "$res" --records || fail "bad records"
for s in a hang b c; do
  [ "$(step_json "$res" $s status)" = finished ] || fail "step $s not finished"
done
grep -q "hang attempt 1: failed: watchdog: no completion within 3 s (timeout); killed" \
  "$res/logs/hang.txt" || fail "the watchdog did not stop the hanging 2-rank step"
! pgrep -f "sleep 987" >/dev/null || fail "the hanging step's ranks survived the watchdog"
[ "$(step_json "$res" a attempt)" = 1 ] || fail "step a ran again"
[ "$(step_json "$res" b attempt)" = 2 ] || fail "step b not redone once"
grep -qx flushed "$res/.suite/partial/b.1/partial.txt" || fail "step b did not flush on SIGTERM"
grep -q "requeueing job $id" "$WORK/job-$id.out" || fail "the driver did not requeue"
grep -q "(1/4) a: skipped, finished" "$WORK/job-$id.out" || fail "a not skipped after requeue"
say "PASS: time-limit signal, partial flush, requeue and resume"
