"""Training runs of both systems (gpt4d results and Megatron-LM logs) in one shape, and their
statistics with the suite's single FLOP formula (metrics.gpt_model_flop).

Warm-up: the first `stats.default_warmup(n)` iterations (max(3, 10%)) are dropped unless a count is
given; the same rule is applied to both systems. Megatron's iteration number decides what is warm-up,
so a log that starts at iteration 1 loses iterations 1..N.
"""

from dataclasses import dataclass, field

from . import metrics, overlap_flags, stats
from .errors import AnalysisError

MEGATRON = "Megatron-LM"
GPT4D = "gpt4d"


@dataclass
class Run:
    system: str
    source: str
    model: dict            # layers, hidden, heads, seq, vocab (None where unknown), preset; arch
                           # and kv_heads where the run says (absent or None: gpt, as many as heads)
    batch: int
    gpus: int
    layout: str            # "1x2x1x4" (Gx x Gy x Gz x Gdata) or "TP2 PP1 DP4"
    flags: str             # overlap flags, "none" when off
    iters: list            # iteration numbers (1-based for Megatron, position+1 for gpt4d)
    times_ms: list
    own_tflops: list = field(default_factory=list)  # the system's own figure per iteration or None
    peak: float = None
    context: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def _peak_of_gpt4d(doc):
    dtype = doc["config"].get("dtype", "bf16")
    peaks = ((doc.get("context") or {}).get("device") or {}).get("peak_tflops") or {}
    if isinstance(peaks, dict) and peaks.get(dtype):
        return float(peaks[dtype])
    if (doc.get("summary") or {}).get("peak_tflops"):  # gpt4d writes the peak it used here too
        return float(doc["summary"]["peak_tflops"])
    return None  # unknown GPU: the C++ side wrote no peak (metrics.py keeps no table of its own)


def gpu_count(doc):
    """GPUs of a gpt4d run, the n of TFLOP/s per GPU: config.devices when gpt4d wrote it (ranks
    may share a GPU: --ranks-per-gpu), else the world size over context.ranks_per_gpu, else the
    grid's product."""
    cfg, ctx = doc["config"], doc.get("context") or {}
    if cfg.get("devices"):
        return int(cfg["devices"])
    g = cfg["grid"]
    world = cfg.get("world_size") or ctx.get("world_size") or \
        int(g["gx"]) * int(g["gy"]) * int(g["gz"]) * int(g["gdata"])
    per_gpu = ctx.get("ranks_per_gpu") or 1
    return max(1, int(world) // int(per_gpu))


def from_gpt4d(rf):
    doc = rf.doc
    cfg = doc["config"]
    grid = cfg["grid"]
    g = [int(grid[k]) for k in ("gx", "gy", "gz", "gdata")]
    layout = "x".join(map(str, g))
    if grid.get("order", "x,y,z") != "x,y,z":
        layout += f" ({grid['order']})"
    its = doc["iterations"]
    flags = overlap_flags.text(cfg.get("overlap"))
    run = Run(GPT4D, rf.rel, dict(cfg["model"]), int(cfg["batch"]), gpu_count(doc),
              layout, flags, list(range(1, len(its) + 1)),
              [float(it["time_ms"]) for it in its],
              [it.get("tflops_per_gpu") for it in its],
              _peak_of_gpt4d(doc), doc.get("context") or {})
    run.extra = {"summary": doc.get("summary") or {}, "grid": g, "overlap": cfg.get("overlap") or [],
                 "recompute": bool(cfg.get("recompute")),
                 "priorities": (cfg.get("comm_priority", "high"), cfg.get("compute_priority", "normal"))}
    if not run.times_ms:  # only the summary was kept
        if "median_time_ms" not in run.extra["summary"]:
            raise AnalysisError(f"{rf.rel}: gpt4d result without iteration times (empty "
                                "'iterations' and no 'summary.median_time_ms')")
        run.times_ms, run.iters = [float(run.extra["summary"]["median_time_ms"])], [1]
        run.own_tflops = [run.extra["summary"].get("tflops_per_gpu")]
    return run


def from_megatron(rf, fallback=None):
    """A Run from a parsed Megatron log. The model, batch and GPU count come from the run's config
    (megatron_config.json or the log's arguments block), else from `fallback` (the matched gpt4d
    Run)."""
    doc = rf.doc
    recs = doc["records"]
    cfg = dict(doc.get("config") or {})
    if fallback is not None:
        for key in ("layers", "hidden", "heads", "seq", "vocab"):
            if cfg.get(key) is None:
                cfg[key] = fallback.model.get(key)
        cfg.setdefault("gpus", fallback.gpus)
    if cfg.get("layers") is None or cfg.get("gpus") is None:
        raise AnalysisError(f"{rf.rel}: the model and GPU count of this Megatron-LM run are unknown "
                            "(no megatron_config.json beside it and no arguments block in the log)")
    batch = recs[-1].get("global_batch_size") or cfg.get("global_batch")
    if batch is None:
        raise AnalysisError(f"{rf.rel}: the global batch of this Megatron-LM run is unknown (no "
                            "'global batch size' in its iteration lines and no configuration)")
    tp, pp = int(cfg.get("tp", 1)), int(cfg.get("pp", 1))
    dp = cfg.get("dp") or int(cfg["gpus"]) // (tp * pp)
    flags = [name for key, name in (("distributed_optimizer", "dist-opt"),
                                    ("overlap_grad_reduce", "ogr"), ("overlap_param_gather", "opg"),
                                    ("tp_comm_overlap", "tpco"), ("sequence_parallel", "sp"))
             if cfg.get(key)]
    model = {k: cfg.get(k) for k in ("arch", "layers", "hidden", "heads", "kv_heads", "seq",
                                      "vocab")}
    model["preset"] = cfg.get("preset")
    return Run(MEGATRON, rf.rel, model, int(batch), int(cfg["gpus"]), f"TP{tp} PP{pp} DP{dp}",
               ",".join(flags) or "none", [r["iteration"] for r in recs],
               [float(r["elapsed_ms"]) for r in recs],
               [r.get("tflops_per_gpu") for r in recs],
               cfg.get("peak_tflops"), {}, {"recompute": bool(cfg.get("recompute"))})


def model_flop(run):
    m = run.model
    missing = [k for k in ("layers", "hidden", "seq", "vocab") if m.get(k) is None]
    if missing:
        raise AnalysisError(f"{run.source}: model {', '.join(missing)} unknown; cannot count FLOP")
    if (m.get("arch") or "gpt") == "llama":
        missing = [k for k in ("heads", "kv_heads", "ffn_hidden") if not m.get(k)]
        if missing:
            raise AnalysisError(f"{run.source}: Llama model {', '.join(missing)} unknown; cannot "
                                "count FLOP")
        p = metrics.llama_block_linear_params(m["hidden"], m["heads"], m["kv_heads"],
                                              m["ffn_hidden"])
        return metrics.transformer_model_flop(run.batch, m["seq"], m["layers"], m["hidden"],
                                              m["vocab"], p)
    return metrics.gpt_model_flop(run.batch, m["seq"], m["layers"], m["hidden"], m["vocab"])


def run_stats(run, warmup=None):
    """Median, p10 and p90 iteration time after warm-up; TFLOP/s per GPU from the median time (and
    from p90/p10 for the spread) with the suite's formula; the system's own figure (median)
    beside it."""
    n = len(run.times_ms)
    drop = stats.default_warmup(n) if warmup is None else int(warmup)
    first = run.iters[0] - 1 if run.iters else 0
    keep = [it - first > drop for it in run.iters]
    kept = [t for k, t in zip(keep, run.times_ms) if k]
    if not kept:
        raise AnalysisError(f"{run.source}: no iterations left after dropping {drop} warm-up "
                            f"iterations of {n}")
    if min(kept) <= 0:
        raise AnalysisError(f"{run.source}: non-positive iteration time {min(kept)} ms")
    med, p10, p90 = stats.spread(kept)
    flop = model_flop(run)
    tf = metrics.tflops_per_gpu(flop, med / 1e3, run.gpus)
    own = [float(v) for k, v in zip(keep, run.own_tflops) if k and v is not None]
    return {"warmup": drop, "iterations_used": len(kept), "median_ms": med, "p10_ms": p10,
            "p90_ms": p90, "model_flop": flop, "tflops_per_gpu": tf,
            "tflops_p10": metrics.tflops_per_gpu(flop, p90 / 1e3, run.gpus),
            "tflops_p90": metrics.tflops_per_gpu(flop, p10 / 1e3, run.gpus),
            "own_tflops_per_gpu": stats.median(own) if own else None,
            "peak_tflops": run.peak,
            "pct_peak": metrics.percent_of_peak(tf, run.peak)}
