#!/usr/bin/env bash
# Checks ovb-suite's preset multirank and `ovb-analysis summarize multirank` without a GPU: bad use
# exits 2 with one line; the sweep runs on the host backend (a tiny GPT, 4 and 8 ranks); the
# summary's rows match the gpt4d result files (times, exposed communication, per-dimension split
# summing to the total); a second call redoes nothing and a call after one result is removed redoes
# exactly that run.
# Usage: preset_multirank.sh REPO_ROOT BUILD_DIR        (ctest: gpt4d.preset_multirank)
set -u
root=$1 build=$2
py=${OVB_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "preset_multirank: FAILED: $*" >&2; exit 1; }
suite() { env -u SLURM_JOB_ID -u SLURM_NTASKS OVB_LAUNCHER=mpirun "$py" "$root/slurm/ovb-suite" run \
  --preset multirank "$@"; }
# attempts STEP...: the attempt count of each step's record, space-separated
attempts() { "$py" -c 'import json,sys; print(" ".join(str(json.load(open(f"{sys.argv[1]}/.suite/state/{s}.json"))["attempt"]) for s in sys.argv[2:]))' "$tmp/out" "$@"; }

suite --build /nonexistent --out "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "missing build folder did not exit 2"
grep -q "build /nonexistent: no such folder" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than one line: $(cat "$tmp/err")"
suite --build "$build" --backend host --out "$tmp/out" --only grids16 2>"$tmp/err"
[ $? = 2 ] || fail "unknown part did not exit 2"
grep -q "unknown group or step grids16" "$tmp/err" || fail "message: $(cat "$tmp/err")"
suite --build "$build" --backend tpu --out "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "unknown backend did not exit 2"
suite --build "$build" --backend host --out "$tmp/out" --param grids2=1x1x1x2 2>"$tmp/err"
[ $? = 2 ] || fail "unknown parameter did not exit 2"
grep -q "preset multirank has no such parameter" "$tmp/err" || fail "message: $(cat "$tmp/err")"
rm -rf "$tmp/out"

params=(--param "grids4=1x2x2x1 1x1x1x4" --param grids8=2x2x2x1
        --param "model=--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 256 --batch 8 --iters 3 --warmup 1")
suite --build "$build" --backend host --out "$tmp/out" "${params[@]}" >"$tmp/log1" 2>&1 ||
  fail "sweep: $(tail -n 20 "$tmp/log1")"
"$py" - "$tmp/out" <<'EOF2' || fail "summary.json does not match the result files"
import json, os, sys
out = sys.argv[1]
st = json.load(open(os.path.join(out, ".suite", "status.json")))
runs = [r for r in st["steps"] if r["group"] in ("grids4", "grids8", "flags8", "priorities")
        and not r["step"].endswith("-plot")]
assert len(runs) == 15 and all(r["status"] == "finished" and r["attempt"] == 1 for r in runs), runs
s = json.load(open(os.path.join(out, "summary.json")))
assert len(s["runs"]) == 15, len(s["runs"])
for r in s["runs"]:
    doc = json.load(open(os.path.join(out, r["file"])))
    assert doc["context"]["backend"] == "host"
    assert r["ranks"] == doc["config"]["world_size"] == doc["context"]["world_size"]
    g = doc["config"]["grid"]
    assert r["grid"] == f"{g['gx']}x{g['gy']}x{g['gz']}x{g['gdata']}", r["grid"]
    assert r["median_ms"] == doc["summary"]["median_time_ms"]
    assert r["exposed_ms"] == doc["summary"]["exposed_comm_ms"]
    per = sum(r["exposed_per_dim_ms"].values())
    assert abs(per - r["exposed_ms"]) <= 1e-9 * max(1.0, r["exposed_ms"]), (per, r["exposed_ms"])
    if r["grid"] == "1x1x1x4":  # pure data parallelism: nothing on x, y or z
        assert all(r["exposed_per_dim_ms"][d] == 0 for d in ("x", "y", "z")), r
prio = {(e["ranks"], e["priorities"]) for e in s["priority_effect"]}
assert prio == {(n, p) for n in (4, 8) for p in ("comm normal, compute normal",
                                                  "comm normal, compute high")}, prio
assert {(e["ranks"], e["grid"]) for e in s["overlap_effect"]} == {(4, "1x2x2x1"), (4, "1x1x1x4"),
                                                                   (8, "2x2x2x1")}
EOF2
grep -q "^| 8 | 2x2x2x1 | oag |" "$tmp/out/summary.md" || fail "no flags8 row in summary.md"

# A second call redoes nothing (the folder keeps its parameters); a removed result is redone alone.
suite --build "$build" --out "$tmp/out" >"$tmp/log2" 2>&1 || fail "second call: $(tail -n 5 "$tmp/log2")"
[ "$(attempts grids4-g1x2x2x1-none grids8-g2x2x2x1-none flags8-g2x2x2x1-oag)" = "1 1 1" ] ||
  fail "second call redid work: $(grep -v skipped "$tmp/log2" | tail -n 5)"
grep -q "(1 run now, 19 skipped as finished)" "$tmp/log2" || fail "second call: $(tail -n 3 "$tmp/log2")"
rm "$tmp/out/grids8/g2x2x2x1-none.json"
suite --build "$build" --out "$tmp/out" --only grids8 >"$tmp/log3" 2>&1 || fail "third call: $(tail -n 5 "$tmp/log3")"
[ "$(attempts grids8-g2x2x2x1-none grids8-g2x2x2x1-all)" = "2 1" ] ||
  fail "resume: $(tail -n 5 "$tmp/log3")"
[ -s "$tmp/out/grids8/g2x2x2x1-none.json" ] || fail "the removed result was not redone"
echo "preset_multirank: ok"
