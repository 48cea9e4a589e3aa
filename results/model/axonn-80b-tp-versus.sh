#!/usr/bin/env bash
# AxoNN's 80B GPT on 1024 GPUs (batch 1024, full recomputation, the three overlaps), as the model
# sees it, reproduced: writes beside this script axonn-80b-tp-versus.txt with
#   - the best 4D configurations without and with --overlap tp (chunk count chosen), on Perlmutter
#     A100 and on DGX H100: what tensor-parallel chunking is predicted to save at 1024 GPUs;
#   - versus against Megatron-LM of the 2022 era (tp across nodes), without and with full
#     recomputation, and against today's Megatron-Core.
# Usage: results/model/axonn-80b-tp-versus.sh [BUILD_DIR (default build/host)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
model=${1:-$root/build/host}/analysis/model/ovb-model
[ -x "$model" ] || { echo "axonn-80b-tp-versus.sh: error: no ovb-model at $model" >&2; exit 2; }
# AxoNN's layers are Megatron-LM's: bias + GELU and bias-dropout-add as kernels of their own, not
# gpt4d's fused epilogues (the presets' gpu.fused_epilogues): --epilogues separate.
shape=(--layers 42 --hidden 12288 --heads 96 --seq 2048 --vocab 50304 --batch 1024 --gpus 1024 --recompute
       --epilogues separate)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  for mc in perlmutter-a100 dgx-h100; do
    for flags in "all" "all,tp --tp-chunks auto"; do
      echo "== search --machine $mc --overlap $flags"
      # shellcheck disable=SC2086  # the flags are words
      "$model" search --machine "$mc" "${shape[@]}" --overlap $flags --top 2
    done
  done
  versus=(versus --machine perlmutter-a100 "${shape[@]}" --overlap all --pow2 --top 1)
  for extra in "--megatron-era 2022 --megatron-tp-across-nodes" \
               "--megatron-era 2022 --megatron-tp-across-nodes --megatron-recompute full" \
               "--megatron-era core" \
               "--megatron-era core --megatron-tp-across-nodes"; do
    echo "== ${versus[*]} $extra"
    # shellcheck disable=SC2086
    "$model" "${versus[@]}" $extra || true  # "no Megatron configuration fits" is an answer
  done
} > "$tmp" 2>&1
mv "$tmp" "$here/axonn-80b-tp-versus.txt"
trap - EXIT
echo "wrote $here/axonn-80b-tp-versus.txt"
