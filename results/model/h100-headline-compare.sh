#!/usr/bin/env bash
# The model against the suite's own trainer on one H100: gpt4d's 1.3B headline run of the GPU check
# (results/h100/gpu-check/headline/, 20 timed iterations, NVML telemetry: the GPU at its power cap)
# predicted with the dgx-h100 preset (its measured GEMM table). Writes beside this script
# h100-headline-compare.txt (the table) and h100-headline-compare.json (results/SCHEMA.md, compare).
# Usage: results/model/h100-headline-compare.sh [BUILD_DIR (default build/host)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
model=${1:-$root/build/host}/analysis/model/ovb-model
[ -x "$model" ] || { echo "h100-headline-compare.sh: error: no ovb-model at $model" >&2; exit 2; }
tmp=$(mktemp)
tmpj=$(mktemp)
trap 'rm -f "$tmp" "$tmpj"' EXIT
(cd "$root" && "$model" compare results/h100/gpu-check/headline/gpt4d_1.3B.json \
  --machine dgx-h100 --json "$tmpj") | grep -v '^wrote ' > "$tmp"
mv "$tmp" "$here/h100-headline-compare.txt"
mv "$tmpj" "$here/h100-headline-compare.json"
trap - EXIT
