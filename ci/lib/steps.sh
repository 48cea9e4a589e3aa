# ci/lib/steps.sh: sourced (never run) by the GPU batch scripts - microbench/gpu/run.sh,
# endtoend/gpu/run.sh, profiling/gpu/run.sh, results/h100/run.sh, results/h100/multirank.sh - so
# that they take their arguments and run their steps the same way.
#
#   ovb_script_args "$@"
#       -h/--help prints the script's header comment (from line 2 to the first line that is not a
#       comment) and exits 0; any
#       other count than two arguments prints it to stderr and exits 2. Sets `build` (BUILD_DIR,
#       absolute; must exist) and `out` (OUT_DIR, absolute, created with out/logs). Scripts that
#       take more arguments call ovb_dirs themselves.
#   ovb_dirs BUILD_DIR OUT_DIR      sets `build` and `out` as above (exit 2 on a bad folder)
#   step NAME LIMIT_S COMMAND...
#       runs COMMAND under `timeout`, output in out/logs/NAME.log, and records a row of the step
#       table (results[]); a failure sets failed=1 and shows the log's last lines. With `budget`
#       set (seconds from `start_all`), the limit is cut to what is left and a step that would
#       start with less than 15 s left is skipped. Returns the command's status (124: timeout,
#       125: skipped).
#   steps_table                      prints the step table (markdown)
# shellcheck shell=bash

ovb_script=$(basename "$0")
start_all=$(date +%s)
budget=
declare -a results=()
failed=0

ovb_help() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

ovb_dirs() {
  build=$(cd "$1" 2>/dev/null && pwd) || {
    echo "$ovb_script: error: no build folder '$1'" >&2
    exit 2
  }
  mkdir -p "$2/logs" || { echo "$ovb_script: error: cannot create $2" >&2; exit 2; }
  out=$(cd "$2" && pwd)
}

ovb_script_args() {
  case "${1:-}" in -h | --help) ovb_help; exit 0 ;; esac
  if [ $# -ne 2 ]; then
    ovb_help >&2
    exit 2
  fi
  ovb_dirs "$1" "$2"
}

step() {
  local name=$1 limit=$2
  shift 2
  local t0 rc dt left why
  t0=$(date +%s)
  if [ -n "$budget" ]; then
    left=$((start_all + budget - t0))
    if [ "$left" -lt 15 ]; then
      results+=("| $name | SKIPPED (time budget) | 0s |")
      echo "==== $name: skipped, ${left}s of the budget left"
      failed=1
      return 125
    fi
    [ "$limit" -gt "$left" ] && limit=$left
  fi
  echo "==== $name (limit ${limit}s): $*"
  timeout --kill-after=15 "$limit" "$@" >"$out/logs/$name.log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t0))
  if [ "$rc" = 0 ]; then
    results+=("| $name | ok | ${dt}s |")
    echo "     ok (${dt}s)"
  else
    why=$rc
    [ "$rc" = 124 ] && why="timeout after ${limit}s"
    results+=("| $name | FAILED ($why) | ${dt}s |")
    failed=1
    echo "     FAILED ($why, ${dt}s); last lines of logs/$name.log:"
    tail -n 8 "$out/logs/$name.log" | sed 's/^/     | /'
  fi
  return "$rc"
}

steps_table() {
  echo "| step | result | time |"
  echo "|---|---|---|"
  printf '%s\n' "${results[@]}"
}
