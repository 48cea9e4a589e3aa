"""Interleaved A/B runs: the cost of an option (tracing, an overlap flag) as the per-pair ratio of
two variants of a command run alternately, A B A B ..., so that drift of the machine (clocks,
temperature, other jobs) falls on both alike. Reported: the median and p10/p90 of the ratio B/A
over the pairs (stats.py percentiles), beside each variant's own median and p10/p90. With a
folder to keep them in, every run's result stays there as it ends (a cut call keeps what ran); with
a loss tolerance, each B run's per-iteration losses (`iterations[].loss` of a gpt4d result) are
compared with its pair's A run's: a speed-up must not change the training. See docs/metrics.md
("Overheads")."""

import os
import shlex
import subprocess
import tempfile
import time

from . import stats
from .errors import AnalysisError
from .io_util import load_json

MIN_PAIRS = 5


def _value_at(doc, dotted, where):
    cur = doc
    for key in dotted.split("."):
        if not isinstance(cur, dict) or key not in cur:
            raise AnalysisError(f"{where}: no field '{dotted}' (missing '{key}')")
        cur = cur[key]
    if isinstance(cur, bool) or not isinstance(cur, (int, float)):
        raise AnalysisError(f"{where}: field '{dotted}' is not a number: {cur!r}")
    return float(cur)


def losses(path, where):
    """The per-iteration losses of a gpt4d result (`iterations[].loss`)."""
    doc = load_json(path)
    its = doc.get("iterations") if isinstance(doc, dict) else None
    if not isinstance(its, list) or not its:
        raise AnalysisError(f"{where}: no iterations[] with losses in {path}")
    return [_value_at(it, "loss", f"{where} ({path})") for it in its]


def loss_difference(loss_a, loss_b, where):
    """Largest |b - a| / |a| over the iterations of two runs of the same training."""
    if len(loss_a) != len(loss_b):
        raise AnalysisError(f"{where}: {len(loss_a)} iterations in A, {len(loss_b)} in B")
    return max(abs(b - a) / max(abs(a), 1e-30) for a, b in zip(loss_a, loss_b))


def run_once(command, field, tmpdir, tag):
    """One run of `command` (a shell command line; {out} is replaced by a fresh result path).
    Returns its cost: the number at `field` of the JSON at {out}, or the wall time in ms."""
    out = os.path.join(tmpdir, f"{tag}.json")
    line = command.replace("{out}", shlex.quote(out))
    t0 = time.perf_counter()
    res = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True)
    wall_ms = (time.perf_counter() - t0) * 1e3
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise AnalysisError(f"run {tag}: `{line}` exited with status {res.returncode}: {tail[0]}")
    if field is None:
        return wall_ms
    if not os.path.exists(out):
        raise AnalysisError(f"run {tag}: `{line}` wrote no result at {{out}} for --field {field}")
    return _value_at(load_json(out), field, f"run {tag} ({out})")


def interleaved(cmd_a, cmd_b, pairs=MIN_PAIRS, warmup_pairs=1, field=None, runner=run_once,
                keep=None, loss_rtol=None):
    """Runs warmup_pairs untimed pairs, then `pairs` timed ones, A then B in each. Returns the
    result document (runs in order, ratios, their median/p10/p90). keep: a folder where each
    run's result ({tag}.json) stays; loss_rtol: compare every pair's loss curves (needs {out}),
    adding loss_max_rel_diff and loss_same (every pair within loss_rtol) to the document."""
    if pairs < MIN_PAIRS:
        raise AnalysisError(f"--pairs {pairs}: at least {MIN_PAIRS} pairs are needed for a spread")
    if warmup_pairs < 0:
        raise AnalysisError(f"--warmup-pairs {warmup_pairs}: expected >= 0")
    if field is not None and ("{out}" not in cmd_a or "{out}" not in cmd_b):
        raise AnalysisError("--field needs {out} in both commands (where each writes its result)")
    if loss_rtol is not None and ("{out}" not in cmd_a or "{out}" not in cmd_b):
        raise AnalysisError("--loss-rtol needs {out} in both commands (where each writes its "
                            "result)")
    if loss_rtol is not None and not loss_rtol >= 0:
        raise AnalysisError(f"--loss-rtol {loss_rtol}: expected >= 0")
    runs, loss_diffs = [], []
    with tempfile.TemporaryDirectory(prefix="ovb-ab-") as tmp:
        folder = tmp
        if keep is not None:
            os.makedirs(keep, exist_ok=True)
            folder = keep
        for i in range(warmup_pairs + pairs):
            for variant, cmd in (("A", cmd_a), ("B", cmd_b)):
                v = runner(cmd, field, folder, f"{variant}{i}")
                runs.append({"pair": i, "variant": variant, "value": v,
                             "warmup": i < warmup_pairs})
            if loss_rtol is not None:
                where = f"pair {i}"
                loss_diffs.append(loss_difference(
                    losses(os.path.join(folder, f"A{i}.json"), f"run A{i}"),
                    losses(os.path.join(folder, f"B{i}.json"), f"run B{i}"), where))
    a = [r["value"] for r in runs if r["variant"] == "A" and not r["warmup"]]
    b = [r["value"] for r in runs if r["variant"] == "B" and not r["warmup"]]
    if any(x <= 0 for x in a):
        raise AnalysisError("variant A measured a value <= 0: no ratio B/A")
    ratios = [y / x for x, y in zip(a, b)]
    doc = {"a": cmd_a, "b": cmd_b, "measure": field or "wall_ms", "pairs": pairs,
           "warmup_pairs": warmup_pairs, "order": "ABAB",
           "a_p50": stats.median(a), "b_p50": stats.median(b),
           "a_p10": stats.percentile(a, 10.0), "a_p90": stats.percentile(a, 90.0),
           "b_p10": stats.percentile(b, 10.0), "b_p90": stats.percentile(b, 90.0),
           "ratio_p10": stats.percentile(ratios, 10.0), "ratio_p50": stats.median(ratios),
           "ratio_p90": stats.percentile(ratios, 90.0),
           "overhead_pct_p50": 100.0 * (stats.median(ratios) - 1.0),
           "ratios": ratios, "runs": runs}
    if min(b) > 0:  # the speed-up A/B of each pair, its own percentiles
        speedups = [x / y for x, y in zip(a, b)]
        doc.update({"speedup_p50": stats.median(speedups),
                    "speedup_p10": stats.percentile(speedups, 10.0),
                    "speedup_p90": stats.percentile(speedups, 90.0)})
    if loss_rtol is not None:
        doc.update({"loss_rtol": loss_rtol, "loss_max_rel_diff": max(loss_diffs),
                    "loss_same": max(loss_diffs) <= loss_rtol})
    return doc


def markdown(doc):
    return "\n".join([
        f"A/B, {doc['pairs']} interleaved pairs ({doc['order']}, {doc['warmup_pairs']} warm-up "
        f"pair(s) left out), measure {doc['measure']}:",
        "",
        "| | median | p10 | p90 | |",
        "|---|---|---|---|---|",
        f"| A | {doc['a_p50']:.4g} | {doc['a_p10']:.4g} | {doc['a_p90']:.4g} | `{doc['a']}` |",
        f"| B | {doc['b_p50']:.4g} | {doc['b_p10']:.4g} | {doc['b_p90']:.4g} | `{doc['b']}` |",
        "",
        f"B/A per pair: median {doc['ratio_p50']:.4f} (p10 {doc['ratio_p10']:.4f}, "
        f"p90 {doc['ratio_p90']:.4f}); overhead {doc['overhead_pct_p50']:+.2f} %"
        + ("." if "speedup_p50" not in doc else
           f"; speed-up A/B {doc['speedup_p50']:.4f} (p10 {doc['speedup_p10']:.4f}, "
           f"p90 {doc['speedup_p90']:.4f})."),
    ] + ([] if "loss_rtol" not in doc else [
        "",
        f"Loss curves: largest relative difference B vs A {doc['loss_max_rel_diff']:.3g} "
        f"(tolerance {doc['loss_rtol']:.3g}): {'same' if doc['loss_same'] else 'DIFFERENT'}.",
    ]))
