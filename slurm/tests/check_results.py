#!/usr/bin/env python3
"""check_results.py: checks a results folder of the suite (used by the Slurm tests).

  check_results.py DIR            every step finished; each kind of result file parses and has the
                                  keys results/SCHEMA.md gives it; the report exists; and the
                                  reference checks below
  check_results.py DIR --records  only the driver's bookkeeping: every step has a record, failed
                                  ones carry an error and a log, finished ones their outputs; the
                                  report (if any) lists exactly the steps that did not finish
Reference checks (strict mode), each able to fail on a wrong number:
  - every microbenchmark result (microbench/*.json) has a `wrong` counter and it is 0 (the
    benchmarks compare their output with a CPU reference), and no benchmark reports an error;
  - gpt4d runs with the same model, batch, seed, data and optimiser settings - the suite's runs
    differ only in grid and overlap flags - have the same loss at every iteration up to fp32
    reduction order (relative LOSS_RTOL), and at least two runs are compared;
  - a Llama run's first loss is within INIT_LOSS_RTOL of ln(vocab), the loss of a uniform guess over
    the vocabulary, which a freshly initialised model makes on synthetic tokens;
  - model/machine.json (ovb-model calibrate) parses, names its microbenchmark sources and has the
    keys of a machine file;
  - the report's list of steps that did not finish is empty.
Prints one line per problem and exits 1 when there is any.
"""

import glob
import json
import math
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
# Keys of a machine file (docs/model-machines.md "Machine file") that calibration must leave.
MACHINE_KEYS = ("name", "gpu", "comm", "calibration", "sources")
# Losses of the same training on different grids agree up to fp32 reduction order.
LOSS_RTOL = 1e-5
# gpt4d config keys that define the training (the loss curve); grid, overlap, priorities, kernel
# caching and recomputation must not change it.
SAME_TRAINING = ("model", "batch", "seed", "data", "dtype", "iters", "lr", "min_lr",
                 "lr_warmup_iters", "lr_decay_iters", "beta1", "beta2", "weight_decay", "clip")
REPORT_UNFINISHED = "## Suite steps that did not finish"


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


def check_microbench_wrong(root, problems):
    """Every benchmark entry carries `wrong` = 0 and no error."""
    for f in sorted(glob.glob(os.path.join(root, "microbench", "*.json"))):
        doc = load(f, problems)
        benches = doc.get("benchmarks") if isinstance(doc, dict) else None
        if not benches:
            problems.append(f"{f}: no benchmarks")
            continue
        for b in benches:
            name = b.get("name", "?")
            if b.get("error_occurred"):
                problems.append(f"{f}: {name}: error: {b.get('error_message')}")
            elif "wrong" not in b:
                problems.append(f"{f}: {name}: no 'wrong' counter (nothing checked its output)")
            elif b["wrong"] != 0:
                problems.append(f"{f}: {name}: wrong = {b['wrong']} (output differs from the "
                                "reference)")


def _losses(doc):
    return [it.get("loss") for it in doc.get("iterations", [])]


def check_gpt4d_losses(root, problems):
    """Runs of the same training (SAME_TRAINING keys) have equal loss curves."""
    groups = {}
    for f in sorted(glob.glob(os.path.join(root, "gpt4d", "*.json"))):
        if f.endswith(".trace-analysis.json"):
            continue
        doc = load(f, problems)
        if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
            continue
        cfg = doc["config"]
        model = {k: v for k, v in (cfg.get("model") or {}).items() if k != "preset"}
        key = json.dumps({k: (model if k == "model" else cfg.get(k)) for k in SAME_TRAINING},
                         sort_keys=True)
        groups.setdefault(key, []).append((f, _losses(doc)))
    compared = 0
    for runs in groups.values():
        ref_file, ref = runs[0]
        for f, losses in runs:
            bad = [i for i, x in enumerate(losses) if not isinstance(x, (int, float))
                   or not math.isfinite(x)]
            if bad or not losses:
                problems.append(f"{f}: loss missing or not finite at iteration(s) {bad or 'all'}")
        for f, losses in runs[1:]:
            compared += 1
            if len(losses) != len(ref):
                problems.append(f"{f}: {len(losses)} iterations, {ref_file}: {len(ref)}")
                continue
            for i, (a, b) in enumerate(zip(ref, losses)):
                if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
                        not abs(a - b) <= LOSS_RTOL * max(abs(a), abs(b)):
                    problems.append(f"{f}: loss {b!r} at iteration {i} differs from {a!r} of "
                                    f"{os.path.basename(ref_file)} (same training, another grid "
                                    f"or overlap; relative tolerance {LOSS_RTOL})")
                    break
    if not compared:
        problems.append("no two gpt4d runs of the same training: the losses were not compared")


INIT_LOSS_RTOL = 0.05


def check_llama_first_loss(root, problems):
    """A Llama run starts near ln(vocab): wrong RoPE, GQA or SwiGLU wiring shows up here."""
    for f in sorted(glob.glob(os.path.join(root, "gpt4d", "*.json"))):
        if f.endswith(".trace-analysis.json"):
            continue
        doc = load(f, problems)
        model = ((doc or {}).get("config") or {}).get("model") or {} if isinstance(doc, dict) \
            else {}
        if model.get("arch") != "llama":
            continue
        losses = _losses(doc)
        want = math.log(model["vocab"])
        if not losses or not isinstance(losses[0], (int, float)) or \
                not abs(losses[0] - want) <= INIT_LOSS_RTOL * want:
            problems.append(f"{f}: first loss {losses[0] if losses else None!r} of a Llama run is "
                            f"not within {INIT_LOSS_RTOL:.0%} of ln(vocab) = {want:.4f}")


def check_machine(root, problems):
    path = os.path.join(root, "model", "machine.json")
    if not os.path.isfile(path):
        problems.append(f"{path}: missing (the calibration's machine file)")
        return
    doc = load(path, problems)
    if not isinstance(doc, dict):
        if doc is not None:
            problems.append(f"{path}: not a JSON object")
        return
    missing = [k for k in MACHINE_KEYS if k not in doc]
    if missing:
        problems.append(f"{path}: missing {', '.join(missing)}")
    elif not doc["sources"]:
        problems.append(f"{path}: names no microbenchmark sources (not calibrated)")


def report_unfinished(root):
    """Step names in the report's "Suite steps that did not finish" table; None without a report."""
    path = os.path.join(root, "report", "report.md")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if REPORT_UNFINISHED not in lines:
        return set()
    names = set()
    for line in lines[lines.index(REPORT_UNFINISHED) + 1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] not in ("step", "") and not cells[0].startswith("---"):
            names.add(cells[0])
    return names


def check_report_lists(root, steps, problems):
    """The report lists exactly the steps (but the report itself) that had not finished."""
    listed = report_unfinished(root)
    if listed is None:
        return
    want = {r["step"] for r in steps if r["status"] != "finished" and r.get("group") != "report"}
    if listed - want:
        problems.append(f"report lists as not finished: {', '.join(sorted(listed - want))}")
    if want - listed:
        problems.append(f"report does not list the unfinished {', '.join(sorted(want - listed))}")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    root, problems = argv[0], []
    steps = check_records(root, problems)
    if "--records" not in argv:
        check_strict(root, steps, problems)
        check_microbench_wrong(root, problems)
        check_gpt4d_losses(root, problems)
        check_llama_first_loss(root, problems)
        check_machine(root, problems)
    check_report_lists(root, steps, problems)
    for p in problems:
        print(f"check_results: {p}")
    print(f"check_results: {root}: {len(steps)} steps, "
          f"{'OK' if not problems else str(len(problems)) + ' problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
