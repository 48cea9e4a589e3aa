#!/bin/sh
# ovb-trace on bad input: exactly one line naming the problem, a non-zero status (2 for bad input,
# 1 for a failure to write), never a crash or a hang.
# Usage: cli_errors.sh OVB_TRACE WORK_DIR GOLDEN_DIR
set -u
T=$1
D=$2
G=$3
rm -rf "$D"
mkdir -p "$D/empty"
fail=0

# expect STATUS PATTERN command...: the status, the pattern in the output, one line on failure.
expect() {
  want=$1
  pattern=$2
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  lines=$(printf '%s\n' "$out" | wc -l)
  if [ "$rc" -ne "$want" ] || ! printf '%s' "$out" | grep -q -e "$pattern" ||
    { [ "$want" -ne 0 ] && [ "$lines" -ne 1 ]; }; then
    echo "FAIL: $* -> status $rc (want $want, pattern '$pattern'), output:"
    printf '%s\n' "$out"
    fail=1
  else
    echo "ok ($rc): $*"
  fi
}

head -c 300 "$G/kineto_two_streams.json" >"$D/truncated.json"
printf 'not json at all' >"$D/garbage.json"
printf '{"foo": 1}' >"$D/notrace.json"
cp "$G/suite_host_rank1.json" "$D/copy.json"
printf '[]' >"$D/no_events.json"
printf '\177ELF\002\001\001\000\000' >"$D/binary.json"
# Two all-reduces on two streams at once over the whole span: communication is 200 % of the span.
printf '%s\n' '{"traceEvents": [' \
  '{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7, "ts": 0, "dur": 100},' \
  '{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 8, "ts": 0, "dur": 100}' \
  ']}' >"$D/two_comm_streams.json"

expect 2 "cannot read trace" "$T" analyze "$D/missing.json"
expect 2 "truncated.json': malformed JSON at byte 301" "$T" analyze "$D/truncated.json"
expect 2 "malformed JSON at byte 2" "$T" analyze "$D/garbage.json"
expect 2 'no "traceEvents" array' "$T" analyze "$D/notrace.json"
expect 2 "no_events.json' has no trace events" "$T" analyze "$D/no_events.json"
expect 2 "binary.json' is not a Chrome trace (JSON text): it starts with byte 0x7f, binary data" \
  "$T" analyze "$D/binary.json"
expect 2 "unknown subcommand 'analyse'" "$T" analyse "$D/copy.json"
expect 2 "both of rank 1" "$T" analyze "$G/suite_host_rank1.json" "$D/copy.json"
expect 2 "has no \*.json trace files" "$T" analyze "$D/empty"
expect 2 "traces is required" "$T" analyze
expect 2 "bogus" "$T" analyze "$G/array_form.json" --bogus
expect 2 "subcommand" "$T"
expect 2 "out is required" "$T" merge "$G/array_form.json"
expect 1 "cannot" "$T" analyze "$G/array_form.json" --json "$D/garbage.json/sub/a.json"
expect 0 "overlap%" "$T" analyze "$G/kineto_two_streams.json" "$G/suite_host_rank1.json"
# The kernel table's "% span" is defined where it is printed (it can pass 100 with several streams).
expect 0 "% span: the category's summed kernel time over the traced span_us" \
  "$T" analyze "$G/kineto_two_streams.json"
expect 0 "communication  *2  *200.0  *100.0  *200.0" "$T" analyze "$D/two_comm_streams.json"
expect 0 "above 100 where its kernels ran on several streams at once" \
  "$T" analyze "$D/two_comm_streams.json"
expect 0 "merged 2 ranks" "$T" merge "$G/kineto_two_streams.json" "$G/suite_host_rank1.json" \
  -o "$D/merged.json"
expect 0 "overlap%" "$T" analyze "$D/merged.json"
# A predicted trace (ovb-model explain --timeline's ovbTracer) beside a measured rank 0 is merged;
# two predicted traces of rank 0 are refused, naming the source.
printf '%s\n' '{"distributedInfo": {"rank": 0}, "ovbTracer": {"mode": "predicted"},' \
  '"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 0, "ts": 0,' \
  '"dur": 10}]}' >"$D/predicted.json"
cp "$D/predicted.json" "$D/predicted2.json"
expect 0 "merged 1 rank and 1 predicted" "$T" merge "$G/kineto_two_streams.json" \
  "$D/predicted.json" -o "$D/side.json"
expect 2 "are both predicted traces of rank 0" "$T" merge "$D/predicted.json" \
  "$D/predicted2.json" "$G/kineto_two_streams.json" -o "$D/side2.json"
exit $fail
