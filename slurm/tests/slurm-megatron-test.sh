#!/usr/bin/env bash
# slurm/tests/slurm-megatron-test.sh: slurm/megatron.sbatch on the local Slurm. Without MEGATRON_PATH
# the job fails at once with a clear message. With a stand-in checkout (a pretrain_gpt.py that
# prints Megatron-LM's iteration lines) and a stand-in torchrun, the job generates the matched
# launch through `ovb-analysis megatron-cmd`, runs it with srun in the allocation and leaves a run
# folder (megatron_config.json + log) that `ovb-analysis megatron-log` parses. The real Megatron-LM
# needs GPUs and PyTorch: see slurm/README.md.
# Usage: slurm/tests/slurm-megatron-test.sh BUILD_DIR       (ctest: slurm_megatron_job)
set -euo pipefail
BUILD=$(cd "${1:?usage: slurm-megatron-test.sh BUILD_DIR}" && pwd)
# shellcheck source=slurm/tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_slurm
new_workdir megatron
args=(--layers 2 --hidden 64 --heads 4 --seq 32 --vocab 256 --global-batch 4 --iters 3 --local)

# 1. No MEGATRON_PATH: one clear line, the job fails.
id=$(env -u MEGATRON_PATH "$ROOT/slurm/submit" "$ROOT/slurm/megatron.sbatch" "${args[@]}")
id=${id%%;*}
wait_job "$id" 120
[ "$(job_field "$id" JobState)" = FAILED ] || fail "job $id without MEGATRON_PATH did not fail"
grep -q "ovb-megatron: error: MEGATRON_PATH is not set" "$WORK/job-$id.out" ||
  { show_job_output "$id"; fail "no clear error without MEGATRON_PATH"; }

# 2. Stand-ins for a Megatron-LM checkout and torchrun.
mkdir -p "$WORK/megatron" "$WORK/bin"
cat >"$WORK/megatron/pretrain_gpt.py" <<'EOF2'
"""Stand-in for Megatron-LM's pretrain_gpt.py: prints its iteration log lines."""
import sys
a = sys.argv[1:]
iters, gb = int(a[a.index("--train-iters") + 1]), int(a[a.index("--global-batch-size") + 1])
for i in range(1, iters + 1):
    print(f" [2026-11-22 10:20:1{i}.576187] iteration {i:8d}/{iters:8d} | consumed samples: "
          f"{i * gb:12d} | elapsed time per iteration (ms): 395.4 | throughput per GPU (TFLOP/s/GPU):"
          f" 175.5 | learning rate: 1.000000E-05 | global batch size: {gb:5d} | lm loss: "
          "5.031966E+00 | loss scale: 1.0 | grad norm: 19.815 | number of skipped iterations:   0 |"
          " number of nan iterations:   0 |", flush=True)
EOF2
cat >"$WORK/bin/torchrun" <<'EOF2'
#!/bin/sh
# Stand-in torchrun: runs the training script once with its arguments.
while [ $# -gt 0 ]; do case "$1" in *.py) break ;; esac; shift; done
exec python3 "$@"
EOF2
chmod +x "$WORK/bin/torchrun"
cat >>"$WORK/site.sh" <<EOF2
export MEGATRON_PATH=$WORK/megatron PATH=$WORK/bin:\$PATH OVB_GPUS_PER_NODE=1 OVB_OUT=$WORK/results
EOF2
id=$(submit "$ROOT/slurm/megatron.sbatch" "${args[@]}")
wait_job "$id" 300
show_job_output "$id"
[ "$(job_field "$id" JobState)" = COMPLETED ] || fail "megatron job $id did not complete"
run=$WORK/results/megatron/megatron-run
[ -f "$run/megatron_config.json" ] || fail "no megatron_config.json in $run"
log=$run/megatron-$id.log
[ -f "$log" ] || fail "no $log"
n=$("$PY" "$ROOT/analysis/ovb-analysis" megatron-log "$log" --json |
    "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" = 3 ] || fail "megatron-log parsed $n iterations, 3 expected"
say "PASS: megatron.sbatch without MEGATRON_PATH fails clearly; with one, leaves a parsable run"
