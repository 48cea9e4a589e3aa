#!/usr/bin/env bash
# The model against this folder's measurements, reproduced: writes beside this script
#   model-gemm.txt, model-gemm-2ranks.txt  ovb-model gemm --measured (the chunk GEMMs, 1 and 2 ranks)
#   compare-mem-{before,after}.txt         the committed H100 model check (results/h100/model)
#                                          with its calibration as committed, then with --mem membw.json
# Usage: results/h100/fine-overlap/model-checks.sh [BUILD_DIR (default build/host)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
model=${1:-$root/build/host}/analysis/model/ovb-model
[ -x "$model" ] || { echo "model-checks.sh: error: no ovb-model at $model (build it first)" >&2; exit 2; }
mb=$root/results/h100/model/microbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$model" gemm --machine dgx-h100 --measured "$here/decomp-1rank.json" > "$tmp/model-gemm.txt"
"$model" gemm --machine dgx-h100 --measured "$here/decomp-2ranks.json" > "$tmp/model-gemm-2ranks.txt"
gemms=()
for f in "$mb"/gemm-*.json; do gemms+=(--gemm "$f"); done
calibrate=("$model" calibrate --base generic-h100-8nic --name pipeline-cuda
           --collective "$mb/collective.json@2x2x1x1" "${gemms[@]}" --overlap "$mb/overlap.json")
"${calibrate[@]}" --out "$tmp/before.json" > /dev/null
"${calibrate[@]}" --mem "$here/membw.json" --out "$tmp/after.json" > /dev/null
for v in before after; do
  "$model" compare --machine "$tmp/$v.json" "$root/results/h100/model/gpt4d" > "$tmp/compare-mem-$v.txt" 2>&1
done
for f in model-gemm.txt model-gemm-2ranks.txt compare-mem-before.txt compare-mem-after.txt; do
  sed "s|$root/||g" "$tmp/$f" > "$tmp/$f.rel" && mv "$tmp/$f.rel" "$here/$f"
done
echo "wrote model-gemm.txt model-gemm-2ranks.txt compare-mem-before.txt compare-mem-after.txt in $here"
