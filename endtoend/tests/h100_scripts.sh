#!/usr/bin/env bash
# Checks results/h100/run.sh and summarize.py without a GPU: run.sh refuses bad use with exit 2
# and one line; summarize.py tabulates a gpt4d result (the 4-rank host smoke run's) and a trace
# analysis, and writes summary.json.
# Usage: h100_scripts.sh REPO_ROOT GPT4D_RESULT.json OVB_TRACE GOLDEN_TRACE
set -u
root=$1 result=$2 ovb_trace=$3 golden=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "h100_scripts: FAILED: $*" >&2; exit 1; }

"$root/results/h100/run.sh" /nonexistent "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "run.sh with a missing build folder did not exit 2"
grep -q "no build folder '/nonexistent'" "$tmp/err" || fail "run.sh message: $(cat "$tmp/err")"
"$root/results/h100/run.sh" only-one-arg >/dev/null 2>&1
[ $? = 2 ] || fail "run.sh with one argument did not exit 2"

mkdir -p "$tmp/out/trace"
cp "$result" "$tmp/out/gpt4d_1.3B.json"
cp "$golden" "$tmp/out/trace/rank-00000.trace.json"
"$ovb_trace" analyze "$tmp/out/trace" --json "$tmp/out/trace/analysis.json" >/dev/null ||
  fail "ovb-trace analyze"
python3 "$root/results/h100/summarize.py" "$tmp/out" >"$tmp/summary.md" || fail "summarize.py"
grep -q "^| gpt4d | host |" "$tmp/summary.md" || fail "no gpt4d row: $(head -20 "$tmp/summary.md")"
grep -q "^| gemm | 0.02 | 30.6 |" "$tmp/summary.md" || fail "no kernel breakdown row"
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['headline'][0]['run']=='gpt4d'" \
  "$tmp/out/summary.json" || fail "summary.json"
echo "h100_scripts: ok"
