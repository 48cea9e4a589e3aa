#!/usr/bin/env bash
# ctest model.torch_kernels_compare: results/model/torch-kernels-compare.py end to end on the
# fixture run (analysis/tests/fixtures/torch_kernels: a Kineto trace of two iterations whose
# kernels, named as PyTorch's and cuDNN's on an H100, take 2000 us of GEMMs, 1000 of attention,
# 800 of AdamW, 400 elementwise and 40 of memset, 5 us apart): ovb-trace analyze classifies them,
# the script puts the model's terms beside them. Checks the per-iteration figures against those
# sums.
#   torch_kernels_test.sh OVB_TRACE OVB_MODEL PYTHON FIXTURE_DIR OUT_DIR
set -euo pipefail
trace=$1 model=$2 python=$3 fixtures=$4 out=$5
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../../results/model/torch-kernels-compare.py
rm -rf "$out" && mkdir -p "$out"
"$trace" analyze "$fixtures/trace.json" --json "$out/analysis.json" > "$out/analysis.txt"
"$python" "$script" "$fixtures/run.json" "$out/analysis.json" "$model" --json "$out/compare.json" \
  > "$out/compare.txt"
"$python" - "$out/compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = {"gemm": 1.0, "attention": 0.5, "optimizer": 0.4, "elementwise": 0.2, "memory": 0.02,
        "communication": 0.0}
got = d["measured_ms"]
bad = {k: (got[k], v) for k, v in want.items() if abs(got[k] - v) > 1e-9}
# 20 kernels back to back, 5 us apart: 19 gaps, 95 us idle, 4.75 us a kernel
gap = abs(d["idle_us_per_kernel"] - 4.75) > 1e-9 or d["kernels_per_iteration"] != 10
if bad or gap or d["machine"] != "dgx-h100" or not all(v > 0 for v in d["model_ms"].values()):
    sys.exit(f"torch_kernels_test: measured {got} (want {want}), machine {d['machine']}, "
             f"model {d['model_ms']}")
print("torch_kernels_test: ok")
PY
# A run without a trace is refused with exit status 2.
"$python" - "$fixtures/run.json" "$out/no-trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d.pop("trace"); json.dump(d, open(sys.argv[2], "w"))
PY
set +e
"$python" "$script" "$out/no-trace.json" "$out/analysis.json" "$model" 2> "$out/err.txt"
rc=$?
set -e
if [[ $rc -ne 2 ]] || ! grep -q "with a trace (--trace)" "$out/err.txt"; then
  echo "torch_kernels_test: a run without a trace: exit $rc, $(cat "$out/err.txt")" >&2
  exit 1
fi
# slurm/gpu-torch-kernels.sh --analyze on a results folder holding the fixture as its first step:
# the same figures in its summary, every other step absent and left out.
host=$(dirname "$trace")
if [[ $model != "$host/analysis/model/ovb-model" ]]; then
  echo "torch_kernels_test: $model is not in $host's layout; --analyze not checked"
  exit 0
fi
mkdir -p "$out/gpu"
cp "$fixtures/run.json" "$out/gpu/mc1.7b-cudnn.json"
gzip -c "$fixtures/trace.json" > "$out/gpu/mc1.7b-cudnn.trace.json.gz"
OVB_HOST_BUILD=$host OVB_PYTHON=$python "$here/../../../slurm/gpu-torch-kernels.sh" "$out/gpu" \
  --analyze > "$out/gpu/analyze.txt"
"$python" - "$out/gpu" <<'PY'
import json, sys
from pathlib import Path
d = Path(sys.argv[1])
summary = (d / "summary.txt").read_text()
got = json.loads((d / "mc1.7b-cudnn.compare.json").read_text())["measured_ms"]
if summary.count("## ") != 1 or "## mc1.7b-cudnn" not in summary or got["gemm"] != 1.0:
    sys.exit(f"torch_kernels_test: --analyze summary {summary!r}, gemm {got['gemm']}")
print("torch_kernels_test: --analyze ok")
PY
