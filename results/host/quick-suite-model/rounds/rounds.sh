#!/usr/bin/env bash
# The quick host suite run N times back to back (each run: 3 interleaved rounds of gpt4d), each
# compared twice on its own measurements: with all three rounds (what the suite reports) and with
# round 1 alone (the gpt4d/*.json without .round-R, what one round would have reported). Keeps
# each run's compare JSON (compare-qK.json, compare-qK-round1.json), the machine's load before and
# after each run (load.txt), and prints one line per run and the means.
# Usage: results/host/quick-suite-model/rounds/rounds.sh OUT_DIR [N=6] [BUILD=build/host]
set -euo pipefail
out=$1 n=${2:-6} build=${3:-build/host}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
model=$build/analysis/model/ovb-model
mkdir -p "$out"
: > "$out/load.txt"
for k in $(seq 1 "$n"); do
  run=$out/run-q$k
  if [ ! -s "$out/compare-q$k.json" ]; then  # a finished run is kept: rerunning resumes
    { echo "q$k start $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"; } >> "$out/load.txt"
    rm -rf "$run"
    t0=$(date +%s)
    "$repo/slurm/ovb-suite" run --out "$run" --backend host --build "$build" > "$run.log" 2>&1
    echo "q$k end   $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) wall $(( $(date +%s) - t0 )) s" >> "$out/load.txt"
    one=$run/round1
    mkdir -p "$one"
    find "$run/gpt4d" -maxdepth 1 -name '*.json' ! -name '*.round-*' -exec cp {} "$one/" \;
    "$model" compare "$one" --machine "$run/model/machine.json" --json "$out/compare-q$k-round1.json" >/dev/null
    cp "$run/model/compare.json" "$out/compare-q$k.tmp" && mv "$out/compare-q$k.tmp" "$out/compare-q$k.json"
  fi
done
python3 - "$out" "$n" <<'PY'
import json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
rows = {"3 rounds": [], "round 1 alone": []}
for k in range(1, n + 1):
    for label, name in (("3 rounds", f"compare-q{k}.json"), ("round 1 alone", f"compare-q{k}-round1.json")):
        d = json.load(open(os.path.join(out, name)))
        rows[label].append((d["mean_abs_error_pct"], d["spearman"], d.get("measured_split_half_spearman")))
        sh = d.get("measured_split_half_spearman")
        print(f"q{k} {label:14s} mean |error| {d['mean_abs_error_pct']:5.1f} %  Spearman {d['spearman']:.2f}"
              + (f"  measured vs itself {sh:.2f}" if sh is not None else ""))
for label, r in rows.items():
    e = [x[0] for x in r]; s = [x[1] for x in r]
    print(f"{label}: {len(r)} runs, mean |error| {min(e):.1f}-{max(e):.1f} % (mean {sum(e)/len(e):.1f} %), "
          f"Spearman {min(s):.2f}-{max(s):.2f} (mean {sum(s)/len(s):.2f})")
    h = [x[2] for x in r if x[2] is not None]
    if h:
        print(f"  measured vs itself (odd vs even rounds): {min(h):.2f}-{max(h):.2f} (mean {sum(h)/len(h):.2f})")
PY
