#!/usr/bin/env python3
"""What docs/model-megatron.md ("Code paths by era") says about validation entries that name no
Megatron-LM era, from today's ovb-model: the shipped validation file three ways -
  - as shipped (each Megatron entry's config.era, where it names one);
  - with every config.era removed, so that validate infers each from the entry's own statements
    about its software (flash_attention, sequence_parallel, recompute: infer_megatron_era);
  - with every Megatron entry costed as today's Megatron-Core (era core), the default before
    the inference;
and per Megatron run the era each way and the error, then the mean |error| per group. Nothing
here changes the model; it shows which eras the rule gives back and what it moves.

Usage: results/model/era-inference.py [--write | --check] [OVB_MODEL]
(default OVB_MODEL: build/host/analysis/model/ovb-model). Prints the figures; --write also writes
them beside this script as era-inference.txt; --check exits 1 when that file is not today's
output (ctest model.era_inference).
"""

import copy
import json
import sys
import tempfile

import committed_output  # this folder's: the scripts' --write / --check
from model_terms import validate

RUNS = committed_output.ROOT / "analysis" / "validation" / "published_runs.json"


def rows_and_means(model, doc, name, tmp):
    """validate's rows (by id) and group summaries for the runs file `doc`."""
    result = validate(model, doc, tmp, name)
    return ({r["id"]: r for r in result["rows"]},
            {s["group"]: s["mean_abs_error_pct"] for s in result["summaries"]})


def with_eras(doc, era):
    """`doc` with every Megatron entry's config.era removed (era None) or set to `era`."""
    out = copy.deepcopy(doc)
    for run in out["runs"]:
        if run["strategy"] != "megatron":
            continue
        run.setdefault("config", {}).pop("era", None)
        if era is not None:
            run["config"]["era"] = era
    return out


def era_of(row):
    """The era a row was costed with (its best configuration's)."""
    return row["best"]["era"]


def main():
    write, check, model = committed_output.parse_args(sys.argv[1:])
    doc = json.loads(RUNS.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        shipped, shipped_mean = rows_and_means(model, doc, "shipped", tmp)
        inferred, inferred_mean = rows_and_means(model, with_eras(doc, None), "inferred", tmp)
        core, core_mean = rows_and_means(model, with_eras(doc, "core"), "core", tmp)
    lines = ["Megatron runs of analysis/validation/published_runs.json: era and error % as shipped "
             "(config.era named), with every era removed (inferred from the entry's software "
             "statements) and with every era core (the default before the inference)",
             f"{'run':40} {'named':>6} {'inferred':>8}  {'shipped %':>9} {'inferred %':>10} "
             f"{'core %':>7}"]
    moved = []
    for run in doc["runs"]:
        if run["strategy"] != "megatron":
            continue
        i = run["id"]
        s, n, c = shipped[i], inferred[i], core[i]
        named = run.get("config", {}).get("era", "-")
        lines.append(f"{i:40} {named:>6} {era_of(n):>8}  {s['error_pct']:+9.1f} "
                     f"{n['error_pct']:+10.1f} {c['error_pct']:+7.1f}")
        if era_of(n) != era_of(s):
            moved.append(f"{i} ({era_of(s)} -> {era_of(n)}: "
                         f"{n['error_pct'] - s['error_pct']:+.1f} points)")
    lines.append("inferred era differs from the named one: " + ("; ".join(moved) or "none"))
    lines.append("mean |error| % per group: shipped / inferred / core")
    for group in shipped_mean:
        lines.append(f"  {group}: {shipped_mean[group]:.1f} / {inferred_mean[group]:.1f} / "
                     f"{core_mean[group]:.1f}")
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
