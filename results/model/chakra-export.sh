#!/usr/bin/env bash
# The Chakra export figures of docs/chakra.md: `ovb-model export-chakra` of every rank of three
# 1024-GPU configurations (AxoNN's 80B GPT on Perlmutter, the model's validated grid and a 4D grid
# with every dimension split; GPT-175B on the 4D grid), each summary (ovb.json: nodes, bytes,
# seconds, compute in the model and in whole microseconds, the graph replays) kept as
# results/model/chakra/<name>.json, the traces removed.
# Usage: results/model/chakra-export.sh OVB_MODEL [SCRATCH_DIR]
set -euo pipefail
model=$1 scratch=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
common=(--machine perlmutter-a100 --batch 1024 --overlap all --recompute)
axonn80b=(--layers 42 --hidden 12288 --heads 96 --seq 2048 --vocab 50304)
run() {
  local name=$1; shift
  rm -rf "${scratch:?}/$name"
  "$model" export-chakra "$@" "${common[@]}" --out "$scratch/$name"
  cp "$scratch/$name/ovb.json" "$here/chakra/$name.json"
  du -sb "$scratch/$name" | cut -f1 | xargs -I{} echo "$name: {} bytes on disk"
  rm -rf "${scratch:?}/$name"
}
run 80B-1024-1x2x128x4 1x2x128x4:x,z,y "${axonn80b[@]}"
run 80B-1024-4x4x8x8 4x4x8x8 "${axonn80b[@]}"
run 175B-1024-4x4x8x8 4x4x8x8 --preset 175B
