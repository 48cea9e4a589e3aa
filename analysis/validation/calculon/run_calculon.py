#!/usr/bin/env python3
"""Calculon (Isaev et al., SC23; an outside tool, never part of the suite) on the published runs of
analysis/validation/published_runs.json, for `ovb-model validate`'s Calculon column.

For every run Calculon can express, this writes Calculon's application and execution files from
the entry (same shape, tp, pp, dp, micro-batch, interleaving, batch, recompute, sequence
parallelism), runs `calculon llm` on them with the A100 80 GB system file that Calculon ships, and
records Calculon's seconds per iteration. Where the entry leaves micro-batch or interleaving to the
model's search, Calculon gets the same candidates as ovb-model's Megatron search (micro-batches a
power of two dividing the batch per pipeline; chunks per stage dividing its layers, the
micro-batches a multiple of pp when interleaved) and the fastest that fits its memory is kept.
Runs it cannot express are listed with the reason. The result file is written atomically; each
candidate's Calculon output is kept in --work, so a killed run resumes.

Usage (Calculon unpacked, with a Python that has numpy, pandas and psutil):
  run_calculon.py --calculon DIR [--python PY] [--runs published_runs.json]
                  [--out calculon_results.json] [--work DIR] [--commit SHA] [--cross-check]
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # analysis/, for ovb_analysis
from ovb_analysis import io_util, metrics  # noqa: E402
from ovb_analysis.errors import AnalysisError  # noqa: E402

SYSTEM = "systems/a100_80g.json"  # Calculon's DGX A100 80 GB (NVLink 8, InfiniBand beyond)
MACHINE = "dgx-a100-80gb"         # the suite's preset of the same machine
RECOMPUTE = {"full": "full", "selective": "attn_only", "none": "none"}


def why_not(run):
    """Why Calculon cannot predict this run, or None when it can."""
    cfg = run.get("config", {})
    if run["strategy"] != "megatron":
        return "4D tensor parallelism (AxoNN): Calculon describes Megatron-style tp x pp x dp only"
    if run["model"].get("arch", "gpt") != "gpt":
        return ("Llama blocks (grouped-query attention, SwiGLU's three GEMMs) and uneven first and "
                "last stages: Calculon has multi-head or multi-query attention, a two-GEMM MLP and "
                "equal stages")
    if run["machine"] != MACHINE:
        return (f"machine {run['machine']}: Calculon ships no system file for it, and writing one "
                "would be a model of its own")
    if not cfg.get("tp") or not cfg.get("pp"):
        return "tp and pp not published (ovb-model searches them)"
    if "iteration_s" not in run["published"] and run["published"]["convention"] != "narayanan":
        return "published TFLOP/s in this suite's FLOP count, which Calculon's time cannot be put in"
    return None


def published_seconds(run):
    """The published seconds per iteration: given, or the narayanan count over the TFLOP/s."""
    pub = run["published"]
    if "iteration_s" in pub:
        return pub["iteration_s"]
    m = run["model"]
    flop = metrics.narayanan_flop(run["batch"], m["seq"], m["layers"], m["hidden"], m["vocab"])
    return flop / (pub["tflops_per_gpu"] * 1e12 * run["gpus"])


def application(run):
    m = run["model"]
    return {"hidden": m["hidden"], "feedforward": 4 * m["hidden"], "seq_size": m["seq"],
            "attn_heads": m["heads"], "attn_size": m["hidden"] // m["heads"],
            "num_blocks": m["layers"]}


def candidates(run):
    """(micro-batch, chunks per stage) pairs: the pinned ones, else ovb-model's search set."""
    cfg = run["config"]
    tp, pp = cfg["tp"], cfg["pp"]
    dp = run["gpus"] // (tp * pp)
    per_pipeline = run["batch"] // dp
    mbs = [cfg["micro_batch"]] if cfg.get("micro_batch") else \
        [1 << i for i in range(per_pipeline.bit_length()) if per_pipeline % (1 << i) == 0]
    stage = run["model"]["layers"] // pp
    vs = [cfg["virtual_stages"]] if cfg.get("virtual_stages") else \
        [v for v in range(1, stage + 1) if stage % v == 0]
    out = []
    for mb in mbs:
        for v in vs:
            if v > 1 and (pp < 2 or (per_pipeline // mb) % pp):
                continue
            out.append((mb, v))
    return out


def execution(run, mb, v):
    """Calculon's execution file for the run at this micro-batch and interleaving."""
    cfg = run["config"]
    tp, pp = cfg["tp"], cfg["pp"]
    sp = cfg.get("sequence_parallel", True)
    recompute = RECOMPUTE[cfg.get("recompute", "full")]
    return {
        "num_procs": run["gpus"], "tensor_par": tp, "pipeline_par": pp,
        "data_par": run["gpus"] // (tp * pp),
        "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1,
        "batch_size": run["batch"], "microbatch_size": mb,
        "datatype": "float16", "fused_activation": False, "attention_type": "multihead",
        "activation_recompute": recompute, "pipeline_interleaving": v,
        "optimizer_sharding": bool(cfg.get("distributed_optimizer", True)),
        # sequence parallelism is Calculon's reduce-scatter / all-gather tensor-parallel
        # communication; Megatron re-gathers the sequence in backward instead of keeping it
        "tensor_par_comm_type": "rs_ag" if sp else "ar", "tensor_par_overlap": "none",
        "seq_par_ag_redo": sp and recompute != "full",
        # the runs' software reduced the gradients after the pipeline schedule (docs/validation.md)
        "data_par_overlap": False,
        "weight_offload": False, "activations_offload": False, "optimizer_offload": False,
        "training": True}


def write_new(path, obj):
    io_util.atomic_write_json(path, obj)


def calculon_llm(args, app_file, exe_file, out):
    """Calculon's stats for one execution, cached in `out`: {"total_time", "mem_gib"} or
    {"error": its message}."""
    if out.exists():
        return json.loads(out.read_text())
    tmp = out.with_name(out.name + ".calculon.json")
    cmd = [args.python, "bin/calculon", "llm", str(app_file), str(exe_file), SYSTEM, str(tmp)]
    p = subprocess.run(cmd, cwd=args.calculon, env={**os.environ, "PYTHONPATH": "."},
                       capture_output=True, text=True, check=False)
    if p.returncode == 0 and tmp.exists():
        stats = json.loads(tmp.read_text())
        result = {"total_time": stats["total_time"],
                  "mem_gib": stats["proc_mem_tier1_cap_req"] / 2**30}
        tmp.unlink()
    else:
        # Calculon refuses a configuration with "ERROR: ..." (memory, interleaving) or a failed
        # assertion on the execution; anything else is a broken installation, not a refusal
        said = (p.stdout + p.stderr).strip().splitlines()
        last = said[-1] if said else f"exit status {p.returncode}"
        if not last.startswith(("ERROR:", "AssertionError")):
            raise AnalysisError(f"calculon llm failed ({' '.join(cmd)} in {args.calculon}): {last}")
        result = {"error": last}
    write_new(out, result)
    return result


def predict(args, run):
    work = Path(args.work) / run["id"]
    work.mkdir(parents=True, exist_ok=True)
    app_file = work / "app.json"
    write_new(app_file, application(run))
    tried = []
    for mb, v in candidates(run):
        exe = execution(run, mb, v)
        exe_file = work / f"exe-mb{mb}-v{v}.json"
        write_new(exe_file, exe)
        tried.append((calculon_llm(args, app_file, exe_file, work / f"stats-mb{mb}-v{v}.json"),
                      exe))
    ok = [(r, e) for r, e in tried if "total_time" in r]
    if not ok:
        reasons = sorted({r["error"] for r, _ in tried})
        return None, f"no configuration Calculon accepts: {'; '.join(reasons)}"
    best, exe = min(ok, key=lambda t: t[0]["total_time"])
    published = published_seconds(run)
    return {"id": run["id"], "group": run.get("group"),
            "published_iteration_s": published,
            "published_from": "iteration_s" if "iteration_s" in run["published"]
            else "tflops_per_gpu (narayanan)",
            "predicted_iteration_s": best["total_time"],
            "error_pct": 100.0 * (published / best["total_time"] - 1.0),
            "memory_gib": best["mem_gib"], "application": application(run), "execution": exe,
            "candidates": len(tried), "accepted": len(ok)}, None


def cross_check(args, results):
    """Calculon's own validation of Korthikanti et al.'s Table 5 (calculon llm-validation, and its
    execution files through calculon llm) against this script's runs of the same eight: matched
    by application, GPUs, batch and recompute mode; the times and the execution fields that
    differ."""
    root = Path(args.calculon)
    p = subprocess.run([args.python, "bin/calculon", "llm-validation"], cwd=root,
                       env={**os.environ, "PYTHONPATH": "."}, capture_output=True, text=True,
                       check=False)
    if p.returncode != 0:
        raise AnalysisError(f"calculon llm-validation failed: {p.stderr.strip()[-200:]}")
    # its Table 5 block: "model,|,published,calculon,delta,GiB,|,published,calculon,delta,GiB,"
    printed = {}
    block = p.stdout.split("End-to-end", 1)[1] if "End-to-end" in p.stdout else ""
    for line in block.splitlines():
        cells = line.split(",")
        if (len(cells) >= 11 and cells[1] == "|" and cells[6] == "|"
                and re.fullmatch(r"[0-9.]+", cells[2])):
            printed[(cells[0], "full")] = (float(cells[2]), float(cells[3]))
            printed[(cells[0], "seqsel")] = (float(cells[7]), float(cells[8]))
    if len(printed) != 8:
        raise AnalysisError(f"calculon llm-validation: {len(printed)} Table 5 cells read, not 8")
    work = Path(args.work) / "calculon-own-tab5"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for (model, mode), (published, shown) in sorted(printed.items()):
        app_file = root / "models" / f"{model}.json"
        exe_file = root / "validation" / "seqsel" / "tab5" / f"{model}_{mode}.json"
        own = calculon_llm(args, app_file.resolve(), exe_file.resolve(),
                           work / f"{model}_{mode}.json")
        app, exe = json.loads(app_file.read_text()), json.loads(exe_file.read_text())
        ours = [r for r in results if r["application"] == app and all(
            r["execution"][k] == exe[k] for k in ("num_procs", "batch_size", "activation_recompute"))]
        if len(ours) != 1:
            raise AnalysisError(f"{len(ours)} runs of this file match Calculon's {model} {mode}")
        r = ours[0]
        rows.append({"calculon_model": model, "calculon_mode": mode, "id": r["id"],
                     "published_in_validation_py": published,
                     "published_here": r["published_iteration_s"],
                     "llm_validation_printed_s": shown,
                     "own_files_s": own["total_time"],
                     "this_script_s": r["predicted_iteration_s"],
                     "execution_fields_differing": sorted(
                         k for k in exe if exe[k] != r["execution"].get(k))})
    return {"command": "calculon llm-validation (its seqsel_tab5 block), and its "
                       "validation/seqsel/tab5 files through calculon llm",
            "max_abs_difference_s": max(abs(x["own_files_s"] - x["this_script_s"])
                                        for x in rows),
            # Calculon's own error rule, 100 (1 - predicted / published), as it prints it
            "own_rule_mean_abs_pct": sum(abs(100 * (1 - x["own_files_s"] / x["published_here"]))
                                         for x in rows) / len(rows),
            "runs": rows}


def commit_of(folder):
    m = re.search(r"calculon-([0-9a-f]{7,40})$", Path(folder).resolve().name)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calculon", required=True, help="unpacked Calculon (bin/calculon in it)")
    ap.add_argument("--python", default=sys.executable,
                    help="Python with numpy, pandas and psutil for Calculon")
    ap.add_argument("--runs", default=str(HERE.parent / "published_runs.json"))
    ap.add_argument("--out", default=str(HERE.parent / "calculon_results.json"))
    ap.add_argument("--work", help="folder for Calculon's inputs and outputs (resume)")
    ap.add_argument("--commit", help="Calculon's commit (default: from the folder's name)")
    ap.add_argument("--cross-check", action="store_true",
                    help="also run Calculon's own validation of Korthikanti et al.'s Table 5 and "
                         "compare it with this script's runs of the same eight")
    args = ap.parse_args()
    try:
        if not (Path(args.calculon) / "bin" / "calculon").is_file():
            raise AnalysisError(f"{args.calculon}: no bin/calculon, not an unpacked Calculon")
        commit = args.commit or commit_of(args.calculon)
        if not commit:
            raise AnalysisError(f"{args.calculon}: Calculon's commit not in the folder's name, "
                                "give --commit")
        args.work = args.work or str(Path(tempfile.gettempdir()) / f"ovb-calculon-{commit}")
        runs = io_util.load_json(args.runs)["runs"]
        results, left_out = [], []
        for run in runs:
            why = why_not(run)
            if why is None:
                result, why = predict(args, run)
                if result:
                    results.append(result)
                    print(f"{run['id']}: Calculon {result['predicted_iteration_s']:.3f} s, "
                          f"published {result['published_iteration_s']:.3f} s, "
                          f"error {result['error_pct']:+.1f} %")
            if why:
                left_out.append({"id": run["id"], "why": why})
                print(f"{run['id']}: not predicted: {why}")
        check = cross_check(args, results) if args.cross_check else None
        if check:
            print(f"Calculon's own Table 5 files give the same times to "
                  f"{check['max_abs_difference_s']:.3g} s; its own error rule: mean "
                  f"{check['own_rule_mean_abs_pct']:.2f} %")
        system = Path(args.calculon) / SYSTEM
        io_util.atomic_write_json(args.out, {
            "context": {
                "tool": "Calculon (github.com/calculon-ai/calculon), Apache-2.0",
                "commit": commit,
                "system_file": SYSTEM,
                "system_sha256": hashlib.sha256(system.read_bytes()).hexdigest(),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "command": " ".join(["run_calculon.py"] + sys.argv[1:]),
                "python": platform.python_version(),
                "host": platform.node()},
            "error_rule": "error_pct = 100 (published_iteration_s / predicted_iteration_s - 1): "
                          "positive when Calculon is faster, as ovb-model validate's error",
            "runs": results,
            "not_predicted": left_out,
            "cross_check": check})
        print(f"wrote {args.out}: {len(results)} runs, {len(left_out)} not predicted")
    except AnalysisError as e:
        print(f"run_calculon: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
