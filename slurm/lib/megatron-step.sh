#!/usr/bin/env bash
# slurm/lib/megatron-step.sh: the step that slurm/megatron.sbatch runs (through ovb-suite exec):
# generates the Megatron-LM launch for this allocation with `ovb-analysis megatron-cmd --sbatch`
# (validated before anything starts) and runs that script here - its srun starts one torchrun
# per node - with the log written to RUN_DIR/megatron-JOBID.log next to megatron_config.json.
# Usage (inside a Slurm job): megatron-step.sh RUN_DIR [megatron-cmd arguments...]
set -euo pipefail
run_dir=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py=${OVB_PYTHON:-$root/.venv/bin/python}
[ -x "$py" ] || py=python3
: "${SLURM_JOB_ID:?megatron-step.sh runs inside a Slurm job}"
nodes=${SLURM_NNODES:-1}
gpn=${OVB_GPUS_PER_NODE:-${SLURM_GPUS_ON_NODE:-}}
if [ -z "$gpn" ]; then
  gpn=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
[ "${gpn:-0}" -ge 1 ] ||
  { echo "megatron-step: error: no GPU visible (set OVB_GPUS_PER_NODE or request GPUs)" >&2; exit 2; }
extra=()
case " $* " in *" --gpus "*|*" --gpus="*) ;; *) extra+=(--gpus "$((nodes * gpn))") ;; esac
case " $* " in *" --nodes "*|*" --nodes="*) ;; *) extra+=(--nodes "$nodes") ;; esac
case " $* " in *" --gpus-per-node"*) ;; *) extra+=(--gpus-per-node "$gpn") ;; esac
mkdir -p "$run_dir"
"$py" "$root/analysis/ovb-analysis" megatron-cmd "$@" "${extra[@]}" \
  --sbatch "$run_dir/megatron.sbatch" --run-dir "$run_dir" --megatron-path "$MEGATRON_PATH"
# The generated script is an sbatch script; run here, it uses this job's nodes.
bash "$run_dir/megatron.sbatch" 2>&1 | tee "$run_dir/megatron-$SLURM_JOB_ID.log"
