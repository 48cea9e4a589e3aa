"""Summary of an `ovb-suite run --preset gpu-check` folder (slurm/gpu-check.sh): every GPU-labelled
ctest passed, failed or skipped (its JUnit file, else its step); the Llama kernels and llama-tiny
on host and CUDA (the llama-gpu sections); gpt4d's memory options on 4 ranks against the serial
CUDA run; the driver's view of device memory against the plan's estimate for the 1.3B shape; the
1.3B headline with its telemetry; ovb-gemm's rates on exact against random inputs (what the data's
switching power costs under the power cap; reported, not judged); ovb-collective beside
nccl-tests (the baselines section).
Not ok when a ctest failed or was skipped (no usable GPU), a Llama check failed, an option run
left the serial run's loss curve, or a collective size is outside the tolerance. The memory ratio
is reported against its goal (within 10 %), not judged: the plan counts the suite's buffers, the
driver also sees the CUDA context, cuBLASLt/cuDNN workspaces and the allocator's rounding.
"""

import xml.etree.ElementTree as ET
from pathlib import Path

from .baselines import collectives, timing
from .common import Summary, load_optional
from .llama_gpu import LOSS_TOLERANCE, MIN_TIMED, kernels, losses

TITLE = "GPU check: the first run on a GPU"
JSON_NAME = "gpu-check.json"
MEMORY_GOAL = 0.10  # |device peak / plan - 1|


def _step_states(out):
    doc = load_optional(Path(out) / ".suite" / "status.json") or {}
    return {r.get("step"): r for r in doc.get("steps", [])}


def junit_status(path):
    """passed, failed or skipped from ctest's JUnit file of one test; None when unreadable."""
    try:
        case = ET.parse(path).getroot().find("testcase")
    except (OSError, ET.ParseError):
        return None
    if case is None:
        return None
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "failed" if case.find("failure") is not None or case.get("status") == "fail" \
        else "passed"


def _ctests(out, md, doc, problems):
    steps = {k[len("ctest-"):]: v for k, v in _step_states(out).items()
             if k and k.startswith("ctest-")}
    if not steps:
        md.append("No GPU ctests yet.\n")
        return
    rows = {}
    for name, rec in steps.items():
        got = junit_status(Path(out) / "ctest" / f"{name}.xml")
        rows[name] = got or {"finished": "passed"}.get(rec.get("status"), rec.get("status"))
    doc["ctest"] = rows
    count = {s: sum(1 for v in rows.values() if v == s) for s in ("passed", "failed", "skipped")}
    md.append("## GPU-labelled ctests\n")
    md.append(f"{len(rows)} tests: {count['passed']} passed, {count['failed']} failed, "
              f"{count['skipped']} skipped, {len(rows) - sum(count.values())} not run "
              "(pending or interrupted).\n")
    md.append("| test | status |")
    md.append("|---|---|")
    md += [f"| {n} | {s} |" for n, s in rows.items()]
    md.append("")
    if count["failed"]:
        problems.append(f"{count['failed']} GPU ctests failed")
    if count["skipped"]:
        problems.append(f"{count['skipped']} GPU ctests skipped (ovb-gpu-probe: no usable GPU)")


def _options(out, md, doc, problems):
    folder = Path(out) / "options"
    serial = load_optional(folder / "serial.json")
    runs = sorted(p for p in folder.glob("*.json") if p.stem != "serial")
    if serial is None or not runs:
        md.append("No option runs against the serial CUDA run yet (options/).\n")
        return
    ref = [i["loss"] for i in serial["iterations"]]
    md.append("## Memory options on 4 ranks sharing the GPU against the serial CUDA run\n")
    md.append(f"Tiny GPT on the committed text, fp32, {len(ref)} iterations; the largest relative "
              f"loss difference of any iteration, judged < {LOSS_TOLERANCE:g} (the CUDA fp32 "
              "against host bound).\n")
    md.append("| option run | grid | iterations | largest relative difference | verdict |")
    md.append("|---|---|---|---|---|")
    for p in runs:
        res = load_optional(p)
        if res is None:
            problems.append(f"options/{p.name}: unreadable")
            continue
        got = [i["loss"] for i in res["iterations"]]
        worst = max((abs(a - b) / abs(b) for a, b in zip(got, ref)), default=float("inf"))
        ok = worst < LOSS_TOLERANCE and len(got) == len(ref)
        g = res["config"]["grid"]
        doc["options"][p.stem] = {"worst_relative": worst, "passed": ok}
        md.append(f"| {p.stem} | {g['gx']}x{g['gy']}x{g['gz']}x{g['gdata']} | {len(got)} | "
                  f"{worst:.2e} | {'ok' if ok else 'FAILED'} |")
        if not ok:
            problems.append(f"options {p.stem}: left the serial CUDA loss ({worst:.2e} relative)")
    md.append("")


def _memory(out, md, doc):
    runs = sorted((Path(out) / "memory").glob("*.json"))
    if not runs:
        md.append("No memory runs yet (memory/).\n")
        return
    md.append("## Device memory against the plan (1.3B, batch 4, bf16)\n")
    md.append("Device peak: the driver's used memory (cudaMemGetInfo) above the rank's start, "
              "largest rank; with ranks sharing the one GPU that is the whole device's, so the "
              "plan side is ranks x the per-rank estimate (gpt_memory). Goal: within "
              f"{100 * MEMORY_GOAL:g} %.\n")
    md.append("| run | grid | ranks on the GPU | plan per rank GiB | device peak GiB | "
              "peak / plan | goal |")
    md.append("|---|---|---|---|---|---|---|")
    for p in runs:
        res = load_optional(p)
        if res is None:
            continue
        s, g = res["summary"], res["config"]["grid"]
        sharing = min(res["context"].get("ranks_per_gpu") or 1, res["context"]["world_size"])
        est, peak = s["memory_estimate_bytes"], s.get("device_memory_peak_bytes")
        ratio = peak / (sharing * est) if peak is not None and est else None
        met = ratio is not None and abs(ratio - 1) <= MEMORY_GOAL
        doc["memory"][p.stem] = {"ranks_sharing": sharing, "estimate_bytes": est,
                                 "device_peak_bytes": peak, "ratio": ratio, "goal_met": met}
        md.append(f"| {p.stem} | {g['gx']}x{g['gy']}x{g['gz']}x{g['gdata']} | {sharing} | "
                  f"{est / 2**30:.2f} | {'-' if peak is None else f'{peak / 2**30:.2f}'} | "
                  f"{'-' if ratio is None else f'{ratio:.3f}'} | {'met' if met else 'not met'} |")
    md.append("")


# The headline and the same tokens as sequences of 4096 (the attention at the Megatron-Core H100
# rows' length): (file stem, doc key, the row's label).
HEADLINES = (("gpt4d_1.3B", "headline", "seq 2048, batch 4"),
             ("gpt4d_1.3B_seq4096", "headline_seq4096", "seq 4096, batch 2"))


def _headline(out, md, doc, problems):
    found = [(key, label, res) for stem, key, label in HEADLINES
             if (res := load_optional(Path(out) / "headline" / f"{stem}.json")) is not None]
    if not found:
        md.append("No 1.3B headline run yet (headline/gpt4d_1.3B.json).\n")
        return
    md.append("## gpt4d 1.3B, bf16, one GPU (the README's headline)\n")
    md.append("| run | n | median ms | p10-p90 ms | TFLOP/s | MFU | SM clock MHz (min-median-max) | "
              "power W (median) | max temperature C | throttled samples |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    for key, label, res in found:
        n, med, p10, p90, tf = timing(res)
        s, tel = res["summary"], res["context"].get("gpu_telemetry") or {}
        mfu = s.get("mfu")
        doc[key] = {"n": n, "median_ms": med, "p10_ms": p10, "p90_ms": p90, "tflops": tf,
                    "mfu": mfu, "telemetry": tel}
        if tel.get("available"):
            c = tel["sm_clock_mhz"]
            t = (f"{c['min']:.0f}-{c['median']:.0f}-{c['max']:.0f} | "
                 f"{tel['power_w']['median']:.0f} | {tel['temperature_c']['max']:.0f} | "
                 f"{tel['throttled_samples']} of {tel['samples']}")
        else:
            t = "- | - | - | no telemetry"
        md.append(f"| {label} | {n} | {med:.1f} | {p10:.1f}-{p90:.1f} | "
                  f"{'-' if tf is None else f'{tf:.1f}'} | "
                  f"{'-' if mfu is None else f'{100 * mfu:.1f} %'} | {t} |")
        if n < MIN_TIMED:
            problems.append(f"headline ({label}): {n} timed iterations, fewer than {MIN_TIMED}")
    md.append("")


def _gemm_label(b):
    """A GEMM's row label: "layer.pass/MxNxK/layout" from its benchmark name where it names a
    GPT layer (two passes of one layer can share a shape, in other layouts), else "MxNxK"."""
    shape = f"{int(b['m'])}x{int(b['n'])}x{int(b['k'])}"
    parts = str(b.get("name", "")).split("/")
    if len(parts) > 4 and parts[3] == shape and "." in parts[2]:
        return "/".join(parts[2:5])
    return shape


def _gemm_rates(doc):
    """{label: (TFLOP/s, time in us or None)} of an ovb-gemm result (its timed iterations, the
    last per label)."""
    rates = {}
    for b in (doc or {}).get("benchmarks", []):
        if b.get("run_type") == "iteration" and not b.get("error_occurred") and "tflops" in b:
            t = b.get("time_us")
            rates[_gemm_label(b)] = (float(b["tflops"]), None if t is None else float(t))
    return rates


def _telemetry_words(doc):
    tel = ((doc or {}).get("context") or {}).get("gpu_telemetry") or {}
    if not tel.get("available"):
        return "-"
    clock, power = tel.get("sm_clock_mhz") or {}, tel.get("power_w") or {}
    return (f"{clock.get('median', float('nan')):.0f} MHz, {power.get('median', float('nan')):.0f} W"
            f", {tel.get('throttled_samples', 0)} of {tel.get('samples', 0)} throttled")


def _gemm_inputs(out, md, doc):
    runs = {k: load_optional(Path(out) / "gemm-inputs" / f"{k}.json") for k in ("exact", "random")}
    if runs["exact"] is None or runs["random"] is None:
        md.append("No GEMM inputs comparison yet (gemm-inputs/exact.json, random.json).\n")
        return
    exact, rand = _gemm_rates(runs["exact"]), _gemm_rates(runs["random"])
    rows = {s: {"exact_tflops": exact[s][0], "random_tflops": rand[s][0],
                "random_over_exact": rand[s][0] / exact[s][0]} for s in exact if s in rand}
    doc["gemm_inputs"] = {"shapes": rows, "telemetry": {k: _telemetry_words(v)
                                                        for k, v in runs.items()}}
    # The layer's GEMMs together (the rows naming a layer pass, each timed in both runs): the
    # factor a model's GEMM time of that layer moves by from exact to random inputs.
    layer = [s for s in rows if "/" in s and exact[s][1] is not None and rand[s][1] is not None]
    if layer:
        te, tr = sum(exact[s][1] for s in layer), sum(rand[s][1] for s in layer)
        doc["gemm_inputs"]["layer"] = {"gemms": len(layer), "exact_us": te, "random_us": tr,
                                       "random_over_exact_time": tr / te}
    md.append("## GEMM rates on exact and on random inputs (bf16)\n")
    md.append("The model's H100 GEMM table was measured on exact inputs (-1, 0, 1); training data "
              "switches every bit. Median clock and power over each run: exact "
              f"{doc['gemm_inputs']['telemetry']['exact']}; random "
              f"{doc['gemm_inputs']['telemetry']['random']}.\n")
    md.append("| GEMM m x n x k | exact TFLOP/s | random TFLOP/s | random / exact |")
    md.append("|---|---|---|---|")
    for s, r in rows.items():
        md.append(f"| {s} | {r['exact_tflops']:.1f} | {r['random_tflops']:.1f} | "
                  f"{r['random_over_exact']:.3f} |")
    md.append("")
    if "layer" in doc["gemm_inputs"]:
        la = doc["gemm_inputs"]["layer"]
        md.append(f"The layer's {la['gemms']} GEMMs together: {la['exact_us']:.1f} us on exact "
                  f"inputs, {la['random_us']:.1f} us on random ones (time x "
                  f"{la['random_over_exact_time']:.3f}).\n")


def summarize(out):
    md, problems = [], []
    doc = {"ctest": {}, "kernel_tests": None, "loss_deviation_cuda_fp32": None, "options": {},
           "memory": {}, "headline": None, "gemm_inputs": None, "collectives": {}}
    _ctests(out, md, doc, problems)
    kernels(out, md, doc, problems)
    losses(out, md, doc, problems)
    _options(out, md, doc, problems)
    _memory(out, md, doc)
    _headline(out, md, doc, problems)
    _gemm_inputs(out, md, doc)
    collectives(out, md, doc, problems)
    return Summary("\n".join(md) + "\n", doc, ok=not problems, problems=problems)
