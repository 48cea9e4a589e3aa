#!/usr/bin/env bash
# The model's end-to-end check on the host backend: `ovb-suite run --preset model-pipeline` (4
# ranks, a tiny GPT, 6 gpt4d configurations) into a fresh folder. It fails when a step fails or a
# result lacks what compare needs, when gpt4d's collectives differ from the plan the model costs
# (compare's warnings), or when compare did not pair the traced run with its trace analysis (the
# summary step's checks); the numbers mean little on the host, the plumbing is what is tested.
# Usage: host_pipeline.sh REPO_ROOT BUILD_DIR OUT_DIR       (ctest: model.host_pipeline)
set -u
root=$1 build=$2 out=$3
py=${OVB_PYTHON:-python3}
fail() { echo "host_pipeline: FAILED: $*" >&2; exit 1; }
rm -rf "$out"  # a rerun must not compare stale results
env -u SLURM_JOB_ID -u SLURM_NTASKS OVB_LAUNCHER=mpirun "$py" "$root/slurm/ovb-suite" run \
  --preset model-pipeline --backend host --build "$build" --out "$out" --param ranks=4 \
  --param configs=6 --param shape=tiny --heartbeat 60 || fail "ovb-suite exited $? (see $out/suite-status.md)"
"$py" - "$out" <<'PY' || fail "the folder lacks what the pipeline must produce"
import json, os, sys
out = sys.argv[1]
cmp = json.load(open(os.path.join(out, "model", "compare.json")))
assert not cmp["warnings"], cmp["warnings"]
paired = [c for c in cmp["configs"] if "trace" in c]
assert paired and paired[0]["trace"]["terms"], "traced run not paired"
assert len(cmp["configs"]) == 6, len(cmp["configs"])
PY
grep -q "Spearman rank correlation" "$out/summary.md" || fail "summary.md: $(head -5 "$out/summary.md")"
echo "host_pipeline: PASSED ($out)"
