#!/usr/bin/env python3
"""gpt4d --predict MACHINE against the model's own command line and against gpt4d's measurement.

For two configurations (every overlap flag without weight caching on 2x1x2x1; recompute with a
permuted order on 1x2x1x2), runs gpt4d on the host backend with LAUNCH (e.g. mpiexec -n 4) and
checks:
  - the printed breakdown and the predicted-vs-measured table are there, one row per term;
  - result["prediction"]: per (group, kind) the predicted call count equals the measured one
    exactly, the bytes too, every term is on both sides; the measured side is the summary's own
    numbers (median iteration time, summary.collectives); error % = 100 (pred - meas) / meas;
  - the predicted iteration time, breakdown and per-term times equal those of
    `ovb-model explain GRID:ORDER --machine MACHINE ... --json` of the same configuration (MACHINE
    with the run's ranks per device, prediction.ranks_per_device), and
    the predicted memory equals gpt4d's own estimate (summary.memory_estimate_bytes).
Then a bad machine (unknown name, missing file, file without its fields), one rank: exit status
not 0, one line on the output, no iteration run.

Usage: check_prediction.py GPT4D OVB_MODEL MACHINE_FILE OUT_DIR -- LAUNCH...
(ctest: gpt4d.predict.host.4ranks, endtoend/tests/CMakeLists.txt)
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
from ovb_analysis.overlap_flags import ALL  # noqa: E402

SHAPE = ["--preset", "tiny", "--seq", "16", "--vocab", "256", "--batch", "4"]
CONFIGS = [
    # (name, grid, order, gpt4d flags, ovb-model flags), machine given as a file in the first,
    # as a preset name in the second.
    ("oar_ors_oag", "2x1x2x1", "x,y,z", ["--gx", "2", "--gz", "2", "--overlap", ALL,
                                         "--no-cache-weights"],
     ["--overlap", ALL, "--no-cache-weights"]),
    ("recompute", "1x2x1x2", "y,x,z", ["--gy", "2", "--gdata", "2", "--grid-order", "y,x,z",
                                       "--recompute"],
     ["--overlap", "none", "--recompute"]),
    # Micro-batches: every micro-step's collectives, the reductions once (two micro-steps).
    ("micro_batch", "2x1x2x1", "x,y,z", ["--gx", "2", "--gz", "2", "--overlap", "all",
                                         "--micro-batch", "1"],
     ["--overlap", "all", "--micro-batch", "1"]),
]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def close(a, b, rel=1e-12, scale=0.0):
    # scale: the size of the terms of a difference; its rounding is relative to them, not to a
    # result near zero (an error_pct of a prediction that happens to hit the measurement)
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b), abs(scale))


def error_pct_close(got, predicted, measured):
    return close(got, 100 * (predicted - measured) / measured,
                 scale=100 * max(abs(predicted), abs(measured)) / abs(measured))


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def check_config(gpt4d, ovb_model, machine, machine_file, out, launch, name, grid, order, flags,
                 mflags):
    result = os.path.join(out, name + ".json")
    rc, text = run(launch + [gpt4d, "--backend", "host", "--iters", "4", "--out", result,
                             "--predict", machine] + SHAPE + flags)
    print(text)
    if rc != 0:
        check(False, f"{name}: gpt4d exit {rc}")
        return
    with open(result) as f:
        r = json.load(f)
    pr = r.get("prediction")
    check(isinstance(pr, dict), f"{name}: result without 'prediction'")
    if not isinstance(pr, dict):
        return
    summ = r["summary"]

    # The measured side is gpt4d's own summary; the counts and bytes are the plan's, exactly.
    check(pr["measured_ms"] == summ["median_time_ms"], f"{name}: measured_ms != median_time_ms")
    check(error_pct_close(pr["error_pct"], pr["predicted_ms"], pr["measured_ms"]),
          f"{name}: error_pct")
    meas = {(c["group"], c["kind"]): c for c in summ["collectives"]}
    terms = {(t["group"], t["kind"]): t for t in pr["terms"]}
    check(set(terms) == set(meas), f"{name}: terms {sorted(terms)} != measured {sorted(meas)}")
    check(len(terms) >= 3, f"{name}: only {len(terms)} (group, kind) terms")
    for key, t in terms.items():
        label = f"{name}: {key[0]} {key[1]}"
        check(t["predicted_count"] > 0, label + ": not in the plan")
        check(t["predicted_count"] == t["measured_count"],
              f"{label}: {t['predicted_count']} calls predicted, {t['measured_count']} measured")
        check(close(t["predicted_bytes"], t["measured_bytes"], 1e-9),
              f"{label}: {t['predicted_bytes']} bytes predicted, {t['measured_bytes']} measured")
        if key in meas:
            check(t["measured_count"] == meas[key]["count"], label + ": count != summary's")
            check(t["measured_ms"] == meas[key]["time_ms"], label + ": time_ms != summary's")
            check(t["measured_exposed_ms"] == meas[key]["exposed_ms"],
                  label + ": exposed_ms != summary's")
        if t["measured_ms"] > 0:
            check(error_pct_close(t["error_pct"], t["predicted_ms"], t["measured_ms"]),
                  label + ": error_pct")

    # The same configuration through ovb-model explain, on the machine as the run shares it: its
    # ranks per device (on the host ranks per core, e.g. 2 for 4 ranks on 2 cores).
    with open(machine_file) as f:
        shared = json.load(f)
    shared["ranks_per_device"] = pr["ranks_per_device"]
    shared_file = os.path.join(out, name + ".machine.json")
    with open(shared_file, "w") as f:
        json.dump(shared, f)
    ej = os.path.join(out, name + ".explain.json")
    rc, etext = run([ovb_model, "explain", f"{grid}:{order}", "--machine", shared_file, "--dtype",
                     "fp32"] + SHAPE + mflags + ["--json", ej])
    check(rc == 0, f"{name}: ovb-model explain exit {rc}: {etext[-500:]}")
    if rc != 0:
        return
    with open(ej) as f:
        e = json.load(f)
    cfg = e["config"]
    check(f"{cfg['gx']}x{cfg['gy']}x{cfg['gz']}x{cfg['gdata']}" == grid and cfg["order"] == order,
          f"{name}: explain ran {cfg}")
    check(close(pr["predicted_ms"], cfg["predicted_ms"]),
          f"{name}: gpt4d predicts {pr['predicted_ms']} ms, explain {cfg['predicted_ms']} ms")
    for k in ("compute_ms", "interference_ms", "exposed_comm_ms"):
        check(close(pr["breakdown"][k], cfg[k]), f"{name}: breakdown {k}: {pr['breakdown'][k]} != "
              f"explain's {cfg[k]}")
    # Memory: gpt4d's own plan (no GEMM workspace on the host, which explain's options do not
    # know), so against gpt4d's estimate of the same plan.
    check(pr["breakdown"]["memory_bytes"] == summ["memory_estimate_bytes"],
          f"{name}: predicted memory {pr['breakdown']['memory_bytes']} != gpt4d's estimate "
          f"{summ['memory_estimate_bytes']}")
    ov = {(o["group"], o["kind"]): o for o in e["overlap"]}
    check(set(ov) == set(terms), f"{name}: explain's terms {sorted(ov)} != {sorted(terms)}")
    for key, o in ov.items():
        if key not in terms:
            continue
        t = terms[key]
        check(o["count"] == t["predicted_count"] and close(o["alone_ms"], t["predicted_ms"]) and
              close(o["exposed_ms"], t["predicted_exposed_ms"]),
              f"{name}: {key}: explain {o} != gpt4d's {t}")

    # What was printed: the breakdown line and one table row per term.
    check(f"model ({pr['machine']}) {grid}" in text and "iteration" in text,
          f"{name}: no breakdown printed")
    check(f"predicted ({pr['machine']}) vs measured, per iteration:" in text,
          f"{name}: no table printed")
    for key in terms:
        check(any(line.strip().startswith(f"{key[0]} {key[1]} ") for line in text.splitlines()),
              f"{name}: no printed row for {key}")
    check(math.isfinite(pr["predicted_ms"]) and pr["predicted_ms"] > 0,
          f"{name}: predicted_ms {pr['predicted_ms']}")


def check_bad_machines(gpt4d, out):
    bad_file = os.path.join(out, "bad-machine.json")
    with open(bad_file, "w") as f:
        json.dump({"name": "bad"}, f)
    for machine, pattern in (("no-such-machine", "no-such-machine"),
                             ("/nonexistent/machine.json", "/nonexistent/machine.json"),
                             (bad_file, bad_file)):
        rc, text = run([gpt4d, "--backend", "host", "--iters", "2", "--predict", machine] + SHAPE)
        lines = [line for line in text.splitlines() if line.strip()]
        label = f"--predict {machine}"
        check(rc != 0, f"{label}: exit 0")
        check(len(lines) == 1, f"{label}: {len(lines)} lines: {text!r}")
        check(lines and lines[0].startswith("gpt4d: error: --predict:") and pattern in lines[0],
              f"{label}: message {text!r}")
        print(f"rejected as expected (exit {rc}): {lines[0] if lines else ''}")


def main():
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit(__doc__)
    gpt4d, ovb_model, machine_file, out = sys.argv[1:5]
    launch = sys.argv[6:]
    os.makedirs(out, exist_ok=True)
    preset = os.path.splitext(os.path.basename(machine_file))[0]
    for i, (name, grid, order, flags, mflags) in enumerate(CONFIGS):
        check_config(gpt4d, ovb_model, machine_file if i == 0 else preset, machine_file, out,
                     launch, name, grid, order, flags, mflags)
    check_bad_machines(gpt4d, out)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all prediction checks passed")


if __name__ == "__main__":
    main()
