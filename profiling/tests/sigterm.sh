#!/bin/sh
# SIGTERM (what Slurm sends every task at the time limit or on scancel) reaches the ranks of a
# traced run: every rank must still write its trace, readable by ovb-trace. The signal goes to
# the ranks themselves, as slurmstepd does it; mpirun would forward it one rank at a time and
# SIGKILL the others as soon as the first one ends.
# Usage: sigterm.sh OVB_TRACE_DEMO OVB_TRACE WORK_DIR MPIEXEC "MPIEXEC_PREFLAGS"
set -u
DEMO=$1
T=$2
D=$3
MPIEXEC=$4
PREFLAGS=$5
rm -rf "$D"
mkdir -p "$D"

# shellcheck disable=SC2086 # the preflags are several words
"$MPIEXEC" -n 2 $PREFLAGS "$DEMO" --backend host --gx 2 --iters 1000000 --warmup 0 \
  --trace "$D/traces" >"$D/log" 2>&1 &
pid=$!
i=0
while ! grep -q "^iter 3:" "$D/log" 2>/dev/null; do
  i=$((i + 1))
  if [ "$i" -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "FAIL: the traced run did not reach iteration 3"
    cat "$D/log"
    kill -KILL "$pid" 2>/dev/null
    exit 1
  fi
  sleep 0.1
done
ranks=$(ps -o pid= --ppid "$pid")
# shellcheck disable=SC2086 # one pid per word
kill -TERM $ranks
wait "$pid"
echo "mpirun ended with status $? after SIGTERM"
fail=0
for r in 0 1; do
  f="$D/traces/rank-0000$r.trace.json"
  if [ ! -s "$f" ]; then
    echo "FAIL: rank $r wrote no trace on SIGTERM"
    fail=1
  fi
done
[ "$fail" -eq 0 ] || { cat "$D/log"; exit 1; }
"$T" analyze "$D/traces" --json "$D/analysis.json" || exit 1
grep -q '"kind": "all_reduce"' "$D/analysis.json" || {
  echo "FAIL: the traces written on SIGTERM hold no collectives"
  exit 1
}
echo "ok: both ranks wrote their trace on SIGTERM"
