#!/usr/bin/env bash
# Result files never replace what is not theirs (ctest model.json_stdout): `--json -` and
# `--json /dev/stdout` print the JSON alone on stdout (the table goes to stderr) and leave
# /dev/stdout what it was; a FIFO is written through.
# Usage: json_stdout_test.sh OVB_MODEL WORK_DIR
set -uo pipefail
model=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
parses() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['rows'] else 1)" "$1" ||
    fail "$1 is not the validation JSON: $(head -c 300 "$1")"
}

before=$(stat -c %F /dev/stdout)
for target in - /dev/stdout; do
  name=${target//\//_}
  if ! "$model" validate --json "$target" >"$work/$name.out" 2>"$work/$name.err"; then
    fail "validate --json $target exited non-zero: $(tail -n 3 "$work/$name.err")"
  fi
  parses "$work/$name.out"
  grep -q "within tolerance" "$work/$name.err" || fail "--json $target: the table is not on stderr"
done
after=$(stat -c %F /dev/stdout)
[ "$before" = "$after" ] || fail "/dev/stdout was a $before, is now a $after"
[ -e ./- ] && fail "--json - wrote a file named '-'"

mkfifo "$work/fifo"
timeout 30 cat "$work/fifo" >"$work/fifo.out" &  # ends even when nothing opens the FIFO
reader=$!
"$model" validate --json "$work/fifo" >"$work/fifo.log" 2>&1 || fail "--json FIFO: $(tail -n 3 "$work/fifo.log")"
wait "$reader"
[ -p "$work/fifo" ] || fail "the FIFO was replaced"
parses "$work/fifo.out"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "json_stdout_test: all checks passed"
