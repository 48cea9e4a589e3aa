"""Summary of an `ovb-suite run --preset llama-gpu` folder: the Llama CUDA kernel tests,
llama-tiny's loss on host and CUDA, gpt4d's host backend against the PyTorch reference on the
CPU, and gpt4d beside the PyTorch reference on llama3-8B's block shape, every system timed the
same way (baselines.timing). Not ok when a kernel test fails or none ran, CUDA fp32 leaves the
host's loss curve, gpt4d's loss leaves the reference's, a timed run has fewer than 20 samples, or
the reference did not run the shape, batch and iterations of gpt4d (a comparison of different
runs is no comparison).
"""

from pathlib import Path

from .baselines import timing
from .common import Summary, load_optional

TITLE = "gpt4d's Llama on the GPU"
JSON_NAME = "llama-gpu.json"
MIN_TIMED = 20
LOSS_TOLERANCE = 1e-3  # relative, CUDA fp32 against host fp32 (as the gpt4d-gpu preset)
SYSTEMS = (("gpt4d", "gpt4d_{shape}.json"), ("PyTorch eager", "torch_{shape}_eager.json"),
           ("torch.compile", "torch_{shape}_compile.json"))
# What must be equal between gpt4d's run and the reference's for the rows to be compared.
SAME_MODEL = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq", "vocab", "rope_theta")


def kernels(out, md, doc, problems):
    """The Llama kernel tests' section (also gpu-check's)."""
    kt = load_optional(Path(out) / "kernel_tests.json")
    if kt is None:
        md.append("No kernel tests yet (kernel_tests.json).\n")
        return
    # GoogleTest's JSON: a case that ran has status RUN, result COMPLETED or SKIPPED, and a
    # non-empty "failures" list when an assertion failed.
    cases = [t for s in kt.get("testsuites", []) for t in s.get("testsuite", [])
             if t.get("status", "RUN") == "RUN"]
    skipped = sum(1 for t in cases if t.get("result") == "SKIPPED")
    failed = sum(1 for t in cases if t.get("failures"))
    ran = len(cases) - skipped
    doc["kernel_tests"] = {"run": ran, "failed": failed, "skipped": skipped}
    md.append(f"Llama kernel tests (CUDA against host): {ran} run, {failed} failed, "
              f"{skipped} skipped.\n")
    if failed:
        problems.append(f"{failed} of {ran} kernel tests failed")
    if ran == 0:
        problems.append("no kernel test ran (every case skipped or filtered out)")


def losses(out, md, doc, problems):
    """llama-tiny's loss on host and CUDA (also gpu-check's)."""
    runs = {n: load_optional(Path(out) / f"compare_{n}.json") for n in ("host", "cuda_fp32", "cuda_bf16")}
    if not all(runs.values()):
        md.append("No llama-tiny loss comparison yet (compare_*.json).\n")
        return
    its = [r["iterations"] for r in runs.values()]
    md.append("## llama-tiny on host and CUDA (text, 30 iterations)\n")
    md.append("| iteration | host fp32 | cuda fp32 | cuda bf16 |")
    md.append("|---|---|---|---|")
    for i in range(0, len(its[0]), 5):
        md.append(f"| {i + 1} | " + " | ".join(f"{it[i]['loss']:.4f}" for it in its) + " |")
    worst = max(abs(a["loss"] - b["loss"]) / abs(b["loss"]) for a, b in zip(its[1], its[0]))
    doc["loss_deviation_cuda_fp32"] = worst
    passed = worst < LOSS_TOLERANCE and len(its[1]) == len(its[0])
    md.append(f"\nLargest relative deviation cuda fp32 vs host: {worst:.2e} "
              f"({'ok' if passed else 'FAILED'}: < {LOSS_TOLERANCE:g}).\n")
    if not passed:
        problems.append(f"CUDA fp32 left the host's loss curve ({worst:.2e} relative)")


def _same_model(out, md, doc, problems):
    res = load_optional(Path(out) / "same_model.json")
    if res is None:
        md.append("No check of gpt4d against the PyTorch reference on the CPU yet "
                  "(same_model.json).\n")
        return
    doc["same_model"] = res
    md.append("## gpt4d's host backend against the PyTorch reference (CPU, fp32, same weights)\n")
    md.append("| model | iterations | largest relative loss difference | verdict |")
    md.append("|---|---|---|---|")
    for arch, r in res["runs"].items():
        md.append(f"| {arch} | {len(r['gpt4d'])} | {r['worst_relative']:.2e} | "
                  f"{'ok' if r['passed'] else 'FAILED'} (<= {res['tolerance']:g}) |")
        if not r["passed"]:
            problems.append(f"{arch}: gpt4d's loss left the PyTorch reference's "
                            f"({r['worst_relative']:.2e} relative)")
    md.append("")


def _mismatch(ref, base):
    """What differs between a reference run and gpt4d's (shape, batch, iterations), or []."""
    rm, bm = ref["config"]["model"], base["config"]["model"]
    out = [f"{k} {rm.get(k)} vs {bm.get(k)}" for k in SAME_MODEL if rm.get(k) != bm.get(k)]
    for k in ("batch", "iters"):
        if ref["config"].get(k) != base["config"].get(k):
            out.append(f"{k} {ref['config'].get(k)} vs {base['config'].get(k)}")
    if ref["summary"]["warmup_iters"] != base["summary"]["warmup_iters"]:
        out.append(f"warm-up {ref['summary']['warmup_iters']} vs "
                   f"{base['summary']['warmup_iters']}")
    return out


def _training(out, md, doc, problems):
    folder = Path(out) / "training"
    shapes = sorted({p.stem.split("_")[1] for p in folder.glob("gpt4d_*.json")})
    if not shapes:
        md.append("No llama3-8B-shaped runs yet (training/).\n")
        return
    md.append("## gpt4d beside the PyTorch reference (bf16, one GPU)\n")
    md.append("Every row: the iterations after the run's warm-up; median, p10 and p90 computed the "
              "same way for every system; TFLOP/s = the run's model FLOP per iteration "
              "(docs/metrics.md) / the median; MFU against gpt4d's peak for the GPU; peak memory: "
              "gpt4d the driver's used memory, PyTorch torch.cuda.max_memory_allocated (without "
              "its caching allocator's reserve and the CUDA context).\n")
    md.append("| shape | system | n | median ms | p10-p90 ms | TFLOP/s | MFU | peak memory GiB | "
              "time / gpt4d's |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for shape in shapes:
        base = load_optional(folder / f"gpt4d_{shape}.json")
        if base is None:
            problems.append(f"gpt4d_{shape}.json: unreadable")
            continue
        peak = base["summary"].get("peak_tflops")
        base_ms = None
        for system, pattern in SYSTEMS:
            res = load_optional(folder / pattern.format(shape=shape))
            t = timing(res) if res else None
            if t is None:
                continue
            n, med, p10, p90, tf = t
            if system == "gpt4d":
                base_ms = med
            else:
                for m in _mismatch(res, base):
                    problems.append(f"{system} {shape}: not the run of gpt4d ({m})")
            if n < MIN_TIMED:
                problems.append(f"{system} {shape}: {n} timed iterations, fewer than {MIN_TIMED}")
            mfu = tf / peak if tf is not None and peak else None
            mem = res["summary"].get("device_memory_peak_bytes",
                                     res["summary"].get("peak_memory_bytes"))
            doc["training"].append({"shape": shape, "system": system, "n": n, "median_ms": med,
                                    "p10_ms": p10, "p90_ms": p90, "tflops": tf, "mfu": mfu,
                                    "peak_memory_bytes": mem})
            ratio = f"{med / base_ms:.2f}x" if base_ms and system != "gpt4d" else ""
            md.append(f"| {shape} | {system} | {n} | {med:.1f} | {p10:.1f}-{p90:.1f} | "
                      f"{'-' if tf is None else f'{tf:.1f}'} | "
                      f"{'-' if mfu is None else f'{100 * mfu:.1f} %'} | "
                      f"{'-' if mem is None else f'{mem / 2**30:.1f}'} | {ratio} |")
        md.append(f"\ngpt4d's kernels: {base['config'].get('kernels', '?')}\n")


def summarize(out):
    md, problems = [], []
    doc = {"kernel_tests": None, "loss_deviation_cuda_fp32": None, "same_model": None,
           "training": []}
    kernels(out, md, doc, problems)
    losses(out, md, doc, problems)
    _same_model(out, md, doc, problems)
    _training(out, md, doc, problems)
    return Summary("\n".join(md) + "\n", doc, ok=not problems, problems=problems)
