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
  - each traced run's model/timeline-vs-measured-TAG.trace.json (ovb-trace merge) holds every
    event of the predicted trace and of each measured rank's trace, on processes labelled
    "predicted rank 0: ..." / "measured rank R: ...", and its predicted iteration starts exactly
    where measured rank 0's steady-state iteration of median duration starts (worked out here
    from the measured trace: the warm-up rule, then the kept iteration nearest the median);
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


def _x_events(doc):
    return [e for e in doc.get("traceEvents", []) if isinstance(e, dict) and e.get("ph") == "X"]


def _iterations(doc):
    """A trace's iteration ranges in time order: GPU spans when it has them, else CPU ranges (as
    ovb-trace analyze takes them)."""
    its = {}
    for e in _x_events(doc):
        if (e.get("args") or {}).get("category") == "iteration":
            its.setdefault(e.get("cat"), []).append(e)
    chosen = its.get("gpu_user_annotation") or its.get("user_annotation") or []
    return sorted(chosen, key=lambda e: float(e["ts"]))


def _median_iteration(its):
    """Index of the iteration the merge must align with: of those the warm-up rule keeps (the
    first max(3, ceil(n/10)) left out, at least one kept), the earliest one nearest their
    median."""
    n = len(its)
    warmup = 0 if n <= 1 else min(max(3, math.ceil(n / 10)), n - 1)
    # In whole nanoseconds (the format's 3 decimals of us) and twice the median, so that the two
    # middle ones of an even count tie exactly and the earlier wins.
    durs = [round(float(e["dur"]) * 1000) for e in its[warmup:]]
    srt, m = sorted(durs), len(durs)
    median2 = 2 * srt[m // 2] if m % 2 else srt[m // 2 - 1] + srt[m // 2]
    return warmup + min(range(m), key=lambda i: (abs(2 * durs[i] - median2), i))


def check_merged_timelines(root, problems):
    """model/timeline-vs-measured-TAG.trace.json of every traced run (see the module doc)."""
    for tdir in sorted(glob.glob(os.path.join(root, "traces", "traced-*"))):
        tag = os.path.basename(tdir)
        path = os.path.join(root, "model", f"timeline-vs-measured-{tag}.trace.json")
        if not os.path.isfile(path):
            problems.append(f"{path}: missing")
            continue
        merged = load(path, problems)
        predicted = load(os.path.join(root, "model", f"timeline-{tag}.trace.json"), problems)
        measured = [load(f, problems) for f in sorted(glob.glob(os.path.join(tdir, "*.json")))]
        if not isinstance(merged, dict) or predicted is None or None in measured:
            continue
        want = {f"predicted rank {predicted['distributedInfo']['rank']}": len(_x_events(predicted))}
        for doc in measured:
            want[f"measured rank {doc['distributedInfo']['rank']}"] = len(_x_events(doc))
        labels = {e["pid"]: e["args"]["name"].split(":")[0] for e in merged["traceEvents"]
                  if e.get("ph") == "M" and e.get("name") == "process_name"}
        got, by_label = {}, {}
        for e in _x_events(merged):
            label = labels.get(e.get("pid"), f"unlabelled pid {e.get('pid')}")
            got[label] = got.get(label, 0) + 1
            by_label.setdefault(label, []).append(e)
        if got != want:
            problems.append(f"{path}: X events per process {got}, the inputs have {want}")
            continue
        rank0 = min(doc["distributedInfo"]["rank"] for doc in measured)
        its = _iterations({"traceEvents": by_label[f"measured rank {rank0}"]})
        pred_its = _iterations({"traceEvents": by_label["predicted rank 0"]})
        if not its or not pred_its:
            problems.append(f"{path}: no iteration ranges to align")
            continue
        i = _median_iteration(its)
        if (merged.get("alignment") or {}).get("iteration") != i or \
                float(pred_its[0]["ts"]) != float(its[i]["ts"]):
            problems.append(f"{path}: predicted iteration at {pred_its[0]['ts']} us, alignment "
                            f"{merged.get('alignment')}; measured rank {rank0}'s median "
                            f"steady-state iteration is index {i} at {its[i]['ts']} us")


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
        check_merged_timelines(root, problems)
    check_report_lists(root, steps, problems)
    for p in problems:
        print(f"check_results: {p}")
    print(f"check_results: {root}: {len(steps)} steps, "
          f"{'OK' if not problems else str(len(problems)) + ' problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
