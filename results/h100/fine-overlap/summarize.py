#!/usr/bin/env python3
"""summary.md of this folder (slurm/gpu-fine-overlap.sh's results on the H100): the memory-bound
kernel classes, the decomposition scenario on one rank (the chunk GEMMs alone) and on two ranks
sharing the GPU, the ring exchanges, the CTA policies; every figure read from the JSON files here.
Run: python3 results/h100/fine-overlap/summarize.py [--out FILE]  (default: summary.md beside it)"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
# The analysis part's Markdown table and atomic writer (standard library only).
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "analysis"))
from ovb_analysis.io_util import atomic_write  # noqa: E402
from ovb_analysis.render import md_table as table  # noqa: E402


def rows(name):
    doc = json.load(open(os.path.join(HERE, name)))
    out = []
    for b in doc["benchmarks"]:
        if b.get("error_occurred") or b.get("run_type", "iteration") != "iteration":
            continue
        b["lab"] = dict(w.split("=", 1) for w in b.get("label", "").split() if "=" in w)
        out.append(b)
    return doc["context"], out


def shape(b):
    return f"{int(b['m'])}x{int(b['n'])}x{int(b['k'])}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "summary.md"), help="file to write")
    out = ap.parse_args().out
    md = ["# Fine-grained overlap and memory-bound kernels on one H100 (summary)", "",
          "Written by `summarize.py` from the JSON files of this folder; what they are and how "
          "they were made: README.md."]
    ctx, mb = rows("membw.json")
    peak = ctx["device"]["peak_memory_gbps"]
    n = sorted({int(b["iterations_timed"]) for b in mb})
    md += ["", f"## Memory-bound kernel classes (ovb-membw, 256 MiB main tensor; "
           f"{'/'.join(map(str, n))} timed samples each)", ""]
    body = []
    classes = sorted({b["lab"]["class"] for b in mb})
    for c in classes:
        cells = [c]
        for dt in ("bf16", "fp32"):
            b = next(b for b in mb if b["lab"]["class"] == c and b["lab"]["dtype"] == dt
                     and int(b["size"]) == 256 << 20)
            cells += [f"{b['gbps']:.0f}", f"{100 * b['gbps'] / peak:.0f} %",
                      f"{b['p10_ms'] * 1e3:.0f}-{b['p90_ms'] * 1e3:.0f}"]
        body.append(cells)
    md.append(table(["class", "bf16 GB/s", "of peak", "p10-p90 us", "fp32 GB/s", "of peak",
                     "p10-p90 us"], body))

    _, d1 = rows("decomp-1rank.json")
    md += ["", "## The chunk GEMMs alone: decomposition on one rank (bf16; medians of 20 samples)",
           "", "Each row: the whole GEMM (`t_compute_whole_us`), its chunks back to back "
           "(`t_compute_us`) and the decomposition loss (chunks less whole), p10-p90 of the "
           "pipeline's sample.", ""]
    body = [[shape(b), int(b["chunks"]), b["lab"]["split"], f"{b['t_compute_whole_us']:.1f}",
             f"{b['t_compute_us']:.1f}", f"{b['decomposition_loss_us']:.1f}",
             f"{100 * b['decomposition_loss_us'] / b['t_compute_whole_us']:.0f} %",
             f"{b['p10_ms'] * 1e3:.0f}-{b['p90_ms'] * 1e3:.0f}"] for b in d1]
    md.append(table(["GEMM", "chunks", "split", "whole us", "chunks us", "loss us", "loss",
                     "sample p10-p90 us"], body))

    ctx2, d2 = rows("decomp-2ranks.json")
    md += ["", f"## Decomposition on {ctx2['world_size']} ranks sharing the GPU (bf16, split m; "
           "20 samples each)", "",
           "Socket transport over loopback (~2-3 GB/s): overlap behaviour only.", ""]
    body = []
    for b in d2:
        if b["lab"]["split"] != "m":
            continue
        body.append([b["lab"]["coll"], shape(b), b["lab"]["prio"], int(b["chunks"]),
                     f"{b['t_compute_whole_us']:.0f}", f"{b['t_comm_whole_us']:.0f}",
                     f"{b['t_overlap_us']:.0f}", f"{b['exposed_comm_us']:.0f}",
                     f"{b['compute_slowdown']:.2f}", f"{b['comm_slowdown']:.2f}",
                     b["lab"]["transport"]])
    md.append(table(["coll", "GEMM", "priority", "chunks", "GEMM us", "coll us", "pipeline us",
                     "exposed us", "compute slowdown", "comm slowdown", "transport"], body))

    _, rr = rows("ring-2ranks.json")
    md += ["", "## Ring exchanges on 2 ranks sharing the GPU (bf16; 20 samples each)", "",
           "`send_recv`: ncclSend/ncclRecv over the socket transport; `copy_engine`: "
           "cudaMemcpyAsync between the two processes' buffers mapped by CUDA IPC - on one GPU a "
           "device-memory copy, not NVLink.", ""]
    body = [[b["lab"]["coll"], shape(b), b["lab"].get("exchange"), b["lab"]["gemm_sms"],
             f"{b['t_compute_whole_us']:.0f}", f"{b['t_compute_us']:.0f}",
             f"{b['t_comm_us']:.0f}", f"{b['t_overlap_us']:.0f}", f"{b['exposed_comm_us']:.0f}",
             f"{b['compute_slowdown']:.2f}", b["lab"]["transport"]] for b in rr]
    md.append(table(["coll", "GEMM", "exchange", "GEMM SMs", "whole GEMM us", "ring GEMMs us",
                     "ring exchanges us", "pipeline us", "exposed us", "compute slowdown",
                     "transport"], body))

    _, ct = rows("cta-2ranks.json")
    md += ["", "## CTA policy beside a GEMM (2048x5120x10240, all-reduce, 2 ranks; 20 samples)",
           ""]
    body = [[f"{int(b['bytes']) >> 20} MiB", b["lab"]["cta_policy"], b["lab"]["max_ctas"],
             b["lab"]["prio"], b["lab"]["transport_requested"], b["lab"]["transport"],
             f"{b['t_compute_us']:.0f}", f"{b['t_comm_us']:.0f}",
             f"{b['compute_slowdown']:.2f}"] for b in ct]
    md.append(table(["size", "CTA policy", "max CTAs", "priority", "requested", "observed",
                     "GEMM us", "all-reduce us", "compute slowdown"], body))
    atomic_write(out, "\n".join(md) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    sys.exit(main())
