#!/usr/bin/env bash
# Checks results/h100/multirank.sh and multirank_summary.py without a GPU: bad use exits 2 with one
# line; the sweep runs on the host backend (a tiny GPT, 4 and 8 ranks); the summary's rows match the
# gpt4d result files (times, exposed communication, per-dimension split summing to the total); a
# second call redoes nothing and a call after one result is removed redoes exactly that run.
# Usage: h100_multirank.sh REPO_ROOT BUILD_DIR
set -u
root=$1 build=$2
script=$root/results/h100/multirank.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "h100_multirank: FAILED: $*" >&2; exit 1; }

"$script" /nonexistent "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "missing build folder did not exit 2"
grep -q "no build folder '/nonexistent'" "$tmp/err" || fail "message: $(cat "$tmp/err")"
"$script" "$build" "$tmp/out" grids16 2>"$tmp/err"
[ $? = 2 ] || fail "unknown part did not exit 2"
grep -q "unknown part 'grids16'" "$tmp/err" || fail "message: $(cat "$tmp/err")"
OVB_BACKEND=tpu "$script" "$build" "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "unknown backend did not exit 2"

export OVB_BACKEND=host OVB_GRIDS4="1x2x2x1 1x1x1x4" OVB_GRIDS8="2x2x2x1"
export OVB_MODEL="--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 256 --batch 8 --iters 3 --warmup 1"
"$script" "$build" "$tmp/out" >"$tmp/log1" 2>&1 || fail "sweep: $(tail -n 20 "$tmp/log1")"
grep -q "runs: 15 new, 0 done earlier, 0 failed, 0 left" "$tmp/log1" || fail "first call: $(tail -n 5 "$tmp/log1")"

python3 - "$tmp/out" <<'EOF' || fail "summary.json does not match the result files"
import json, os, sys
out = sys.argv[1]
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
EOF
grep -q "^| 8 | 2x2x2x1 | oag |" "$tmp/out/summary.md" || fail "no flags8 row in summary.md"

"$script" "$build" "$tmp/out" >"$tmp/log2" 2>&1 || fail "second call: $(tail -n 5 "$tmp/log2")"
grep -q "runs: 0 new, 15 done earlier" "$tmp/log2" || fail "second call redid work: $(tail -n 3 "$tmp/log2")"
rm "$tmp/out/grids8/g2x2x2x1-none.json"
"$script" "$build" "$tmp/out" grids8 >"$tmp/log3" 2>&1 || fail "third call: $(tail -n 5 "$tmp/log3")"
grep -q "runs: 1 new, 1 done earlier" "$tmp/log3" || fail "resume: $(tail -n 3 "$tmp/log3")"
echo "h100_multirank: ok"
