#!/usr/bin/env python3
"""summary.md of a model pipeline folder (analysis/model/scripts/pipeline.sh): the calibration's fit
quality, predicted vs measured iteration time per configuration, the rank correlation and whether the
measured fastest configuration is in the predicted top k.  Usage: summary.py OUT_DIR"""
import json
import sys
from pathlib import Path


def main(out):
    out = Path(out)
    cmp = json.loads((out / "model" / "compare.json").read_text())
    machine = json.loads((out / "model" / "machine.json").read_text())
    on = cmp.get("measured_on", {})
    lines = [f"# Model vs measurement ({on.get('host', '?')}, {on.get('backend', '?')}: "
             f"{on.get('device') or '?'}, {on.get('world_size', '?')} ranks, "
             f"{on.get('ranks_per_gpu', 1)} per GPU)", "",
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
    if cmp.get("warnings"):
        lines += ["", f"{len(cmp['warnings'])} warning(s), e.g.: {cmp['warnings'][0]}"]
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summary.py OUT_DIR")
    main(sys.argv[1])
