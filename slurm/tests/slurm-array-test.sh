#!/usr/bin/env bash
# slurm/tests/slurm-array-test.sh: slurm/emit-sbatch on the local Slurm. Jobs generated from a search
# JSON (tests/fixtures/search.json) as one job array run a stand-in gpt4d (a script that writes a
# minimal result; the real gpt4d is checked by slurm_suite_job) through `ovb-suite exec` into one
# shared results folder: the tasks share the folder, every configuration's step finishes, and a
# second submission of the same array skips them all.
# Usage: slurm/tests/slurm-array-test.sh BUILD_DIR          (ctest: slurm_array_emit)
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-array-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir array
fake=$WORK/fake-build
mkdir -p "$fake/endtoend"
cat >"$fake/endtoend/gpt4d" <<'EOF2'
#!/bin/sh
# Stand-in gpt4d: rank 0 writes a result with the grid it was given.
out="" gx="" gy="" gz="" gd=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2 ;; --gx) gx=$2 ;; --gy) gy=$2 ;; --gz) gz=$2 ;; --gdata) gd=$2 ;;
  esac
  shift
done
echo "fake gpt4d rank ${SLURM_PROCID:-0} of ${SLURM_NTASKS:-1}: grid $gx x $gy x $gz x $gd"
[ "${SLURM_PROCID:-0}" = 0 ] || exit 0
printf '{"context": {}, "config": {"grid": {"gx": %s, "gy": %s, "gz": %s, "gdata": %s}}, "iterations": [{"iter": 0, "loss": 1.0, "time_ms": 1.0}], "summary": {}}\n' \
  "$gx" "$gy" "$gz" "$gd" > "$out"
EOF2
chmod +x "$fake/endtoend/gpt4d"
sed -i "s|^export OVB_BUILD_DIR=.*|export OVB_BUILD_DIR=$fake|" "$WORK/site.sh"

"$PY" "$ROOT/slurm/emit-sbatch" --search "$ROOT/slurm/tests/fixtures/search.json" \
  --out-dir "$WORK/jobs" --top-k 3 --array --backend host --time 00:10:00
id=$(submit "$WORK/jobs/search-array.sbatch")
say "submitted array job $id (3 tasks)"
for t in 0 1 2; do
  wait_job "${id}_$t" 300
  [ "$(job_field "${id}_$t" JobState)" = COMPLETED ] || { show_job_output "$id"; fail "task $t failed"; }
done
res=$WORK/jobs/results
"$PY" "$ROOT/slurm/tests/check_results.py" "$res" --records || fail "bad records"
for name in top1-g2x2x1x1 top2-g1x2x2x1-yxz top4-g1x1x1x4; do
  [ "$(step_json "$res" "gpt4d-$name" status)" = finished ] || fail "gpt4d-$name not finished"
  [ -s "$res/gpt4d/$name.json" ] || fail "$res/gpt4d/$name.json missing"
done
grep -q '"gx": 1, "gy": 2, "gz": 2' "$res/gpt4d/top2-g1x2x2x1-yxz.json" || fail "wrong grid in top2"
grep -q -- "--grid-order y,x,z" "$res/logs/gpt4d-top2-g1x2x2x1-yxz.txt" ||
  fail "the X/Y/Z order of top2 was not passed to gpt4d"

id2=$(submit "$WORK/jobs/search-array.sbatch")
for t in 0 1 2; do wait_job "${id2}_$t" 300; done
for name in top1-g2x2x1x1 top2-g1x2x2x1-yxz top4-g1x1x1x4; do
  [ "$(step_json "$res" "gpt4d-$name" attempt)" = 1 ] || fail "gpt4d-$name ran again"
done
say "PASS: emitted job array ran every configuration once into one folder"
