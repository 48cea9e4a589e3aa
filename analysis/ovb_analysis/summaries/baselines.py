"""Summary of an `ovb-suite run --preset baselines` folder: ovb-collective against nccl-tests
(the nccl-compare JSONs), gpt4d against the PyTorch reference (eager, torch.compile,
max-autotune) with the same statistics for every system, and Megatron-LM (local implementation)
against gpt4d. Not ok when a judged collective size is outside the tolerance.
"""

from pathlib import Path

from .. import stats
from .common import Summary, load_optional

TITLE = "Side by side: nccl-tests, PyTorch, Megatron-LM"
JSON_NAME = "baselines.json"
SYSTEMS = (("gpt4d", "gpt4d_{shape}.json"), ("PyTorch eager", "torch_{shape}_eager.json"),
           ("torch.compile", "torch_{shape}_compile.json"),
           ("torch.compile max-autotune", "torch_{shape}_max-autotune.json"))


def timing(doc):
    """(n timed, median, p10, p90 ms, TFLOP/s at the median) of a gpt4d or pytorch_gpt result:
    the iterations after the run's own warm-up, the same rule for every system."""
    warm = int(doc["summary"]["warmup_iters"])
    times = [float(i["time_ms"]) for i in doc["iterations"][warm:]]
    if not times:
        return None
    med, p10, p90 = stats.spread(times)
    flop = doc["summary"].get("model_flop_per_iter")
    return len(times), med, p10, p90, (flop / (med / 1e3) / 1e12 if flop else None)


def _size(shape):
    """Sort key of a GPT shape name: 125M before 1.3B; other names last, by name."""
    try:
        return (0, float(shape[:-1]) * {"M": 1e6, "B": 1e9}[shape[-1]], shape)
    except (ValueError, KeyError, IndexError):
        return (1, 0.0, shape)


def collectives(out, md, doc, problems):
    """ovb-collective against nccl-tests (also gpu-check's section)."""
    files = sorted((Path(out) / "collectives").glob("compare-*.json"))
    if not files:
        md.append("No nccl-tests comparison yet (collectives/compare-*.json).\n")
        return
    md.append("## ovb-collective vs nccl-tests (ranks sharing the GPU: loopback sockets)\n")
    md.append("| ranks | collective | placement | size (B) | nccl-tests busbw | ovb-collective "
              "busbw | ovb / nccl | verdict |")
    md.append("|---|---|---|---|---|---|---|---|")
    for f in files:
        res = load_optional(f)
        if not res:
            problems.append(f"{f.name}: unreadable")
            continue
        ranks = f.stem.removeprefix("compare-")
        doc["collectives"][ranks] = res
        for r in res["rows"]:
            if not r["judged"]:
                continue
            verdict = "within" if r["within"] else "**outside**"
            md.append(f"| {ranks} | {r['op']} | {r['placement']} | {r['size']} | "
                      f"{r['nccl_busbw']:.2f} | {r['ovb_busbw']:.2f} | {r['ratio']:.3f} | "
                      f"{verdict} {res['tolerance_pct']:g} % |")
        if res["outside"]:
            problems.append(f"{ranks}: {res['outside']} of {res['judged']} sizes outside "
                            f"{res['tolerance_pct']:g} % of nccl-tests' busbw")
    md.append("")


def _training(out, md, doc):
    folder = Path(out) / "training"
    shapes = sorted({p.stem.split("_")[1] for p in folder.glob("*_*.json")}, key=_size)
    if not shapes:
        md.append("No gpt4d / PyTorch runs yet (training/).\n")
        return
    md.append("## gpt4d vs the PyTorch reference (batch as run, bf16, one GPU)\n")
    md.append("Every row: the iterations after the run's warm-up; median, p10 and p90 computed "
              "the same way for every system.\n")
    md.append("| shape | system | n | median ms | p10-p90 ms | TFLOP/s | gpt4d speedup |")
    md.append("|---|---|---|---|---|---|---|")
    for shape in shapes:
        base = None
        for system, pattern in SYSTEMS:
            res = load_optional(folder / pattern.format(shape=shape))
            t = timing(res) if res else None
            if t is None:
                continue
            n, med, p10, p90, tf = t
            base = med if system == "gpt4d" else base
            speed = f"{med / base:.2f}x" if base and system != "gpt4d" else ""
            doc["training"].append({"shape": shape, "system": system, "n": n, "median_ms": med,
                                    "p10_ms": p10, "p90_ms": p90, "tflops": tf})
            md.append(f"| {shape} | {system} | {n} | {med:.1f} | {p10:.1f}-{p90:.1f} | "
                      f"{'-' if tf is None else f'{tf:.1f}'} | {speed} |")
    md.append("")


def _megatron(out, md, doc):
    res = load_optional(Path(out) / "megatron" / "compare.json")
    if not res:
        md.append("No Megatron-LM comparison yet (megatron/compare.json).\n")
        return
    doc["megatron"] = res
    md.append("## gpt4d vs Megatron-LM (1.3B, matched by `ovb-analysis megatron-cmd --gpt4d`)\n")
    md.append("Megatron-LM ran without Transformer Engine: its `local` implementation "
              "(`--transformer-impl local`), not its fastest configuration.\n")
    md.append("| system | n | median ms | p10-p90 ms | TFLOP/s per GPU |")
    md.append("|---|---|---|---|---|")
    for r in res["rows"]:
        tf = r.get("tflops_per_gpu")
        md.append(f"| {r['system']} | {r['iterations_used']} | {r['median_ms']:.1f} | "
                  f"{r['p10_ms']:.1f}-{r['p90_ms']:.1f} | {'-' if tf is None else f'{tf:.1f}'} |")
    md.append(f"\nMegatron-LM / gpt4d time: {res['speedup']:.2f}x.")
    for m in res.get("mismatches", []):
        md.append(f"- not matched: {m}")
    md.append("")


def summarize(out):
    md, problems = [], []
    doc = {"collectives": {}, "training": [], "megatron": None}
    collectives(out, md, doc, problems)
    _training(out, md, doc)
    _megatron(out, md, doc)
    return Summary("\n".join(md) + "\n", doc, ok=not problems, problems=problems)
