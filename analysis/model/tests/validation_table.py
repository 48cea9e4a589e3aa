"""The validation table of docs/validation.md against `ovb-model validate` (ctest model.validate.docs):
every row of the table must name a run of the validation file (by strategy, machine, GPUs and
published TFLOP/s) and quote its predicted configuration, predicted TFLOP/s, error, Calculon's
error ("-" where Calculon has none) and verdict as the program prints them today, so a model
change that moves a figure fails until the page follows. Every line of the page that quotes a
summary line of `validate` (mean |error| of all runs or of a group, and both tools' over the runs
both predict) must be that line as the program prints it today.

With README (optional): the README's one-line quote of the Table 5 group ("Table 5, 8 runs: X %
mean |error|, Calculon Y %") must be that group's summary as validate computes it today.

Usage: validation_table.py OVB_MODEL DOCS_VALIDATION_MD WORK_DIR [README]
"""

import json
import re
import subprocess
import sys
from pathlib import Path

HEADER = "| run | strategy | machine | GPUs | configuration predicted |"
SUMMARY = re.compile(r"^(all runs|[\w-]+): \d+ runs, mean \|error\| ")
README_TABLE5 = re.compile(r"Table 5, (\d+) runs: ([\d.]+) % mean \|error\|, Calculon ([\d.]+) %")


def table_rows(md):
    """The rows of the validation table as lists of stripped cells."""
    lines = md.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(HEADER)), None)
    if start is None:
        sys.exit(f"validation_table: no table starting with '{HEADER}' in the page")
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def summary_line(s):
    """A summary as validate prints it under its table."""
    name = "all runs" if s["group"] == "all" else s["group"]
    line = (f"{name}: {s['runs']} runs, mean |error| {s['mean_abs_error_pct']:.1f} % "
            f"(max {s['max_abs_error_pct']:.1f} %)")
    if s["runs_both_predict"]:
        line += (f"; the {s['runs_both_predict']} Calculon also predicts: ovb-model "
                 f"{s['mean_abs_error_pct_both']:.1f} %, Calculon "
                 f"{s['calculon_mean_abs_error_pct_both']:.1f} %")
    return line


def verdict(row):
    if row["within_tolerance"]:
        return "yes"
    return "known miss" if row["known_miss"] else "NO"


def main():
    model, page, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    out = work / "validate.json"
    subprocess.run([model, "validate", "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
    doc = json.loads(out.read_text(encoding="utf-8"))
    runs = doc["rows"]
    failures = []
    text = page.read_text(encoding="utf-8")
    summaries = {summary_line(s).split(":")[0]: summary_line(s) for s in doc["summaries"]}
    quoted = [line for line in text.splitlines() if SUMMARY.match(line)]
    if not quoted:
        failures.append("the page quotes no summary line of validate")
    for line in quoted:
        want = summaries.get(line.split(":")[0])
        if line != want:
            failures.append(f"the page says '{line}', ovb-model validate '{want}'")
    rows = table_rows(text)
    if not rows:
        failures.append("the validation table has no rows")
    for cells in rows:
        if len(cells) != 11:
            failures.append(f"row with {len(cells)} cells, expected 11: {cells}")
            continue
        name, strategy, machine, gpus, config, conv, published, predicted, error, calc, ok = cells
        match = [r for r in runs
                 if r["strategy"] == strategy and r["machine"] == machine
                 and r["gpus"] == int(gpus) and f"{r['published_tflops_per_gpu']:.1f}" == published]
        if len(match) != 1:
            failures.append(f"{name}: {len(match)} runs of the file match "
                            f"({strategy}, {machine}, {gpus} GPUs, published {published})")
            continue
        r = match[0]
        calculon = r["calculon_error_pct"]
        want = [r["config"], r["convention"], f"{r['predicted_tflops_per_gpu']:.1f}",
                f"{r['error_pct']:+.1f}", "-" if calculon is None else f"{calculon:+.1f}",
                verdict(r)]
        got = [config, conv, predicted, error, calc, ok]
        if got != want:
            failures.append(f"{name} ({r['id']}): the page says {got}, ovb-model validate {want}")
    if len(sys.argv) > 4:
        readme = Path(sys.argv[4]).read_text(encoding="utf-8").replace("\n", " ")
        t5 = next((s for s in doc["summaries"] if s["group"] == "korthikanti-table5"), None)
        quote = README_TABLE5.search(readme)
        if t5 is None or quote is None:
            failures.append("README: no Table 5 quote, or validate has no korthikanti-table5 group")
        else:
            want = (str(t5["runs"]), f"{t5['mean_abs_error_pct']:.1f}",
                    f"{t5['calculon_mean_abs_error_pct_both']:.1f}")
            if quote.groups() != want:
                failures.append(f"README says Table 5 {quote.groups()} (runs, ovb-model %, "
                                f"Calculon %), ovb-model validate {want}")
    for f in failures:
        print("FAIL:", f)
    print(f"validation_table: {len(rows)} rows, {len(quoted)} summary lines, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
