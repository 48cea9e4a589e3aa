#!/usr/bin/env bash
# The search's speed of two builds, back to back on one machine (results/model/README.md): the
# Google Benchmark cases BM_Search/gpt175B_65536gpus and BM_Predict (5 repetitions, medians and
# stddev), then the whole `--tp-chunks auto` search of 13B on 64 A100s, 5 runs of each build in
# turn, user and system CPU and wall seconds of each run (/usr/bin/time).
#   results/model/search-speed-compare.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [OUT_DIR]
# Each build dir holds analysis/model/ovb-model and ovb-model-bench (e.g. build/host).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BEFORE_BUILD_DIR AFTER_BUILD_DIR [OUT_DIR]" >&2
  exit 2
fi
before=$1 after=$2 out=${3:-search-speed-compare}
for b in "$before" "$after"; do
  for t in ovb-model ovb-model-bench; do
    if [[ ! -x $b/analysis/model/$t ]]; then
      echo "$0: no $b/analysis/model/$t (build it first)" >&2
      exit 2
    fi
  done
done
if [[ ! -x /usr/bin/time ]]; then
  echo "$0: /usr/bin/time is missing (Debian: apt-get install time)" >&2
  exit 2
fi
mkdir -p "$out"

search=(search --machine perlmutter-a100 --preset 13B --gpus 64 --batch 128 --overlap all
        --recompute --micro-batch auto --tp-chunks auto --top 1)
{
  echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for name in before after; do
    dir=$before
    [[ $name == after ]] && dir=$after
    echo "## ovb-model-bench, $name ($dir)"
    "$dir/analysis/model/ovb-model-bench" \
      --benchmark_filter='BM_Search/gpt175B_65536gpus$|BM_Predict' --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true 2>&1 | grep -E '_(median|stddev) '
  done
  echo "## ${search[*]}: build user_s sys_s wall_s, in turn"
  for _ in 1 2 3 4 5; do
    for name in before after; do
      dir=$before
      [[ $name == after ]] && dir=$after
      /usr/bin/time -f "$name %U %S %e" -o "$out/time.tmp" "$dir/analysis/model/ovb-model" \
        "${search[@]}" >/dev/null
      cat "$out/time.tmp"
    done
  done
  rm -f "$out/time.tmp"
  echo "# end, load $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/compare.txt.tmp"
mv "$out/compare.txt.tmp" "$out/compare.txt"
echo "$0: wrote $out/compare.txt"
