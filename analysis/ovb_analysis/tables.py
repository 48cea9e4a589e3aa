"""Tables of the key numbers of a result set, shared by the HTML and Markdown reports.

Each table is (title, header, rows of strings, note); rows come out in a fixed order so the report
is byte-identical for the same input.
"""

import os
from dataclasses import dataclass, field

from . import runs, stats
from .errors import AnalysisError
from .plots import collective, gemm, overlap
from .plots.scaling import arch, collect, size_label


COLLAPSE_ABOVE = 3  # files not read for the same reason listed one by one up to this many


@dataclass
class Table:
    title: str
    header: list
    rows: list
    note: str = ""
    extra: dict = field(default_factory=dict)


def fmt(value, spec=None):
    """Text of a table cell. Floats default to one decimal, and to two significant digits below 1
    so that a host run's 0.004 TFLOP/s does not read 0.0."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if spec is None:
            return f"{value:.2g}" if 0 < abs(value) < 0.95 else f"{value:.1f}"
        return spec.format(value)
    return str(value)


def context_table(rs, options=None):
    keys = {}
    for f in rs.files:
        ctx = f.doc.get("context") if isinstance(f.doc, dict) else None
        if not isinstance(ctx, dict):
            continue
        dev = ctx.get("device") or {}
        ver = ctx.get("versions") or {}
        # ovb-model and the analysis run on no device: say so instead of "-".
        ran = bool(dev) or "backend" in ctx
        git = ctx.get("git_revision", "-")
        key = (ctx.get("host", "-"), dev.get("name", "-") if ran else "none (model/analysis)",
               ctx.get("backend", "-") if ran else "none",
               ctx.get("suite_version", "-"), "not recorded" if git == "unknown" else git,
               ctx.get("build_type", "-"), ver.get("driver", "-"), ver.get("cuda_runtime", "-"),
               ver.get("nccl", "-"), str(ver.get("mpi", "-")).split(",")[0])
        keys.setdefault(key, []).append(str(ctx.get("date", "")))
    rows = []
    for key, dates in sorted(keys.items(), key=lambda kv: [str(x) for x in kv[0]]):
        ds = sorted(d for d in dates if d)
        span = "-" if not ds else ds[0] if ds[0] == ds[-1] else f"{ds[0]} .. {ds[-1]}"
        rows.append([fmt(x) for x in key] + [span, str(len(dates))])
    note = ("git \"not recorded\": the build had neither a .git folder nor -DOVB_GIT_REVISION."
            if any(r[4] == "not recorded" for r in rows) else "")
    return Table("Run context", ["host", "device", "backend", "suite", "git", "build", "driver",
                                 "CUDA", "NCCL", "MPI", "date", "files"], rows, note=note)


def inputs_table(rs, options=None):
    """Files read, and those not read with the reason; many files with one reason (e.g. a suite's
    step logs) share one row."""
    rows = [[f.rel, f.kind] for f in rs.files]
    for why, rels in sorted(_group(rs.ignored, lambda r: r[1]).items()):
        rels = sorted(rel for rel, _ in rels)
        if len(rels) > COLLAPSE_ABOVE:
            rows.append([f"{rels[0]} and {len(rels) - 1} more", f"not read: {why}"])
        else:
            rows += [[rel, f"not read: {why}"] for rel in rels]
    return Table("Result files read", ["file", "kind"], sorted(rows))


def collective_table(rs, options=None):
    pts = collective.alone_points(rs)
    rows = []
    for (coll, grp), ps in sorted(_group(pts, lambda p: (p[0], p[1])).items()):
        largest = max(ps, key=lambda p: p[2])
        rows.append([coll, grp, str(len({p[2] for p in ps})), fmt(max(p[3] for p in ps)),
                     fmt(largest[3]), f"{int(largest[2])}"])
    return Table("Collective bus bandwidth (alone)", ["collective", "group / setting", "sizes",
                                                      "peak busbw GB/s", "busbw at largest GB/s",
                                                      "largest bytes"], rows)


def gemm_table(rs, options=None):
    rows = [[s, "x".join(map(str, shape)), fmt(tf), fmt(pct)]
            for s, shape, tf, pct in sorted(gemm.gemm_rows(rs), key=lambda r: (r[0], r[1]))]
    return Table("GEMM throughput", ["series", "M x N x K", "TFLOP/s", "% of peak"], rows)


def overlap_table(rs, options=None):
    rows = []
    members_all = overlap.overlap_rows(rs)
    keys = overlap.setting_keys(members_all) + ["prio"]
    grouped = _group(members_all, lambda r: overlap.setting(r, keys))
    for key, members in sorted(grouped.items()):
        med = [fmt(_median(members, k), "{:.2f}") for k in
               ("overlap_efficiency", "speedup_vs_serial", "fraction_of_ideal",
                "compute_slowdown", "comm_slowdown")]
        rows.append(list(key) + [str(len(members))] + med)
    return Table("Overlap microbenchmark (medians over GEMM and message sizes)",
                 keys + ["points", "overlap eff.", "speedup vs serial", "fraction of ideal",
                         "compute slowdown", "comm slowdown"], rows)


def training_table(rs, options):
    rows = []
    for run, st in sorted(collect(rs, options), key=lambda p: (p[0].system, p[0].gpus, p[0].source)):
        rows.append([run.system, run.source, size_label(run.model), str(run.batch), str(run.gpus),
                     run.layout, run.flags, str(st["iterations_used"]), fmt(st["median_ms"]),
                     fmt(st["p10_ms"]), fmt(st["p90_ms"]), fmt(st["tflops_per_gpu"]),
                     fmt(st["own_tflops_per_gpu"]), fmt(st["pct_peak"])])
    return Table("Training runs", ["system", "file", "model", "batch", "GPUs", "layout", "overlap",
                                   "iters", "median ms", "p10 ms", "p90 ms", "TFLOP/s/GPU",
                                   "own figure", "% peak"], rows,
                 "TFLOP/s/GPU recomputed for both systems with F = 72Bs Lh^2 (1 + s/12h + V/12Lh) "
                 "(Llama: 6Bs (LP + hV) + 6Bs^2 Lh, P the weights of one block) "
                 "from the median time after warm-up (the first max(3, 10%) iterations unless "
                 "--warmup is given); p10/p90 of the iteration time; 'own figure' is the "
                 "system's own number.")


def megatron_table(rs, options):
    pairs = collect(rs, options)
    gpt = [p for p in pairs if p[0].system == runs.GPT4D]
    rows = []
    for mrun, mst in (p for p in pairs if p[0].system == runs.MEGATRON):
        key = (runs_key(mrun), mrun.batch, mrun.gpus)
        matched = [p for p in gpt if (runs_key(p[0]), p[0].batch, p[0].gpus) == key]
        if not matched:
            continue
        grun, gst = min(matched, key=lambda p: (p[1]["median_ms"], p[0].source))
        rows.append([size_label(mrun.model), str(mrun.gpus), str(mrun.batch),
                     f"{grun.layout} {grun.flags}", fmt(gst["median_ms"]), fmt(gst["tflops_per_gpu"]),
                     f"{mrun.layout} {mrun.flags}", fmt(mst["median_ms"]), fmt(mst["tflops_per_gpu"]),
                     fmt(mst["own_tflops_per_gpu"]),
                     fmt(mst["median_ms"] / gst["median_ms"], "{:.2f}")])
    return Table("gpt4d vs Megatron-LM (matched model, batch, GPUs; best gpt4d run)",
                 ["model", "GPUs", "batch", "gpt4d layout", "gpt4d ms", "gpt4d TFLOP/s/GPU",
                  "Megatron layout", "Megatron ms", "Megatron TFLOP/s/GPU", "Megatron own figure",
                  "speedup"], rows, "speedup = Megatron median time / gpt4d median time")


def runs_key(run):
    """What makes two runs the same model: the architecture and shape (K/V heads: 0 or absent is
    as many as the query heads)."""
    m = run.model
    return (arch(m), m.get("kv_heads") or m.get("heads")) + tuple(
        m.get(k) for k in ("layers", "hidden", "heads", "seq", "vocab"))


def trace_table(rs, options=None):
    rows = []
    for f in rs.of("trace"):
        s = f.doc.get("summary") or {}
        rows.append([f.rel, str(len(f.doc.get("ranks") or []))] +
                    [fmt(_ms(s.get(k))) for k in ("span_us", "busy_us", "idle_us", "compute_us",
                                                   "comm_us", "exposed_comm_us")] +
                    [fmt(s.get("overlap_pct"))])
    return Table("Trace analysis (mean over ranks)", ["file", "ranks", "span ms", "busy ms",
                                                      "idle ms", "compute ms", "comm ms",
                                                      "exposed comm ms", "overlap %"], rows)


def _ranks_text(ranks):
    ranks = sorted(ranks)
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return "ranks " + ", ".join(map(str, ranks))


def merged_trace_table(rs, options=None):
    """ovb-trace merge's files: which sources and ranks each holds, and where a predicted
    iteration was put on the measured run's clock (its header's mergedFrom and alignment)."""
    rows = []
    for f in rs.of("merged_trace"):
        by_source = {}
        for m in f.doc["mergedFrom"]:
            by_source.setdefault(m.get("source", "measured"), []).append(int(m["rank"]))
        held = "; ".join(f"{src} {_ranks_text(r)}" for src, r in sorted(by_source.items()))
        a = f.doc.get("alignment")
        if not isinstance(a, dict):
            aligned = "-"
        elif int(a.get("iteration", -1)) < 0:
            aligned = (f"start of measured rank {a.get('measured_rank')}'s trace (no iteration "
                       "marks)")
        else:
            aligned = (f"measured rank {a.get('measured_rank')}'s iteration {a['iteration']} of "
                       f"{a.get('iterations')} (median steady-state, {a.get('warmup')} warm-up)")
        ms = [a[k] / 1e6 if isinstance(a, dict) and k in a else None
              for k in ("measured_ns", "predicted_ns")]
        rows.append([f.rel, held, aligned] + [fmt(x, "{:.3f}") for x in ms])
    return Table("Traces for Perfetto", ["file (in the results folder)", "processes",
                                         "predicted iteration aligned with", "measured ms",
                                         "predicted ms"], rows,
                 note="Open a file in ui.perfetto.dev (Open trace file): each rank of "
                      "each source is a process of its own, \"measured rank R: ...\" and "
                      "\"predicted rank R: ...\" (ovb-trace merge, profiling/README.md)."
                 if rows else "")


def model_table(rs, options=None):
    rows = []
    for f in rs.of("model_compare"):
        errs = [abs(float(c["error_pct"])) for c in f.doc["configs"] if c.get("error_pct") is not None]
        rows.append([f.rel, str(len(f.doc["configs"])), fmt(f.doc.get("spearman"), "{:.2f}"),
                     fmt(f.doc.get("measured_best_in_top_k")), fmt(f.doc.get("k")),
                     fmt(stats.median(errs) if errs else None), fmt(max(errs) if errs else None)])
    return Table("Model vs measurement", ["file", "configs", "Spearman", "measured best in top-k",
                                          "k", "median |error| %", "max |error| %"], rows)


# The validation file's 'verified' per run (its 'unverified' says which figures and why).
VERIFIED = {True: "yes", False: "not all (see the validation file)"}


def validation_table(rs, options=None):
    """ovb-model validate: published vs predicted TFLOP/s per GPU, run by run."""
    rows = []
    for f in rs.of("model_validation"):
        tol = float(f.doc["tolerance_pct"])
        for r in f.doc["rows"]:
            within = "yes" if r.get("within_tolerance") else (
                "known miss" if r.get("known_miss") else "NO")
            rows.append([r["id"], str(r.get("strategy", "")), str(r.get("machine", "")),
                         fmt(r.get("gpus")), str(r.get("config", "")), str(r.get("convention", "")),
                         fmt(r["published_tflops_per_gpu"], "{:.1f}"),
                         fmt(r["predicted_tflops_per_gpu"], "{:.1f}"),
                         fmt(r["error_pct"], "{:+.1f}"), f"{within} (+-{tol:.0f} %)",
                         VERIFIED.get(r.get("verified"), "not stated")])
    return Table("Model validation", ["run", "strategy", "machine", "GPUs", "configuration",
                                      "FLOPs", "published TF/GPU", "predicted TF/GPU", "error %",
                                      "within", "figures checked against the source"], rows)


def all_tables(rs, options):
    """Every table with rows; one that cannot be made says why instead of failing the report."""
    out = []
    for make in (context_table, inputs_table, collective_table, gemm_table, overlap_table,
                 trace_table, merged_trace_table, model_table, validation_table, training_table,
                 megatron_table):
        try:
            out.append(make(rs, options))
        except AnalysisError as e:
            out.append(Table(TITLES[make.__name__], [], [], f"not made: {e}"))
        except Exception as e:  # noqa: BLE001  unforeseen data: listed, the rest goes on
            if os.environ.get("OVB_ANALYSIS_DEBUG"):
                raise
            out.append(Table(TITLES[make.__name__], [], [],
                             f"not made: unexpected data ({type(e).__name__}: {e})"))
    return [t for t in out if t.rows or t.note.startswith("not made")]


TITLES = {"context_table": "Run context", "inputs_table": "Result files read",
          "collective_table": "Collective bus bandwidth (alone)", "gemm_table": "GEMM throughput",
          "overlap_table": "Overlap microbenchmark", "trace_table": "Trace analysis",
          "merged_trace_table": "Traces for Perfetto",
          "model_table": "Model vs measurement", "validation_table": "Model validation",
          "training_table": "Training runs",
          "megatron_table": "gpt4d vs Megatron-LM"}


def _group(items, key):
    out = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out


def _median(rows, key):
    vals = stats.finite(r.get(key) for r in rows)
    return stats.median(vals) if vals else None


def _ms(us):
    return None if us is None else float(us) / 1e3
