#!/bin/sh
# Runs a command that must fail: exit status not 0 and its output must contain PATTERN (grep -E).
# Usage: expect_error.sh PATTERN command [args...]
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
  printf 'expected a failure, got exit 0; output:\n%s\n' "$out"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
  printf 'exit %s but the output lacks /%s/:\n%s\n' "$rc" "$pattern" "$out"
  exit 1
fi
printf 'rejected as expected (exit %s): %s\n' "$rc" "$(printf '%s\n' "$out" | grep -E -- "$pattern" | head -n 1)"
