#!/bin/sh
# Runs a command that must end by itself, with a non-zero exit status, within MAX_S seconds, and
# print a line matching PATTERN (grep -E). For the collective watchdog's test (a job whose
# collective hangs must be ended by OVB_COMM_TIMEOUT_S, not by a limit from outside): the command
# is killed after MAX_S + 30 s, which counts as a failure of the test.
# Usage: expect_fail_within.sh MAX_S PATTERN command [args...]
#   OVB_COMM_TIMEOUT_S=2 core/tests/expect_fail_within.sh 30 'collective watchdog: ' \
#       mpirun -np 2 build/host/core/tests/ovb-core-watchdog-hang --skip-rank 1
max_s=$1
pattern=$2
shift 2
start=$(date +%s.%N)
out=$(timeout -k 5 $((max_s + 30)) "$@" 2>&1)
rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
fail() {
  printf '%s (exit %s after %s s); output:\n%s\n' "$1" "$rc" "$elapsed" "$out"
  exit 1
}
[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && fail "still running after $((max_s + 30)) s: killed"
[ "$rc" -eq 0 ] && fail "expected a failure, got exit 0"
awk -v e="$elapsed" -v m="$max_s" 'BEGIN { exit !(e <= m) }' || fail "ended, but later than $max_s s"
printf '%s\n' "$out" | grep -Eq -- "$pattern" || fail "the output lacks /$pattern/"
printf 'ended as expected (exit %s after %s s): %s\n' "$rc" "$elapsed" \
  "$(printf '%s\n' "$out" | grep -E -- "$pattern" | head -n 1)"
