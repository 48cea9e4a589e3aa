#!/usr/bin/env bash
# Checks ovb-suite's preset h100-single and `ovb-analysis summarize h100-single` without a GPU: the
# preset refuses bad use with exit 2 and one line (a missing build folder, the host backend, which
# it does not run on); the summary tabulates a gpt4d result (the 4-rank host smoke run's) and a
# trace analysis, and writes summary.json.
# Usage: preset_h100_single.sh REPO_ROOT GPT4D_RESULT.json OVB_TRACE GOLDEN_TRACE BUILD_DIR
set -u
root=$1 result=$2 ovb_trace=$3 golden=$4 build=$5
py=${OVB_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "preset_h100_single: FAILED: $*" >&2; exit 1; }

"$py" "$root/slurm/ovb-suite" run --preset h100-single --build /nonexistent --out "$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || fail "a missing build folder did not exit 2"
grep -q "build /nonexistent: no such folder" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than one line: $(cat "$tmp/err")"
"$py" "$root/slurm/ovb-suite" run --preset h100-single --backend host --build "$build" \
  --out "$tmp/out" >/dev/null 2>"$tmp/err"
[ $? = 2 ] || fail "the host backend did not exit 2"
grep -q "preset h100-single runs on the cuda backend, not host" "$tmp/err" || fail "message: $(cat "$tmp/err")"

mkdir -p "$tmp/out/trace"
cp "$result" "$tmp/out/gpt4d_1.3B.json"
cp "$golden" "$tmp/out/trace/rank-00000.trace.json"
"$ovb_trace" analyze "$tmp/out/trace" --json "$tmp/out/trace/analysis.json" >/dev/null ||
  fail "ovb-trace analyze"
"$py" "$root/analysis/ovb-analysis" summarize h100-single "$tmp/out" >/dev/null || fail "summarize"
grep -q "^| gpt4d | host |" "$tmp/out/summary.md" || fail "no gpt4d row: $(head -20 "$tmp/out/summary.md")"
grep -q "^| gemm | 0.02 | 30.6 |" "$tmp/out/summary.md" || fail "no kernel breakdown row"
"$py" -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['headline'][0]['run']=='gpt4d'" \
  "$tmp/out/summary.json" || fail "summary.json"
echo "preset_h100_single: ok"
