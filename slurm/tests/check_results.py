#!/usr/bin/env python3
"""check_results.py: checks a results folder of the suite (used by the Slurm tests).

  check_results.py DIR            every step finished; each kind of result file parses and has the
                                  keys results/SCHEMA.md gives it; the report exists
  check_results.py DIR --records  only the driver's bookkeeping: every step has a record, failed
                                  ones carry an error and a log, finished ones their outputs
Prints one line per problem and exits 1 when there is any.
"""

import glob
import json
import os
import sys

# Result files by folder: the keys every file there must have (results/SCHEMA.md).
KINDS = {
    "microbench/*.json": ("context", "benchmarks"),
    "gpt4d/*.trace-analysis.json": ("context", "ranks", "summary"),
    "model/search.json": ("context", "configs"),
    "model/compare.json": ("context", "configs"),
}
GPT4D_KEYS = ("context", "config", "iterations", "summary")


def load(path, problems):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: cannot be read as JSON: {e}")
        return None


def check_records(root, problems):
    status = load(os.path.join(root, ".suite", "status.json"), problems)
    if status is None:
        return []
    for r in status["steps"]:
        name, st = r["step"], r["status"]
        if st == "failed" and not r.get("error"):
            problems.append(f"step {name}: failed without an error message")
        if st in ("failed", "interrupted", "finished") and \
                not os.path.exists(os.path.join(root, "logs", name + ".txt")):
            problems.append(f"step {name}: no log file")
        if st == "pending":
            problems.append(f"step {name}: never ran")
    return status["steps"]


def check_strict(root, steps, problems):
    for r in steps:
        if r["status"] != "finished":
            problems.append(f"step {r['step']}: {r['status']}: {r.get('error')}")
    for pattern, keys in KINDS.items():
        files = glob.glob(os.path.join(root, pattern))
        if not files:
            problems.append(f"no {pattern}")
        for f in files:
            doc = load(f, problems)
            if isinstance(doc, dict):
                missing = [k for k in keys if k not in doc]
                if missing:
                    problems.append(f"{f}: missing {', '.join(missing)}")
    runs = [f for f in glob.glob(os.path.join(root, "gpt4d", "*.json"))
            if not f.endswith(".trace-analysis.json")]
    expected = sum(1 for r in steps if r.get("group") in ("gpt4d", "trace")
                   and not r["step"].startswith("analyze-"))
    if len(runs) != expected:
        problems.append(f"{len(runs)} gpt4d results, {expected} expected")
    for f in runs:
        doc = load(f, problems)
        if isinstance(doc, dict):
            missing = [k for k in GPT4D_KEYS if k not in doc]
            if missing or not doc.get("iterations"):
                problems.append(f"{f}: missing {', '.join(missing) or 'iterations'}")
    for f in ("report/report.html", "report/report.md"):
        path = os.path.join(root, f)
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            problems.append(f"{path}: missing or empty")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    root, problems = argv[0], []
    steps = check_records(root, problems)
    if "--records" not in argv:
        check_strict(root, steps, problems)
    for p in problems:
        print(f"check_results: {p}")
    print(f"check_results: {root}: {len(steps)} steps, "
          f"{'OK' if not problems else str(len(problems)) + ' problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
