# shellcheck shell=bash
# shellcheck disable=SC2154  # start, limit, out, log and only are the caller's (below)
# slurm/lib/call-steps.sh: the steps of a one-call GPU script whose steps are command lines
# (gpu-fine-overlap.sh, gpu-torch-kernels.sh). Sourced after slurm/lib/pack.sh. The caller sets
# start (the call's start, epoch seconds), limit (seconds the call may take), out (the results
# folder, absolute), log (its log file) and only (",STEP,STEP," or empty: every step), and
# defines cmd_of STEP (the step's command line).
#   call_note TEXT...        one line to the terminal and the log, with the seconds since the start
#   call_selected STEP       true when --only names STEP or is empty
#   call_print_steps STEP... each selected step as "STEP: COMMAND" (the dry run)
#   call_begin [CLEANUP]     nvidia-smi's report into out/nvidia-smi.txt, then its clocks, power,
#                            temperature and throttle reasons every second into out/telemetry.csv,
#                            and the archive kept (pack_start); at exit the caller's CLEANUP
#                            function, the sampling stopped and the archive closed
#   call_run_steps STEP...   each selected step in turn, stopped by timeout 15 s before the call's
#                            end (one that would start with less than 20 s left stays pending):
#                            its command and output in out/logs/STEP.log, a line of
#                            out/steps.tsv (step, exit status, seconds), the archive renewed after
#                            it; returns 1 when a step failed
call_telemetry=""
call_note() {
  echo "$(basename "$0" .sh): $* ($(($(date +%s) - start)) s since the start)" | tee -a "$log"
}
call_selected() { [ -z "$only" ] || [[ $only == *",$1,"* ]]; }
call_print_steps() {
  local s
  for s in "$@"; do
    call_selected "$s" || continue
    echo "$s: $(cmd_of "$s")"
  done
}
call_cleanup=""
call_begin() {
  call_cleanup=${1:-}
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  local q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
  nvidia-smi --query-gpu="$q,clocks_throttle_reasons.active" --format=csv -l 1 \
    > "$out/telemetry.csv" 2>/dev/null &
  call_telemetry=$!
  trap call_end EXIT
  pack_start "$out" own-trap
}
# shellcheck disable=SC2317  # called by the EXIT trap
call_end() {
  [ -z "$call_cleanup" ] || "$call_cleanup"
  [ -z "$call_telemetry" ] || kill "$call_telemetry" 2>/dev/null
  call_telemetry=""
  pack_stop
}
call_run_steps() {
  local s left t0 c src rc=0
  mkdir -p "$out/logs"
  printf 'step\texit\tseconds\n' > "$out/steps.tsv"
  for s in "$@"; do
    call_selected "$s" || continue
    left=$((start + limit - 15 - $(date +%s)))
    if [ "$left" -lt 20 ]; then
      call_note "$s: not started, ${left} s left"
      printf '%s\tpending\t0\n' "$s" >> "$out/steps.tsv"
      continue
    fi
    t0=$(date +%s)
    c=$(cmd_of "$s")
    echo "$c" > "$out/logs/$s.log"
    src=0
    timeout -k 5 "$left" bash -c "$c" >> "$out/logs/$s.log" 2>&1 || src=$?
    printf '%s\t%s\t%s\n' "$s" "$src" "$(($(date +%s) - t0))" >> "$out/steps.tsv"
    call_note "$s: exit status $src in $(($(date +%s) - t0)) s"
    [ "$src" = 0 ] || { rc=1; tail -5 "$out/logs/$s.log" | tee -a "$log"; }
    pack_now
  done
  return "$rc"
}
