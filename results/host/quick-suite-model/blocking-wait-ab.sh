#!/usr/bin/env bash
# The blocking wait charged or not, on one quick-suite folder (same measurements both ways): the
# folder's own calibrate command (logs/model-calibrate.txt) without microbench/overlap-wait.json
# and with it, each followed by `ovb-model compare` of the folder's gpt4d runs. Prints both
# summaries; writes DIR/ab/{measured-only,charged}/{machine,compare}.json.
# Usage: results/host/quick-suite-model/blocking-wait-ab.sh DIR [OVB_MODEL]
set -euo pipefail
dir=$1 model=${2:-build/host/analysis/model/ovb-model}
wait_file=$dir/microbench/overlap-wait.json
[ -s "$wait_file" ] || { echo "blocking-wait-ab: $wait_file missing (a suite run before the blocking_wait scenario)" >&2; exit 2; }
# The logged command line, after "on HOST: ", minus its executable, --out and any wait file.
args=$(grep -m1 -o ' calibrate --base .*' "$dir/logs/model-calibrate.txt" |
       sed -e "s| --overlap $wait_file||" -e 's| --out [^ ]*||')
for variant in measured-only charged; do
  out=$dir/ab/$variant
  mkdir -p "$out"
  extra=()
  [ "$variant" = charged ] && extra=(--overlap "$wait_file")
  # shellcheck disable=SC2086  # args is the logged command line, split as it was run
  "$model" $args "${extra[@]}" --out "$out/machine.json" >/dev/null
  "$model" compare "$dir/gpt4d" --machine "$out/machine.json" --json "$out/compare.json" >/dev/null
  python3 - "$out/compare.json" "$variant" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("%s: mean |error| %.1f %%, Spearman %.2f" % (sys.argv[2], d["mean_abs_error_pct"], d["spearman"]))
PY
done
