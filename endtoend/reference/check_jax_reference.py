#!/usr/bin/env python3
"""Is gpt4d's model the textbook GPT and Llama? Compares gpt4d (host backend, fp32) with
jax_gpt.py, an independent JAX implementation run in float64 from the same fp32 weights
(gpt4d_init.py), on check_same_model.py's shapes and text: every gradient tensor of the first
iteration element by element (gpt4d --dump-gradients), and the loss of every iteration with
AdamW steps on both sides (constant learning rate). JAX's CPU wheels install from PyPI in
seconds, so this runs in CI where the PyTorch check (check_same_model.py) is skipped.

  python3 check_jax_reference.py --gpt4d build/host/endtoend/gpt4d [--arch llama|gpt|both]
                                 [--iters 4] [--json OUT]

Tolerances (see tolerances()): the reference carries no fp32 rounding, so what differs is
gpt4d's own fp32 rounding, bounded for any summation order by C u K relative to a tensor's
largest entry (u = 2^-24, K the longest reduction, C the dependent reductions on the way).
Exit status 0 when everything agrees, 1 when not (naming the worst tensor and element), 2 for
bad use or a failed gpt4d run, 77 when JAX is not installed (ctest's "skipped"; 1 instead when
OVB_REQUIRE_REFERENCE is set, as ci/test.sh does, so that CI cannot skip it).
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "analysis"))
import check_same_model as same  # noqa: E402  (shapes, text windows, the gpt4d run)
import gpt4d_init  # noqa: E402
import pytorch_gpt  # noqa: E402  (its option parser only; no PyTorch needed)
from ovb_analysis.io_util import atomic_write_json, is_stdout_name, stdout_for_results  # noqa: E402

SKIP = 77
U = 2.0 ** -24  # fp32 unit roundoff
CLIP, ADAM_EPS = 1.0, 1e-8  # gpt4d's --clip and AdamW epsilon defaults, as jax_gpt.adamw's


fail = same.fail  # one line on stderr naming this script, then exit(code)


def shape_of(arch):
    return pytorch_gpt.parse_args([*same.SHAPES[arch], "--seq", str(same.SEQ), "--vocab",
                                   str(same.VOCAB), "--batch", str(same.BATCH), "--iters", "2",
                                   "--warmup", "1"])


def tolerances(np, a, grads, zero):
    """(gradient tolerance relative to each tensor's largest |entry|, K, loss tolerance of
    iteration i as a function of i and the loss), from the reference's gradients of iterations 0
    and 1 and where gpt4d's and the reference's gradient of iteration 0 are both exactly 0 (`zero`,
    {name: mask}: embedding rows of tokens not in the batch). fp32 sums of K terms are off by at most K u of the sum of |terms|, whatever the order
    (Higham's gamma_K), so OpenBLAS's kernels may differ from CPU to CPU. K: the longest
    reduction of the model: the MLP's width (GPT 4h; Llama 2 ffn, the gate/up GEMM's backward),
    the vocabulary (LM head backward, the softmax's sum), B*S (the weight gradients' sums over
    tokens). C: the reductions one after another on the path from the weights to the loss and
    back, each adding its K u (errors of earlier ones pass through the well-conditioned layers of
    a model at initialisation without growing): forward 9 per block (norm statistics, QKV, q.k,
    softmax sum, p.v, attention-out, norm, up, down) + 3 in the head (norm, LM head,
    log-sum-exp), the same again backward, + 1 for the weight gradient.
    Losses: the forward's share of C u K, plus, after AdamW steps, the loss's first-order change
    sum_j g_j dp_j from weights that moved differently because their gradients differed by up to
    e_j (the gradient tolerance; the update's own rounding, u |p|, is negligible). The first step
    moves weight j by lr (s g_j / (|s g_j| + eps) + wd p_j) (one gradient's bias-corrected
    moments; s the clipping factor), which e_j changes by at most 2 where |g_j| <= 2 e_j and by
    eps e_j / (s (g_j/2)^2) elsewhere (not at all where both gradients are exactly 0: the weight
    moves by its decay alone): iteration 1 adds lr sum_j |g1_j| min(2, that).
    Later steps move weights by lr m/sqrt(v) of several gradients, changed by up to 2 lr e_j/|g_j|:
    each adds 2 lr sum_j e_j (with iteration 0's e_j: over a few steps at this learning rate the
    tensors' largest gradients stay of the same size)."""
    ffn = 2 * a.ffn_hidden if a.arch == "llama" else 4 * a.hidden
    k = max(a.hidden, ffn, a.vocab, same.BATCH * same.SEQ)
    forward = 9 * a.layers + 3
    grad_tol = (2 * forward + 1) * U * k
    g0, g1 = grads[0], grads[1]
    e = {n: grad_tol * float(np.abs(g).max()) for n, g in g0.items()}
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in g0.values())))
    s = CLIP / (norm + 1e-6) if norm > CLIP else 1.0
    first = same.LR * sum(float((np.abs(g1[n]) * np.where(zero[n], 0.0, np.where(
        np.abs(g) <= 2 * e[n], 2.0,
        np.minimum(2.0, 4 * ADAM_EPS * e[n] / (s * np.maximum(g * g, 1e-300)))))).sum())
        for n, g in g0.items())
    later = 2 * same.LR * sum(e[n] * g.size for n, g in g0.items())
    return grad_tol, k, lambda i, loss: (forward * U * k * abs(loss) + (first if i else 0.0) +
                                        later * max(0, i - 1))


def reference(jax, jnp, np, a, iters):
    """The JAX model's losses and gradients (one {name: array} per iteration), trained with
    AdamW in float64 from gpt4d's initial fp32 weights."""
    import jax_gpt
    w = {n: jnp.asarray(t, jnp.float64) for n, t in gpt4d_init.gpt4d_weights(
        a, same.SEED, np).items()}
    m = {n: jnp.zeros_like(t) for n, t in w.items()}
    v = {n: jnp.zeros_like(t) for n, t in w.items()}
    grad = jax.jit(jax.value_and_grad(lambda w, x, y: jax_gpt.loss(w, x, y, a)))
    step = jax.jit(jax_gpt.adamw)
    losses, grads = [], []
    for i, rows in enumerate(same.windows(iters)):
        t = jnp.asarray(rows)
        loss, g = grad(w, t[:, :-1], t[:, 1:])
        losses.append(float(loss))
        grads.append({n: np.asarray(x) for n, x in g.items()})
        w, m, v = step(w, g, m, v, i + 1, same.LR)
    return losses, grads


def compare_gradients(np, ours, ref, tol):
    """Per tensor: the largest |gpt4d - reference| over the tensor's largest |reference|."""
    rows, worst = [], None
    for t in ours["tensors"]:
        name = t["name"]
        if name not in ref:
            fail(f"gpt4d's tensor {name} is not in the reference", 1)
        g, r = np.asarray(t["gradient"], np.float64).reshape(t["shape"]), ref[name]
        if g.shape != r.shape:
            fail(f"{name}: gpt4d's gradient is {list(g.shape)}, the reference's "
                 f"{list(r.shape)}", 1)
        scale = float(np.abs(r).max()) or 1.0
        err = np.abs(g - r) / scale
        at = np.unravel_index(int(err.argmax()), err.shape)
        row = {"tensor": name, "deviation": float(err[at]), "element": [int(x) for x in at],
               "gpt4d": float(g[at]), "reference": float(r[at]), "scale": scale}
        rows.append(row)
        if worst is None or row["deviation"] > worst["deviation"]:
            worst = row
    missing = set(ref) - {t["name"] for t in ours["tensors"]}
    if missing:
        fail(f"gpt4d dumped no gradient for {', '.join(sorted(missing))}", 1)
    return rows, worst, worst["deviation"] <= tol


def check_arch(jax, jnp, np, binary, arch, iters, folder):
    a = shape_of(arch)
    dump = os.path.join(folder, f"gradients_{arch}.json")
    ours_loss = same.gpt4d_losses(binary, arch, iters, folder, ["--dump-gradients", dump])
    with open(dump, encoding="utf-8") as f:
        ours = json.load(f)
    ref_loss, ref_grads = reference(jax, jnp, np, a, iters)
    zero = {t["name"]: (np.asarray(t["gradient"]).reshape(t["shape"]) == 0) &
            (ref_grads[0].get(t["name"], 1.0) == 0) for t in ours["tensors"]}
    grad_tol, k, loss_tol = tolerances(np, a, ref_grads, zero)
    rows, worst, ok = compare_gradients(np, ours, ref_grads[0], grad_tol)
    print(f"{arch}: gradients of iteration 0, {len(rows)} tensors; tolerance C u K = "
          f"{grad_tol:.2e} of each tensor's largest |entry| (K = {k})")
    for r in sorted(rows, key=lambda r: -r["deviation"])[:3]:
        print(f"{arch}:   {r['tensor']:14s} {r['deviation']:.2e} at {r['element']}")
    print(f"{arch}: largest gradient deviation {worst['deviation']:.2e} in {worst['tensor']}"
          f"{worst['element']} (gpt4d {worst['gpt4d']:.8g}, reference {worst['reference']:.8g})"
          f": {'ok' if ok else 'FAILED'}, tolerance {grad_tol:.2e}")
    doc = {"gradient_tolerance": grad_tol, "gradients": rows, "iterations": []}
    same_dump = abs(ours["loss"] - ours_loss[0]) <= loss_tol(0, ours_loss[0])
    ok &= same_dump
    if not same_dump:
        print(f"{arch}: --dump-gradients' loss {ours['loss']:.8g} is not iteration 0's "
              f"{ours_loss[0]:.8g}: FAILED")
    print(f"{arch}: iteration  gpt4d       reference   |difference|  tolerance")
    for i, (x, y) in enumerate(zip(ours_loss, ref_loss)):
        tol = loss_tol(i, y)
        ok &= abs(x - y) <= tol
        doc["iterations"].append({"gpt4d": x, "reference": y, "tolerance": tol})
        print(f"{arch}: {i:9d}  {x:.7f}  {y:.7f}  {abs(x - y):.2e}      {tol:.2e}"
              f"{'' if abs(x - y) <= tol else '  FAILED'}")
    ok &= len(ours_loss) == len(ref_loss)
    doc["passed"] = ok
    return ok, doc


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpt4d", required=True, help="gpt4d binary (a host or CUDA build)")
    p.add_argument("--arch", choices=("llama", "gpt", "both"), default="both")
    p.add_argument("--iters", type=int, default=4)
    p.add_argument("--json", help="write the deviations, tolerances and verdict here")
    a = p.parse_args(argv)
    with stdout_for_results(bool(a.json) and is_stdout_name(a.json)):
        return check(a)  # --json -: the JSON alone on stdout


def check(a):
    same.check_common_args(a)
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError:
        if os.environ.get("OVB_REQUIRE_REFERENCE"):
            fail(f"JAX is not installed in {sys.executable}, and OVB_REQUIRE_REFERENCE is set "
                 "(ci/test.sh sets it: CI must run this check; ci/setup.sh installs JAX)", 1)
        print("check_jax_reference.py: skipped: JAX is not installed in this Python")
        return SKIP
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    doc, ok = {"jax": jax.__version__, "runs": {}}, True
    with tempfile.TemporaryDirectory() as folder:
        for arch in (("llama", "gpt") if a.arch == "both" else (a.arch,)):
            passed, doc["runs"][arch] = check_arch(jax, jnp, np, a.gpt4d, arch, a.iters, folder)
            ok &= passed
    doc["passed"] = ok
    if a.json:
        atomic_write_json(a.json, doc)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
