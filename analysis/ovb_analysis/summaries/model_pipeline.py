"""Summary of an `ovb-suite run --preset model-pipeline` folder: the calibration's fit quality,
predicted vs measured iteration time per configuration, the rank correlation and whether the
measured fastest configuration is in the predicted top k. Not ok when gpt4d's collectives differ
from the plan the model costs (compare's warnings), or when a traced run was not paired with its
trace (the plan's collectives must be found in gpt4d's own trace)."""
from pathlib import Path

from ..io_util import load_json
from .common import Summary

TITLE = "Model vs measurement"
JSON_NAME = None


def summarize(out):
    out = Path(out)
    cmp = load_json(out / "model" / "compare.json")
    machine = load_json(out / "model" / "machine.json")
    on = cmp.get("measured_on", {})
    lines = [f"Measured on {on.get('host', '?')}, {on.get('backend', '?')}: "
             f"{on.get('device') or '?'}, {on.get('world_size', '?')} ranks, "
             f"{on.get('ranks_per_gpu', 1)} per GPU.", "",
             f"Machine `{machine['name']}` calibrated from `{out / 'microbench'}`: "
             f"{machine['gpus_per_node']} device(s) per node, {machine['ranks_per_device']} rank(s) "
             "per device. Collective fits (t = alpha + S*F/bw):", "",
             "| kind | p | ip | points | alpha us | bw GB/s | R^2 | max rel err |",
             "|---|---|---|---|---|---|---|---|"]
    for s in machine.get("calibration", {}).get("collectives", []):
        r2 = "-" if s["r2"] is None else f"{s['r2']:.4f}"
        lines.append(f"| {s['kind']} | {s['p']} | {s['ip']} | {s['points']} | {s['alpha_us']:.1f} | "
                     f"{s['bw_gbps']:.3f} | {r2} | {s['max_rel_err']:.3f} |")
    lines += ["", "| grid | order | overlap | predicted ms | measured ms | error % |",
              "|---|---|---|---|---|---|"]
    for c in cmp["configs"]:
        lines.append(f"| {c['gx']}x{c['gy']}x{c['gz']}x{c['gdata']} | {c['order']} | {c['overlap']} | "
                     f"{c['predicted_ms']:.2f} | {c['measured_ms']:.2f} | {c['error_pct']:+.1f} |")
    rho = cmp.get("spearman")
    lines += ["", f"- Spearman rank correlation: {'n/a' if rho is None else f'{rho:.3f}'}",
              f"- mean |error|: {cmp['mean_abs_error_pct']:.1f} %, max {cmp['max_abs_error_pct']:.1f} %",
              f"- measured fastest: {cmp['measured_best']}; in the predicted top {cmp['k']}: "
              f"{'yes' if cmp['measured_best_in_top_k'] else 'no'} "
              f"(predicted top {cmp['k']}: {', '.join(cmp['predicted_top_k'])})"]
    problems = []
    if cmp.get("warnings"):
        lines += ["", f"{len(cmp['warnings'])} warning(s), e.g.: {cmp['warnings'][0]}"]
        # gpt4d counts its collectives per (kind, group): they must be the plan's, call for call
        # and byte for byte, or the model costs something gpt4d did not run.
        problems += [f"gpt4d's collectives differ from the plan the model costs: {w}"
                     for w in cmp["warnings"]]
    traced = sorted((out / "gpt4d").glob("*.trace-analysis.json"))
    paired = [c for c in cmp["configs"] if "trace" in c]
    if traced and not (paired and paired[0]["trace"].get("terms")):
        problems.append(f"compare did not pair the trace analysis {traced[0].name} with its run")
    elif paired:
        lines.append(f"- traced run paired with its trace: {len(paired)} configuration(s)")
    return Summary("\n".join(lines), ok=not problems, problems=problems)
