"""Calculon's column of `ovb-model validate` against the committed Calculon results (ctest
model.validate.calculon): every run of analysis/validation/calculon_results.json gets, in
validate's JSON, the error recomputed here from the published figure and Calculon's time alone
(a published time: 100 (published / Calculon - 1); a published narayanan TFLOP/s: Narayanan et
al.'s count, written out here, over Calculon's time against it); every other run gets none; the
summaries are the means of those rows. The results file's own errors and its cross-check of
Calculon's Table 5 validation are held too.

Usage: calculon_column.py OVB_MODEL PUBLISHED_RUNS_JSON CALCULON_RESULTS_JSON WORK_DIR
"""

import json
import subprocess
import sys
from pathlib import Path

REL = 1e-9


def published_seconds(run):
    pub, m = run["published"], run["model"]
    if "iteration_s" in pub:
        return pub["iteration_s"]
    assert pub["convention"] == "narayanan", run["id"]
    b, s, l, h, v = run["batch"], m["seq"], m["layers"], m["hidden"], m["vocab"]
    flop = 96.0 * b * s * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))
    return flop / (pub["tflops_per_gpu"] * 1e12 * run["gpus"])


def close(a, b):
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def main():
    model, runs_file, calculon_file, work = sys.argv[1:5]
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    out = work / "validate.json"
    subprocess.run([model, "validate", "--runs", runs_file, "--calculon", calculon_file,
                    "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
    doc = json.loads(out.read_text(encoding="utf-8"))
    runs = {r["id"]: r for r in json.loads(Path(runs_file).read_text(encoding="utf-8"))["runs"]}
    calculon = json.loads(Path(calculon_file).read_text(encoding="utf-8"))
    times = {r["id"]: r for r in calculon["runs"]}
    failures = []
    if not times:
        failures.append("the Calculon results file has no run")
    both = {}
    for row in doc["rows"]:
        rid = row["id"]
        if rid not in times:
            if row["calculon_error_pct"] is not None:
                failures.append(f"{rid}: a Calculon error without a Calculon run")
            continue
        want = 100 * (published_seconds(runs[rid]) / times[rid]["predicted_iteration_s"] - 1)
        got = row["calculon_error_pct"]
        if got is None or not close(got, want):
            failures.append(f"{rid}: Calculon's error {got}, recomputed {want}")
        if not close(times[rid]["error_pct"], want):
            failures.append(f"{rid}: the results file says {times[rid]['error_pct']}, "
                            f"recomputed {want}")
        both[rid] = (abs(row["error_pct"]), abs(want), runs[rid].get("group"))
    missing = set(times) - {r["id"] for r in doc["rows"]}
    if missing:
        failures.append(f"Calculon runs not in the validation file: {sorted(missing)}")
    for s in doc["summaries"]:
        rows = [v for v in both.values() if s["group"] == "all" or v[2] == s["group"]]
        if s["runs_both_predict"] != len(rows):
            failures.append(f"summary {s['group']}: {s['runs_both_predict']} runs both predict, "
                            f"counted {len(rows)}")
        elif rows and not (close(s["mean_abs_error_pct_both"], sum(r[0] for r in rows) / len(rows))
                           and close(s["calculon_mean_abs_error_pct_both"],
                                     sum(r[1] for r in rows) / len(rows))):
            failures.append(f"summary {s['group']}: means {s['mean_abs_error_pct_both']}, "
                            f"{s['calculon_mean_abs_error_pct_both']} are not the rows'")
    check = calculon.get("cross_check")
    if not check or len(check["runs"]) != 8 or check["max_abs_difference_s"] > 1e-9 or any(
            r["execution_fields_differing"] for r in check["runs"]):
        failures.append("the results file's cross-check with Calculon's own Table 5 validation "
                        "is missing or disagrees")
    for f in failures:
        print("FAIL:", f)
    print(f"calculon_column: {len(both)} runs with a Calculon error, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
