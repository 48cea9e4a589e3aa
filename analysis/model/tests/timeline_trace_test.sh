#!/usr/bin/env bash
# ovb-model explain --timeline: the predicted iteration as a trace, read back by ovb-trace analyze,
# which must report the model's own terms - compute (+ interference) and exposed communication,
# the span the iteration, no idle time - to the rounding of the format's unit (1 ns per interval
# edge), over overlap flags, micro-steps, recomputation, sharding and interference; "-" writes the
# trace alone to stdout; both --json and --timeline on stdout is refused in one line.
# Usage: timeline_trace_test.sh OVB_MODEL OVB_TRACE PYTHON WORK_DIR   (ctest model.timeline_trace)
set -u
model=$1 trace=$2 py=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Compares the trace's context (the model's terms) with ovb-trace analyze's rank 0.
check() {
  "$py" - "$1" "$2" <<'PY' || return 1
import json, sys
trace, analysis = (json.load(open(p)) for p in sys.argv[1:3])
pred = trace["context"]["prediction"]
r = analysis["ranks"][0]
# Each interval's two edges are rounded to whole ns: a union moves by at most 1 ns per interval.
tol = 1e-3 * len(trace["traceEvents"])
want = {"compute_us": 1e3 * (pred["compute_ms"] + pred["interference_ms"]),
        "exposed_comm_us": 1e3 * pred["exposed_comm_ms"],
        "span_us": 1e3 * pred["predicted_ms"], "idle_us": 0.0}
bad = [f"{k}: trace {r[k]!r} != model {v!r} (tol {tol})" for k, v in want.items()
       if abs(r[k] - v) > tol]
if analysis["summary"]["ranks"] != 1 or r["comm_us"] <= 0:
    bad.append(f"ranks {analysis['summary']['ranks']}, comm_us {r['comm_us']}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"ok: compute {r['compute_us']:.3f} us, exposed {r['exposed_comm_us']:.3f} us "
      f"of comm {r['comm_us']:.3f} us, span {r['span_us']:.3f} us ({tol:.3f} us tolerance)")
PY
}

i=0
while read -r grid extra; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # the extra options are words
  if ! "$model" explain "$grid" --preset 1.3B --batch 16 $extra \
      --timeline "$work/t$i.trace.json" > "$work/t$i.out" 2>&1; then
    fail "explain $grid $extra: $(tail -1 "$work/t$i.out")"; continue
  fi
  if ! "$trace" analyze "$work/t$i.trace.json" --json "$work/t$i.analysis.json" \
      > "$work/t$i.analyze.out" 2>&1; then
    fail "analyze of $grid $extra: $(tail -1 "$work/t$i.analyze.out")"; continue
  fi
  check "$work/t$i.trace.json" "$work/t$i.analysis.json" || fail "$grid $extra"
done <<'CASES'
2x2x2x1 --machine generic-h100-8nic --overlap none
2x2x2x1 --machine generic-h100-8nic --overlap all
2x2x1x2:y,x,z --machine perlmutter-a100 --overlap oar,ors --shard-optimizer
1x2x2x2 --machine perlmutter-a100 --overlap all --micro-batch 2 --recompute
1x1x2x4 --machine generic-h100-8nic --overlap all --micro-batch 1 --shard-optimizer --shard-gradients
CASES

# The block ranges in time order name what gpt4d's ranges name: per micro-step layer0..L-1, the LM
# head, its backward, the blocks' backward from the last; t1 (1.3B: 24 layers, no micro-steps)
# and t4 (--micro-batch 2 of batch 16 over Gz x Gdata = 4: 2 micro-steps); none in the step.
for t in 1:1 4:2; do
  "$py" - "$work/t${t%%:*}.trace.json" "${t##*:}" 24 <<'PY' || fail "block ranges of t${t%%:*}"
import json, sys
d = json.load(open(sys.argv[1]))
steps, layers = int(sys.argv[2]), int(sys.argv[3])
got = [e["name"] for e in sorted((e for e in d["traceEvents"] if e.get("ph") == "X"
                                  and e.get("tid") == 1000002), key=lambda e: e["ts"])]
one = ([f"layer{i}" for i in range(layers)] + ["head", "head backward"]
       + [f"layer{i} backward" for i in reversed(range(layers))])
if got != one * steps:
    print(f"block ranges: {got[:30]} ... ({len(got)}), want {steps} x {one[:4]} ... ({len(one)})")
    sys.exit(1)
PY
done

# "-": the trace alone on stdout, a valid JSON document.
if "$model" explain 2x2x2x1 --machine generic-h100-8nic --preset 1.3B --batch 16 --overlap all \
    --timeline - > "$work/stdout.json" 2> "$work/stdout.err"; then
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['traceEvents']" \
    "$work/stdout.json" || fail "--timeline -: stdout is not the trace alone"
else
  fail "--timeline -: $(tail -1 "$work/stdout.err")"
fi
# Both on stdout: one line, non-zero.
if "$model" explain 2x2x2x1 --machine generic-h100-8nic --preset 1.3B --batch 16 --json - \
    --timeline - > "$work/both.out" 2> "$work/both.err"; then
  fail "--json - --timeline - accepted"
elif [ "$(wc -l < "$work/both.err")" -ne 1 ] || ! grep -q "standard output" "$work/both.err"; then
  fail "--json - --timeline -: not one line naming the problem: $(cat "$work/both.err")"
fi
# A folder as the file: one line, non-zero.
if "$model" explain 2x2x2x1 --machine generic-h100-8nic --preset 1.3B --batch 16 \
    --timeline "$work" > "$work/dir.out" 2> "$work/dir.err"; then
  fail "--timeline FOLDER accepted"
fi

[ "$fails" -eq 0 ] && echo "timeline_trace_test: all passed" || echo "timeline_trace_test: $fails failed"
[ "$fails" -eq 0 ]
