#!/usr/bin/env python3
"""What the Megatron-Core H100 rows of the validation file (group megatron-core-h100) predict for
each micro-batch, interleaving and recomputation the table does not publish: every row, every
virtual-stage count that divides its stages' layers, micro-batch 1, 2 and 4, no and full
recomputation pinned, as `ovb-model validate` prices a pinned configuration. The validation
itself lets the model pick its best that fits; this shows how far that choice moves the error.
For the rows without a pipeline it also prints the time the model's pick misses per token, layer
and hidden element of a GPU, beside what the model charges per the same for attention and for
the memory-bound passes (both grow with tokens x hidden per layer, as the miss would; a GEMM's
time per element grows with the hidden size), and, where tp > 1, what the miss would be with the
norms and bias-dropout-adds charged on 1/tp of the sequence as sequence parallelism runs them.

Usage: results/model/megatron-core-choices.py [--write | --check] [OVB_MODEL]
(default OVB_MODEL: build/host/analysis/model/ovb-model). Prints the table; --write also writes it
beside this script as megatron-core-choices.txt; --check exits 1 when that file is not today's
output (ctest model.megatron_core_choices).
"""

import json
import sys
import tempfile

import committed_output  # this folder's: the scripts' --write / --check
from model_terms import miss_per_element, validate

ROOT = committed_output.ROOT
RUNS = ROOT / "analysis" / "validation" / "published_runs.json"


def data_parallel(run):
    """The run's data-parallel size: its GPUs over tp x pp."""
    return run["gpus"] // (run["config"]["tp"] * run["config"]["pp"])


def variants(run):
    """The run pinned to each (virtual stages, micro-batch, recompute) the pipeline allows."""
    pp = run["config"]["pp"]
    per_stage = run["model"]["layers"] // pp
    for v in (d for d in range(1, per_stage + 1) if per_stage % d == 0 and (d == 1 or pp > 1)):
        for mb in (m for m in (1, 2, 4) if run["batch"] // data_parallel(run) % m == 0):
            for rc in ("none", "full"):
                x = json.loads(json.dumps(run))
                x.pop("group", None)
                x.pop("known_miss", None)
                x["id"] = f"{run['id']} v={v} mb={mb} {rc}"
                x["config"].update(virtual_stages=v, micro_batch=mb, recompute=rc)
                yield x


def main():
    write, check, model = committed_output.parse_args(sys.argv[1:])
    doc = json.loads(RUNS.read_text(encoding="utf-8"))
    runs = [r for r in doc["runs"]
            if r.get("group") == "megatron-core-h100"]
    lines = ["run v mb recompute: predicted TFLOP/s (narayanan), error % against the published, "
             "fits"]
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            pick = validate(model, dict(doc, runs=[run]), tmp, "pick")["rows"][0]
            lines.append(f"{run['id']}: the model's pick {pick['config']}, "
                         f"{pick['error_pct']:+.1f} %")
            if pick["best"]["pp"] == 1:
                miss, attn, mem, excess = miss_per_element(model, run, pick, tmp)
                lines.append(f"  per token, layer and hidden element of a GPU (h / tp): the time "
                             f"the model misses {miss:+.0f} ps; it charges attention {attn:.0f} "
                             f"ps and memory-bound passes {mem:.0f} ps")
                if excess:
                    lines.append(f"  of those passes, sequence parallelism runs {excess:.0f} ps "
                                 f"on 1/tp of the sequence, which the model charges whole: "
                                 f"charged as Megatron runs them, the miss would be "
                                 f"{miss + excess:+.0f} ps")
            for x in variants(run):
                cfg = x["config"]
                microbatches = x["batch"] // (data_parallel(x) * cfg["micro_batch"])
                if cfg["virtual_stages"] > 1 and microbatches % cfg["pp"]:
                    continue  # interleaving needs the micro-batch count divisible by pp
                row = validate(model, dict(doc, runs=[x]), tmp, "variant")["rows"][0]
                lines.append(f"  v={cfg['virtual_stages']:<3} mb={cfg['micro_batch']} "
                             f"{cfg['recompute']:<4}: "
                             f"{row['predicted_tflops_per_gpu']:6.1f}  {row['error_pct']:+6.1f} %  "
                             f"{'fits' if row['fits'] else 'does not fit'}")
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
