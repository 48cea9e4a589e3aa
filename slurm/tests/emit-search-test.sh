#!/usr/bin/env bash
# slurm/emit-sbatch running the search itself (`-- SEARCH_ARGS`) with a real ovb-model: one job per
# top-k configuration, each running gpt4d on the searched grid, the best one first.
# Usage: emit-search-test.sh OVB_MODEL WORK_DIR   (ctest: slurm_emit_search)
set -uo pipefail
model=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
py=${OVB_TEST_PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work/build"
ln -s "$model" "$work/build/ovb-model"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() {
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
    fail "$1 does not satisfy: $2"
}

if ! "$py" "$here/../emit-sbatch" --build "$work/build" --out-dir "$work/emit" --top-k 2 -- \
    --machine perlmutter-a100 --preset 1.3B --batch 16 --gpus 8 --overlap all \
    >"$work/emit.out" 2>&1; then
  fail "emit-sbatch exited non-zero: $(tail -n 3 "$work/emit.out")"
fi
has "$work/emit/search.json" "d['configs'][0]['rank'] == 1"
best=$("$py" -c "import json,sys; c=json.load(open(sys.argv[1]))['configs'][0]; print(f\"{c['gx']}x{c['gy']}x{c['gz']}x{c['gdata']}\")" "$work/emit/search.json")
[ -f "$work/emit/top1-g$best.sbatch" ] || fail "no job for the best grid $best"
[ "$(find "$work/emit" -name 'top*.sbatch' | wc -l)" = 2 ] || fail "expected 2 jobs"
grep -q -- "--gx" "$work/emit/top1-g$best.sbatch" || fail "the job does not run gpt4d"
grep -q "^rank" "$work/emit.out" || fail "the search's table was not shown"

# A bad search argument: ovb-model's own one-line error and status 2, no jobs.
"$py" "$here/../emit-sbatch" --build "$work/build" --out-dir "$work/bad" -- \
  --machine perlmutter-a100 --preset 7B --batch 16 --gpus 8 >"$work/bad.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "bad search: exit status $rc, expected 2"
grep -q "^ovb-model: error: .*unknown GPT preset" "$work/bad.out" || fail "bad search: $(cat "$work/bad.out")"
[ -z "$(find "$work/bad" -name '*.sbatch' 2>/dev/null)" ] || fail "bad search: jobs written"

[ "$failures" = 0 ] && echo "emit-search-test: all checks passed"
exit "$failures"
