"""Predicted and measured iteration on one time axis: the trace `ovb-model explain --timeline` writes
(one rank, a track per stream) above one steady-state iteration of a traced run (per rank, each
track of its trace), in ms from the iteration's start. Compute kernels blue, collectives orange,
the compute stream's exposed waits (predicted "wait" spans, measured MPI_Wait / sync events) red.
The measured iteration is the one of median duration on the first rank among those the warm-up
rule keeps (stats.default_warmup; the earliest of equally near ones); the other ranks are drawn
over the same interval of time. `ovb-trace merge` aligns the predicted iteration with the same one
in its Perfetto file (median_iteration() in profiling/src/analyze/steady_state.hpp).
Used by `ovb-analysis timeline PREDICTED TRACE_DIR -o OUT.png` (the suite's model-timeline-plot
steps)."""

from pathlib import Path

from matplotlib.patches import Patch

from .. import stats
from ..errors import AnalysisError
from ..io_util import load_json
from ..style import DOUBLE_COLUMN_IN, new_figure, paper_style, save_figure

COMPUTE, COMM, WAIT = "#0072B2", "#E69F00", "#D55E00"
WAIT_NAMES = ("MPI_Wait", "Event Sync", "Stream Sync", "Context Sync")


def _kind(e):
    """'compute', 'comm', 'wait' or None (ranges, metadata, other CPU events)."""
    if e.get("ph") != "X":
        return None
    cat, args = e.get("cat", ""), e.get("args") or {}
    if cat == "kernel":
        return "comm" if "collective" in args or str(e.get("name", "")).startswith("nccl") \
            else "compute"
    if cat == "cuda_sync" or (cat == "cuda_runtime" and e.get("name") in WAIT_NAMES):
        return "wait"
    return None


def _tracks(doc):
    """{(pid, tid): name} from the trace's thread_name metadata."""
    return {(e.get("pid"), e.get("tid")): (e.get("args") or {}).get("name", "")
            for e in doc.get("traceEvents", []) if e.get("ph") == "M"
            and e.get("name") == "thread_name"}


def _iterations(doc):
    """(start, end) us of the iteration ranges in time order: their GPU spans
    (gpu_user_annotation) when the trace has them, else the CPU ranges - as ovb-trace analyze and
    merge take them; a CUDA trace has both, and mixing them would count each iteration twice."""
    its = {}
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "X" and (e.get("args") or {}).get("category") == "iteration":
            its.setdefault(e.get("cat") == "gpu_user_annotation", []).append(
                (float(e["ts"]), float(e["ts"]) + float(e["dur"])))
    return sorted(its.get(True) or its.get(False) or [])


def median_index(durations_us):
    """Index of the duration nearest the median (the middle one, or the mean of the two middle
    ones), the first of equally near ones - as ovb-trace merge chooses (median_iteration()):
    compared exactly in whole nanoseconds, with twice the median, since the two middle ones of an
    even count are always equally near and float rounding must not pick the later one."""
    ns = [round(d * 1000) for d in durations_us]
    srt, n = sorted(ns), len(ns)
    median2 = 2 * srt[n // 2] if n % 2 else srt[n // 2 - 1] + srt[n // 2]
    return min(range(n), key=lambda i: (abs(2 * ns[i] - median2), i))


def _rows(doc, t0, t1, label):
    """[(row label, [(start_ms, dur_ms, colour)])] of the events overlapping [t0, t1] (us), one row
    per track that has any, clipped to the window and moved to start at 0."""
    names, rows = _tracks(doc), {}
    for e in doc.get("traceEvents", []):
        kind = _kind(e)
        if kind is None:
            continue
        s, d = float(e["ts"]), float(e.get("dur", 0))
        a, b = max(s, t0), min(s + d, t1)
        if b <= a:
            continue
        key = (e.get("pid"), e.get("tid"))
        colour = {"compute": COMPUTE, "comm": COMM, "wait": WAIT}[kind]
        rows.setdefault(key, []).append(((a - t0) / 1e3, (b - a) / 1e3, colour))
    out = []
    for key in sorted(rows, key=lambda k: (str(k[0]), str(k[1]))):
        # A track of waits alone: the host backend's CPU thread blocked in MPI_Wait.
        waits = all(c == WAIT for _, _, c in rows[key])
        track = (names.get(key) or f"thread {key[1]}") + (" waits" if waits else "")
        out.append((f"{label} {track}", rows[key]))
    return out


def _load_measured(trace_dir):
    files = sorted(Path(trace_dir).glob("*trace.json")) or sorted(Path(trace_dir).glob("*.json"))
    if not files:
        raise AnalysisError(f"{trace_dir}: no trace files (*trace.json)")
    docs = [load_json(f) for f in files]
    docs.sort(key=lambda d: (d.get("distributedInfo") or {}).get("rank", 0))
    return docs


def make(predicted_path, trace_dir, out_png):
    """Draws the figure; returns (paths written, predicted ms, measured ms)."""
    pred = load_json(predicted_path)
    if "traceEvents" not in pred or (pred.get("ovbTracer") or {}).get("tracer") != "model":
        raise AnalysisError(f"{predicted_path}: not a predicted trace (ovb-model explain "
                            "--timeline)")
    measured = _load_measured(trace_dir)
    its = _iterations(measured[0])
    if not its:
        raise AnalysisError(f"{trace_dir}: the first rank's trace marks no iteration")
    kept = its[stats.default_warmup(len(its)):] or its[-1:]
    t0, t1 = kept[median_index([b - a for a, b in kept])]
    durations = [b - a for a, b in kept]
    p_its = _iterations(pred)
    p0, p1 = p_its[0] if p_its else (0.0, max(float(e["ts"]) + float(e.get("dur", 0))
                                              for e in pred["traceEvents"] if e.get("ph") == "X"))
    rows = _rows(pred, p0, p1, "predicted:")
    for doc in measured:
        rank = (doc.get("distributedInfo") or {}).get("rank", "?")
        rows += _rows(doc, t0, t1, f"rank {rank}:")
    pred_ms, meas_ms = (p1 - p0) / 1e3, (t1 - t0) / 1e3
    with paper_style():
        fig = new_figure(DOUBLE_COLUMN_IN, 0.9 + 0.22 * len(rows))
        ax = fig.add_subplot()
        for i, (_, bars) in enumerate(rows):
            y = len(rows) - 1 - i
            for colour in (COMPUTE, COMM, WAIT):
                spans = [(s, d) for s, d, c in bars if c == colour]
                if spans:
                    ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=colour, linewidth=0)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([label for label, _ in reversed(rows)], fontsize=6)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_xlim(0, max(pred_ms, meas_ms))
        ax.set_xlabel("ms from the iteration's start")
        ax.set_title(f"predicted iteration {pred_ms:.2f} ms vs measured {meas_ms:.2f} ms (median "
                     f"of {len(kept)} steady-state iterations, range {min(durations) / 1e3:.2f}-"
                     f"{max(durations) / 1e3:.2f} ms)", fontsize=7)
        handles = [Patch(color=c, label=n) for c, n in
                   ((COMPUTE, "compute"), (COMM, "communication"), (WAIT, "exposed wait"))]
        fig.legend(handles=handles, fontsize=6, loc="outside lower center", ncols=3)
        out = Path(out_png)
        paths = save_figure(fig, str(out.parent), out.name[:-4] if out.suffix == ".png"
                            else out.name)
    return paths, pred_ms, meas_ms
