#!/usr/bin/env bash
# slurm/gpu-torch-kernels.sh: the PyTorch reference's GPU kernels per category on one GPU, beside
# the model's terms, in one call with no build (PyTorch only). Each step runs
# endtoend/reference/pytorch_gpt.py (10 iterations, 3 of warm-up, then 2 traced by PyTorch's
# profiler) and writes OUT_DIR/STEP.json and OUT_DIR/STEP.trace.json.gz as it ends; most
# important first:
#   mc1.7b-cudnn   the Megatron-Core H100 table's smallest row, 1.7B, as one GPU runs it: 24 layers
#                  of hidden 2048 (16 heads), sequence 4096, vocabulary 131,072, the micro-batch the
#                  model picks (4 sequences; 2 on a GPU of less than 120 GiB), cuDNN's attention
#                  (Transformer Engine's on Hopper)
#   mc1.7b-cudnn-bf16  the same in bf16 without autocast (--precision bf16): the residual stream
#                  and norms in bf16 as Megatron-LM runs them, so that its elementwise kernels
#                  compare with the model's memory-bound passes
#   gpt1.3b-cudnn  the suite's 1.3B headline shape (sequence 2048, vocabulary 50,304, batch 4),
#                  cuDNN's attention: the same kernels at half the sequence
#   mc1.7b-flash   the 1.7B shape with FlashAttention (PyTorch's own)
#   gpt1.3b        the 1.3B shape with PyTorch's own choice (results/h100/side-by-side's run)
# The model's side needs the suite's host build and runs anywhere afterwards:
#   slurm/gpu-torch-kernels.sh OUT_DIR --analyze   (ovb-trace analyze of each trace, then
#   results/model/torch-kernels-compare.py of each step; OUT_DIR/summary.txt)
# Usage: slurm/gpu-torch-kernels.sh OUT_DIR [--dry-run] [--only STEP,...] [--analyze]
# Environment: OVB_CALL_LIMIT_S (600), OVB_PYTHON (python3, or the repository's .venv),
#   OVB_PACK (an archive of OUT_DIR, kept current), OVB_HOST_BUILD (build/host: --analyze's
#   ovb-trace and ovb-model).
# Output: OUT_DIR/STEP.json, STEP.trace.json.gz, logs/STEP.log, steps.tsv (step, exit status,
#   seconds), nvidia-smi.txt, telemetry.csv; --analyze: STEP.analysis.json, STEP.compare.json,
#   summary.txt.
set -uo pipefail
start=$(date +%s)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage="usage: gpu-torch-kernels.sh OUT_DIR [--dry-run] [--only STEP,...] [--analyze]"
die() { echo "gpu-torch-kernels.sh: error: $*" >&2; exit 2; }
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then die "$usage"; fi
out=$1
shift
dry=0 only="" analyze=0
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1 ;;
    --analyze) analyze=1 ;;
    --only) [ $# -ge 2 ] || die "--only needs a list of steps"; only=",$2,"; shift ;;
    *) die "unknown option '$1' ($usage)" ;;
  esac
  shift
done
# shellcheck source=slurm/lib/gpu-call-env.sh
source "$root/slurm/lib/gpu-call-env.sh"
# shellcheck source=slurm/lib/pack.sh
source "$root/slurm/lib/pack.sh"
# shellcheck source=slurm/lib/call-steps.sh
source "$root/slurm/lib/call-steps.sh"
gpu_call_env gpu-torch
steps=(mc1.7b-cudnn mc1.7b-cudnn-bf16 gpt1.3b-cudnn mc1.7b-flash gpt1.3b)
if [ -n "$only" ]; then
  for s in ${only//,/ }; do
    [[ " ${steps[*]} " == *" $s "* ]] || die "--only: no step '$s' (steps: ${steps[*]})"
  done
fi

# Sequences of the 1.7B shape: the model's micro-batch, 4, where it fits (about 90 GiB in
# PyTorch's fp32 weights and autocast), else 2.
mc_batch() {
  local mib
  mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
  if [[ $mib =~ ^[0-9]+$ ]] && [ "$mib" -ge $((120 * 1024)) ]; then echo 4; else echo 2; fi
}
cmd_of() {
  local ref="$py $root/endtoend/reference/pytorch_gpt.py" o=$out/$1 shape extra=""
  local common="--iters 10 --warmup 3 --trace-iters 2 --out $o.json --trace $o.trace.json.gz"
  case $1 in
    mc1.7b*) shape="--preset 1.3B --seq 4096 --vocab 131072 --batch \$OVB_MC_BATCH" ;;
    gpt1.3b*) shape="--preset 1.3B --batch 4" ;;
  esac
  case $1 in *-cudnn*) extra="--sdpa cudnn" ;; *-flash*) extra="--sdpa flash" ;; esac
  case $1 in *-bf16) extra="$extra --precision bf16" ;; esac
  echo "$ref $shape${extra:+ $extra} $common"
}

if [ "$analyze" = 1 ]; then
  host=${OVB_HOST_BUILD:-$root/build/host}
  for t in "$host/ovb-trace" "$host/analysis/model/ovb-model"; do
    [ -x "$t" ] || die "--analyze needs $t (cmake --preset host && cmake --build --preset host)"
  done
  [ -d "$out" ] || die "no folder $out"
  found=0 rc=0
  : > "$out/summary.txt.part"
  for s in "${steps[@]}"; do
    call_selected "$s" || continue
    if [ ! -f "$out/$s.json" ] || [ ! -f "$out/$s.trace.json.gz" ]; then continue; fi
    found=1
    if "$host/ovb-trace" analyze "$out/$s.trace.json.gz" --json "$out/$s.analysis.json" \
         --top 30 > "$out/$s.analysis.txt" &&
       "$py" "$root/results/model/torch-kernels-compare.py" "$out/$s.json" \
         "$out/$s.analysis.json" "$host/analysis/model/ovb-model" --json "$out/$s.compare.json" \
         > "$out/$s.compare.txt"; then
      { echo "## $s"; cat "$out/$s.compare.txt"; echo; } >> "$out/summary.txt.part"
    else
      rc=1
      echo "## $s: not analysed (see $s.analysis.txt, $s.compare.txt)" >> "$out/summary.txt.part"
    fi
  done
  [ "$found" = 1 ] || die "no step's result and trace in $out"
  # The runs side by side first (torch-kernels-compare.py --table), then each run's comparison.
  compared=()
  for s in "${steps[@]}"; do
    f=$out/$s.compare.json
    if call_selected "$s" && [ -f "$f" ]; then compared+=("$f"); fi
  done
  if [ ${#compared[@]} -gt 0 ]; then
    { "$py" "$root/results/model/torch-kernels-compare.py" --table "${compared[@]}"; echo
      cat "$out/summary.txt.part"; } > "$out/summary.txt.all"
    mv -f "$out/summary.txt.all" "$out/summary.txt.part"
  fi
  mv -f "$out/summary.txt.part" "$out/summary.txt"
  cat "$out/summary.txt"
  exit "$rc"
fi

if [ "$dry" = 1 ]; then
  echo "# no build; nvidia-smi sampled every second into $out/telemetry.csv; OVB_MC_BATCH is 4"
  echo "# on a GPU of 120 GiB or more, else 2; each step stopped by timeout at $((limit - 15)) s"
  echo "# after the start:"
  call_print_steps "${steps[@]}"
  exit 0
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu-torch-kernels.log
OVB_MC_BATCH=$(mc_batch)
export OVB_MC_BATCH
call_note "start: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), 1.7B shape at batch $OVB_MC_BATCH"
call_begin ""
rc=0
call_run_steps "${steps[@]}" || rc=1
call_note "done, exit status $rc"
exit "$rc"
