"""The validation table of docs/model.md against `ovb-model validate` (ctest model.validate.docs):
every row of the table must name a run of the validation file (by strategy, machine, GPUs and
published TFLOP/s) and quote its predicted configuration, predicted TFLOP/s, error and verdict as
the program prints them today, so a model change that moves a figure fails until the page follows.

Usage: validation_table.py OVB_MODEL DOCS_MODEL_MD WORK_DIR
"""

import json
import re
import subprocess
import sys
from pathlib import Path

HEADER = "| run | strategy | machine | GPUs | configuration predicted |"


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


def verdict(row):
    if row["within_tolerance"]:
        return "yes"
    return "known miss" if row["known_miss"] else "NO"


def main():
    model, page, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    out = work / "validate.json"
    subprocess.run([model, "validate", "--json", str(out)], check=True, stdout=subprocess.DEVNULL)
    runs = json.loads(out.read_text(encoding="utf-8"))["rows"]
    failures = []
    rows = table_rows(page.read_text(encoding="utf-8"))
    if not rows:
        failures.append("the validation table has no rows")
    for cells in rows:
        if len(cells) != 10:
            failures.append(f"row with {len(cells)} cells, expected 10: {cells}")
            continue
        name, strategy, machine, gpus, config, conv, published, predicted, error, ok = cells
        match = [r for r in runs
                 if r["strategy"] == strategy and r["machine"] == machine
                 and r["gpus"] == int(gpus) and f"{r['published_tflops_per_gpu']:.1f}" == published]
        if len(match) != 1:
            failures.append(f"{name}: {len(match)} runs of the file match "
                            f"({strategy}, {machine}, {gpus} GPUs, published {published})")
            continue
        r = match[0]
        want = [r["config"], r["convention"], f"{r['predicted_tflops_per_gpu']:.1f}",
                f"{r['error_pct']:+.1f}", verdict(r)]
        got = [config, conv, predicted, error, ok]
        if got != want:
            failures.append(f"{name} ({r['id']}): the page says {got}, ovb-model validate {want}")
    for f in failures:
        print("FAIL:", f)
    print(f"validation_table: {len(rows)} rows, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
