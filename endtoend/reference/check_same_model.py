#!/usr/bin/env python3
"""Is gpt4d's model the PyTorch reference's? Trains a tiny model both ways on the CPU in fp32 from
the same weights (gpt4d's initialiser, gpt4d_init.py) on the same text and compares the loss of
every iteration: gpt4d's host backend against pytorch_gpt.py's modules, optimizer and update.
Llama: grouped-query attention (2 K/V heads for 4 query heads), RoPE, RMSNorm, SwiGLU; GPT: the
same width with LayerNorm, GELU, learned positions, biases. The learning rate is constant
(gpt4d --min-lr = --lr), as the reference's, and ten times the reference's default so that a model
that differs leaves the other's curve within a few iterations (a K/V head swapped between groups:
2.6e-4 after 8 iterations, against 3e-7 for the same model).

  python3 check_same_model.py --gpt4d build/host/endtoend/gpt4d [--arch llama|gpt|both]
                              [--iters 8] [--tolerance 1e-5] [--json OUT]

Exit status 0 when every loss agrees within the relative tolerance, 1 when one does not, 2 for
bad use or a failed gpt4d run, 77 when PyTorch is not installed (ctest's "skipped").
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import gpt4d_init  # noqa: E402
import pytorch_gpt  # noqa: E402

TEXT = os.path.join(HERE, "..", "data", "declaration.txt")
SKIP = 77
# Both programs get these words: one shape, so a difference is the model's, not the options'.
SHAPES = {
    "llama": ["--arch", "llama", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads",
              "2", "--ffn-hidden", "176"],
    "gpt": ["--layers", "2", "--hidden", "64", "--heads", "4"],
}
SEQ, BATCH, VOCAB, SEED, LR = 32, 4, 256, 1234, 3e-3


def fail(msg, code=2):
    print(f"{os.path.basename(sys.argv[0])}: error: {msg}", file=sys.stderr)
    sys.exit(code)


def gpt4d_losses(binary, arch, iters, folder, extra=()):
    """The loss of every iteration of gpt4d on the host backend; `extra`: more gpt4d options."""
    out = os.path.join(folder, f"gpt4d_{arch}.json")
    cmd = [binary, "--backend", "host", *SHAPES[arch], "--seq", str(SEQ), "--vocab", str(VOCAB),
           "--batch", str(BATCH), "--iters", str(iters), "--warmup", "1", "--seed", str(SEED),
           "--lr", str(LR), "--min-lr", str(LR), "--data",
           f"text:{TEXT}", "--quiet", "--out", out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"gpt4d ({' '.join(cmd)}) exited {r.returncode}: {r.stderr.strip()}")
    with open(out, encoding="utf-8") as f:
        return [it["loss"] for it in json.load(f)["iterations"]]


def windows(iters):
    """gpt4d's text windows (data/loader.hpp), BATCH rows of SEQ + 1 tokens per iteration:
    sequence g of iteration i starts at ((i B + g) seq) mod (N - seq) of the file's bytes."""
    with open(TEXT, "rb") as f:
        data = f.read()
    n = len(data)
    for i in range(iters):
        starts = [((i * BATCH + g) * SEQ) % (n - SEQ) for g in range(BATCH)]
        yield [list(data[s:s + SEQ + 1]) for s in starts]


def batches(torch, iters):
    for rows in windows(iters):
        t = torch.tensor(rows, dtype=torch.long)
        yield t[:, :-1], t[:, 1:]


def reference_losses(torch, arch, iters):
    a = pytorch_gpt.parse_args([*SHAPES[arch], "--seq", str(SEQ), "--vocab", str(VOCAB),
                                "--batch", str(BATCH), "--iters", str(iters), "--warmup", "1"])
    model = pytorch_gpt.build(a, torch)
    gpt4d_init.load_gpt4d_init(model, a, SEED, torch)
    opt = pytorch_gpt.make_optimizer(model, torch, LR, fused=False)
    losses = []
    for idx, targets in batches(torch, iters):
        loss = model(idx, targets)
        losses.append(loss.item())
        pytorch_gpt.update(model, opt, torch, loss)
    return losses


def check_common_args(a):
    """--iters and --gpt4d, as every check of gpt4d against a reference takes them."""
    if a.iters < 2:
        fail(f"--iters must be >= 2 (one warm-up iteration), got {a.iters}")
    if not os.access(a.gpt4d, os.X_OK):
        fail(f"--gpt4d {a.gpt4d}: not an executable file")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpt4d", required=True, help="gpt4d binary (a host or CUDA build)")
    p.add_argument("--arch", choices=("llama", "gpt", "both"), default="both")
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--tolerance", type=float, default=1e-5,
                   help="largest relative loss difference (fp32 on both sides)")
    p.add_argument("--json", help="write the losses and the verdict here")
    a = p.parse_args(argv)
    check_common_args(a)
    try:
        import torch
    except ImportError:
        print("check_same_model.py: skipped: PyTorch is not installed in this Python")
        return SKIP
    torch.manual_seed(SEED)  # nothing random is left after the load; for the record
    torch.set_num_threads(1)
    doc, ok = {"tolerance": a.tolerance, "torch": torch.__version__, "runs": {}}, True
    with tempfile.TemporaryDirectory() as folder:
        for arch in (("llama", "gpt") if a.arch == "both" else (a.arch,)):
            ours, ref = gpt4d_losses(a.gpt4d, arch, a.iters, folder), reference_losses(
                torch, arch, a.iters)
            worst = max(abs(x - y) / abs(y) for x, y in zip(ours, ref))
            passed = worst <= a.tolerance and len(ours) == len(ref)
            ok &= passed
            doc["runs"][arch] = {"gpt4d": ours, "pytorch": ref, "worst_relative": worst,
                                 "passed": passed}
            print(f"{arch}: iteration  gpt4d       PyTorch     relative difference")
            for i, (x, y) in enumerate(zip(ours, ref)):
                print(f"{arch}: {i:9d}  {x:.7f}  {y:.7f}  {abs(x - y) / abs(y):.2e}")
            print(f"{arch}: largest relative difference {worst:.2e} "
                  f"({'ok' if passed else 'FAILED'}: <= {a.tolerance:g})")
    doc["passed"] = ok
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
