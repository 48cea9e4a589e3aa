#!/usr/bin/env python3
"""The figures docs/validation.md quotes about the Megatron-LM README's strong scaling of its 177B
model on H100 (group megatron-core-h100-strong), from today's ovb-model:
  - each run's error, and on 96 GPUs the bubble's and the exposed data-parallel time's share of
    the predicted iteration (how little of the error the schedule can carry there), and so the
    time the model misses there per token, layer of a stage and hidden element of a GPU, beside
    its attention and memory-bound charges per the same (as megatron-core-choices.py prints for
    the rows without a pipeline);
  - the fall of MFU from 96 to 4608 GPUs, published and predicted, and predicted again with the
    96-GPU run's micro-batch and interleaving held at 4608 GPUs (strong scaling's usual reading:
    only the data-parallel size changes; neither run publishes them);
  - the 96-GPU run without Transformer Engine's tensor-parallel overlap;
  - the rates the H100 preset gives the GEMMs of one such layer (tp 8, one sequence of 4096
    tokens), and those of its GEMM table as measured (without the training factor and the
    ceiling); and, as a sensitivity
    of the 96-GPU run to them (not a fit: nothing here changes the model), that run with every
    GEMM rate 5 and 10 % lower.

Usage: results/model/h100-strong-scaling.py [--write | --check] [OVB_MODEL]
(default OVB_MODEL: build/host/analysis/model/ovb-model). Prints the figures; --write also writes
them beside this script as h100-strong-scaling.txt; --check exits 1 when that file is not today's
output (ctest model.h100_strong_scaling).
"""

import json
import sys
import tempfile

import committed_output  # this folder's: the scripts' --write / --check
from model_terms import (edited_machine, explain, miss_per_element, shape_args,
                         table_as_measured, validate)

ROOT = committed_output.ROOT
RUNS = ROOT / "analysis" / "validation" / "published_runs.json"
GROUP = "megatron-core-h100-strong"


def row_of(model, doc, run, tmp):
    """validate's row for `run` alone (its own runs file)."""
    return validate(model, dict(doc, runs=[run]), tmp, "runs")["rows"][0]


def slower_gemms(factor, tmp):
    """The H100 preset with every GEMM rate (table, efficiency and ceiling) times `factor`."""
    def edit(m):
        for g in m["gemm_table"]:
            g["tflops"] *= factor
        m["gpu"]["gemm_efficiency"] *= factor
        m["gpu"]["gemm_max_efficiency"] *= factor
    return edited_machine(tmp, f"dgx-h100-gemm-x{factor}.json", edit)


def share(row, term):
    """A term's share of the row's predicted iteration, in percent."""
    return 100 * row["best"]["terms_ms"][term] / row["predicted_ms"]


def layer_gemm_rates(model, run, tmp, machine="dgx-h100"):
    """TFLOP/s of every GEMM of one layer at tp 8, one sequence (explain on the grid 1x8x1x1)."""
    e = explain(model, ["1x8x1x1", "--machine", machine, *shape_args(run["model"]), "--batch", "1"],
                tmp, "explain")
    return [g[p]["tflops"] for g in e["compute"]["linears"] if g["layer"] != "lm_head"
            for p in ("fwd", "dx", "dw")]


def main():
    write, check, model = committed_output.parse_args(sys.argv[1:])
    doc = json.loads(RUNS.read_text(encoding="utf-8"))
    runs = sorted((r for r in doc["runs"] if r.get("group") == GROUP), key=lambda r: r["gpus"])
    lines = [f"{GROUP}: error % = 100 (predicted / published TFLOP/s - 1)"]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row_of(model, doc, r, tmp) for r in runs]
        for run, row in zip(runs, rows):
            lines.append(f"{run['id']}: {row['config']}, predicted "
                         f"{row['predicted_tflops_per_gpu']:.1f} against "
                         f"{row['published_tflops_per_gpu']:.1f}, {row['error_pct']:+.1f} %;"
                         f" bubble {share(row, 'bubble'):.2f} %, exposed"
                         f" data-parallel {share(row, 'dp_exposed'):.2f} % of the iteration")
        first, last = runs[0], runs[-1]
        miss, attn, mem, excess = miss_per_element(model, first, rows[0], tmp)
        lines.append(f"{first['id']}, per token, layer of a stage and hidden element of a GPU "
                     f"(h / tp): the time the model misses {miss:+.0f} ps; it charges attention "
                     f"{attn:.0f} ps and memory-bound passes {mem:.0f} ps (compare the rows "
                     f"without a pipeline in megatron-core-choices.txt); {excess:.0f} ps of "
                     f"those passes sequence parallelism runs on 1/tp of the sequence, so "
                     f"charged as Megatron runs them the miss would be {miss + excess:+.0f} ps")
        pub = [r["published"]["model_flops_utilization_pct"] for r in (first, last)]
        pred = [row["predicted_tflops_per_gpu"] for row in (rows[0], rows[-1])]
        lines.append(f"from {first['gpus']} to {last['gpus']} GPUs: published MFU {pub[0]} -> "
                     f"{pub[1]} % ({100 * (1 - pub[1] / pub[0]):.1f} % lower), predicted "
                     f"{pred[0]:.1f} -> {pred[1]:.1f} TFLOP/s "
                     f"({100 * (1 - pred[1] / pred[0]):.1f} % lower)")
        held = json.loads(json.dumps(last))
        held["config"]["micro_batch"] = rows[0]["best"]["micro_batch"]
        held["config"]["virtual_stages"] = rows[0]["best"]["virtual_stages"]
        row = row_of(model, doc, held, tmp)
        lines.append(f"{last['id']} with {first['id']}'s micro-batch and interleaving held "
                     f"({row['config']}): predicted {row['predicted_tflops_per_gpu']:.1f}, "
                     f"{row['error_pct']:+.1f} %; bubble {share(row, 'bubble'):.1f} %, exposed "
                     f"data-parallel {share(row, 'dp_exposed'):.1f} %; predicted fall from "
                     f"{first['gpus']} GPUs "
                     f"{100 * (1 - row['predicted_tflops_per_gpu'] / pred[0]):.1f} %")
        plain = json.loads(json.dumps(first))
        plain["config"]["tp_comm_overlap"] = False
        lines.append(f"{first['id']} without --tp-comm-overlap: "
                     f"{row_of(model, doc, plain, tmp)['error_pct']:+.1f} %")
        rates = layer_gemm_rates(model, first, tmp)
        table = layer_gemm_rates(model, first, tmp, table_as_measured(tmp))
        lines.append(f"the layer's {len(rates)} GEMMs (tp 8, one sequence) at "
                     f"{min(rates):.1f}..{max(rates):.1f} TFLOP/s (dgx-h100: training's rate, "
                     f"capped at its ceiling; its GEMM table as measured, without the training "
                     f"factor and the ceiling: {min(table):.1f}..{max(table):.1f})")
        for factor in (0.95, 0.9):
            slow = json.loads(json.dumps(first))
            slow["machine"] = slower_gemms(factor, tmp)
            lines.append(f"sensitivity, every GEMM rate x {factor}: {first['id']} "
                         f"{row_of(model, doc, slow, tmp)['error_pct']:+.1f} %")
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
