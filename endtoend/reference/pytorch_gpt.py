#!/usr/bin/env python3
"""PyTorch reference for gpt4d: the same GPT trained the way a PyTorch user would, to compare
side by side on whatever GPU is at hand (the ovb-suite preset h100-single runs it beside gpt4d).

Model as gpt4d: pre-LayerNorm decoder, token + learned position embeddings, biases in every
linear and layer norm, GELU (tanh approximation), untied LM head, cross-entropy; or, with
--arch llama (and the llama3-* presets), gpt4d's Llama: RMSNorm, rotary embeddings on q and k
(base --rope-theta), grouped-query attention (--kv-heads), SwiGLU MLP (--ffn-hidden), no biases,
no position embedding, untied LM head; fp32 weights under bf16 autocast (--precision bf16: the
weights, activations and optimizer in bf16 without autocast, the residual stream and norms in
bf16 as Megatron-LM's layers run them), causal SDPA (flash attention; --sdpa pins its
backend), fused AdamW (weight decay 0.1 on weight matrices and embeddings), gradient clipping
at 1.0; optionally torch.compile.
Synthetic tokens. With --trace, --trace-iters more iterations after the timed ones run under
PyTorch's profiler (GPU activities only) and their Kineto trace is written (gzip when the name ends
in .gz) for `ovb-trace analyze`: kernel time per category, set beside the model's terms by
results/model/torch-kernels-compare.py.

  python3 pytorch_gpt.py --preset 1.3B --batch 4 --iters 13 --warmup 3 --out torch.json
  python3 pytorch_gpt.py --preset 1.3B --batch 4 --compile --out torch-compile.json
  python3 pytorch_gpt.py --preset 1.3B --batch 4 --compile-mode max-autotune --out torch-ma.json
  python3 pytorch_gpt.py --preset 1.3B --seq 4096 --vocab 131072 --batch 4 --sdpa cudnn \
      --out run.json --trace run.trace.json.gz

Prints one line per iteration and a summary; the JSON has "config", "iterations" (iter, loss,
time_ms) and "summary": median_time_ms (after warm-up), tokens_per_s, tflops_per_gpu and mfu with
the model-FLOP formula of docs/metrics.md (F = 6 B s (L P + h V) + 6 B s^2 L h, P the weights of
one block's linears: 12 h^2 for GPT, h (heads + 2 kv) d + h^2 + 3 h ffn for Llama),
peak_memory_bytes (torch.cuda.max_memory_allocated) and the versions used; with --trace,
"trace" (file, iterations, their time_ms).
Exit status 2 for bad options, no GPU or an SDPA backend this PyTorch does not have.
"""
import argparse
import contextlib
import gzip
import math
import os
import sys
import tempfile
import time

# The repository's one atomic writer (standard library only).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..",
                                "analysis"))
from ovb_analysis import stats  # noqa: E402
from ovb_analysis.io_util import (atomic_write, atomic_write_json, is_stdout_name,  # noqa: E402
                                  stdout_for_results)

PRESETS = {  # name: (layers, hidden, heads), as core/src/gpt_plan.cpp
    "125M": (12, 768, 12),
    "350M": (24, 1024, 16),
    "760M": (24, 1536, 16),
    "1.3B": (24, 2048, 16),
    "2.7B": (32, 2560, 32),
    "6.7B": (32, 4096, 32),
}
LLAMA_PRESETS = {  # name: (layers, hidden, heads, kv_heads, ffn_hidden), as core/src/gpt_plan.cpp
    "llama3-8B": (32, 4096, 32, 8, 14336),
    "llama3-70B": (80, 8192, 64, 8, 28672),
    "llama3-405B": (126, 16384, 128, 8, 53248),
}
LLAMA3_VOCAB, LLAMA3_ROPE_THETA = 128256, 500000.0
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# --sdpa: torch.nn.attention.SDPBackend member of each choice (auto: PyTorch's own order).
SDPA_BACKENDS = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION",
                 "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}
LR = 3e-4  # constant (gpt4d decays it unless --min-lr equals --lr)
PEAK_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}  # dense, as ovb::metrics


def block_linear_params(a):
    """Weights of one block's linear layers: GPT 12 h^2; Llama h (heads + 2 kv) d + h^2 + 3 h ffn."""
    h = a.hidden
    if a.arch != "llama":
        return 12 * h * h
    return h * (a.heads + 2 * a.kv_heads) * (h // a.heads) + h * h + 3 * h * a.ffn_hidden


def model_flop(a):
    """metrics.md (transformer_model_flop): F = 6 B s (L P + h V) + 6 B s^2 L h."""
    b, s = float(a.batch), float(a.seq)
    return (6.0 * b * s * (a.layers * block_linear_params(a) + a.hidden * a.vocab)
            + 6.0 * b * s * s * a.layers * a.hidden)


def compile_note(a):
    if not a.compile:
        return ""
    return ", torch.compile" + (f" (mode {a.compile_mode})" if a.compile_mode else "")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", choices=sorted(PRESETS) + sorted(LLAMA_PRESETS),
                   help="model size (or --layers/--hidden/--heads)")
    p.add_argument("--arch", choices=("gpt", "llama"), help="architecture (default gpt; a "
                   "llama3-* preset sets llama)")
    p.add_argument("--layers", type=int)
    p.add_argument("--hidden", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--kv-heads", type=int, help="K/V heads (llama; default --heads)")
    p.add_argument("--ffn-hidden", type=int, help="SwiGLU width (llama)")
    p.add_argument("--rope-theta", type=float, help="rotary base (llama; default 10000)")
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--vocab", type=int, help="vocabulary (default 50304; llama3-*: 128256)")
    p.add_argument("--batch", type=int, required=True, help="sequences per iteration")
    p.add_argument("--iters", type=int, default=stats.default_runs(),
                   help="iterations (default: 20 timed after the warm-up rule)")
    p.add_argument("--warmup", type=int, default=None,
                   help="iterations left out of the summary (default: the warm-up rule, "
                        "max(3, ceil(iters/10)))")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--compile-mode", choices=COMPILE_MODES,
                   help="torch.compile's mode (implies --compile; default: torch's default)")
    p.add_argument("--precision", choices=("autocast", "bf16"), default="autocast",
                   help="autocast (default): fp32 weights, bf16 autocast; bf16: everything bf16")
    p.add_argument("--sdpa", choices=("auto",) + tuple(SDPA_BACKENDS), default="auto",
                   help="scaled_dot_product_attention's backend (default auto: PyTorch picks)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--out", help="JSON result file (-: standard output)")
    p.add_argument("--trace", help="Kineto trace of --trace-iters iterations after the timed "
                   "ones (GPU activities; .gz: gzip)")
    p.add_argument("--trace-iters", type=int, default=None,
                   help="iterations traced with --trace (default 2)")
    a = p.parse_args(argv)
    a.compile = a.compile or a.compile_mode is not None
    if a.trace_iters is not None and not a.trace:
        p.error("--trace-iters needs --trace")
    a.trace_iters = 2 if a.trace_iters is None else a.trace_iters
    if a.trace_iters < 1:
        p.error("--trace-iters must be at least 1")
    if a.trace and is_stdout_name(a.trace):
        p.error("--trace needs a file name")
    if a.preset in LLAMA_PRESETS:
        if a.arch == "gpt":
            p.error(f"--arch gpt contradicts --preset {a.preset} (a llama model)")
        layers, hidden, heads, kv, ffn = LLAMA_PRESETS[a.preset]
        a.arch, a.kv_heads, a.ffn_hidden = "llama", a.kv_heads or kv, a.ffn_hidden or ffn
        a.vocab, a.rope_theta = a.vocab or LLAMA3_VOCAB, a.rope_theta or LLAMA3_ROPE_THETA
    elif a.preset:
        layers, hidden, heads = PRESETS[a.preset]
    if a.preset:
        a.layers, a.hidden, a.heads = a.layers or layers, a.hidden or hidden, a.heads or heads
    a.arch, a.vocab = a.arch or "gpt", a.vocab or 50304
    a.rope_theta = a.rope_theta or 10000.0
    if not (a.layers and a.hidden and a.heads):
        p.error("give --preset or all of --layers, --hidden, --heads")
    if a.hidden % a.heads:
        p.error(f"hidden {a.hidden} is not divisible by heads {a.heads}")
    a.kv_heads = a.kv_heads or a.heads
    if a.arch == "gpt" and (a.kv_heads != a.heads or a.ffn_hidden):
        p.error("--kv-heads and --ffn-hidden need --arch llama")
    if a.arch == "llama":
        if not a.ffn_hidden:
            p.error("--arch llama needs --ffn-hidden (or a llama3-* preset)")
        if a.heads % a.kv_heads:
            p.error(f"heads {a.heads} is not divisible by kv-heads {a.kv_heads}")
        if (a.hidden // a.heads) % 2:
            p.error("rotary embeddings need an even head size")
    if a.warmup is None:
        a.warmup = stats.default_warmup(a.iters)
    if a.iters <= a.warmup or a.warmup < 0:
        p.error("--iters must exceed --warmup >= 0")
    return a


def build(a, torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            h = a.hidden
            self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
            self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
            self.up, self.down = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

        def forward(self, x):
            B, S, h = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
            q, k, v = (t.view(B, S, a.heads, h // a.heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, S, h))
            return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(a.vocab, a.hidden), nn.Embedding(a.seq, a.hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
            self.ln_f = nn.LayerNorm(a.hidden)
            self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)  # untied
            residual = ("proj.weight", "down.weight")  # std / sqrt(2L), as GPT-2 and gpt4d
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * a.layers) if name.endswith(residual) else 0.02
                    nn.init.normal_(p, 0.0, std)

        def forward(self, idx, targets):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for b in self.blocks:
                x = b(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.reshape(-1))

    if a.arch != "llama":
        return GPT()
    return build_llama(a, torch)


def build_llama(a, torch):
    """gpt4d's Llama: RMSNorm (eps 1e-5, as gpt4d's norms), RoPE on pairs (2i, 2i+1) of q and k,
    grouped-query attention (K/V repeated over their query heads for SDPA), SwiGLU, no biases."""
    nn, F = torch.nn, torch.nn.functional
    d = a.hidden // a.heads

    class RMSNorm(nn.Module):
        def __init__(self, h):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(h))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * self.weight

    def rope(x, cos, sin):  # x [B, heads, S, d]; pairs (2i, 2i+1) turn by pos * theta^(-2i/d)
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            h = a.hidden
            self.ln1, self.ln2 = RMSNorm(h), RMSNorm(h)
            self.q = nn.Linear(h, a.heads * d, bias=False)
            self.kv = nn.Linear(h, 2 * a.kv_heads * d, bias=False)
            self.proj = nn.Linear(h, h, bias=False)
            self.gate_up = nn.Linear(h, 2 * a.ffn_hidden, bias=False)
            self.down = nn.Linear(a.ffn_hidden, h, bias=False)

        def forward(self, x, cos, sin):
            B, S, h = x.shape
            y = self.ln1(x)
            q = self.q(y).view(B, S, a.heads, d).transpose(1, 2)
            k, v = (t.view(B, S, a.kv_heads, d).transpose(1, 2)
                    for t in self.kv(y).split(a.kv_heads * d, dim=2))
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            r = a.heads // a.kv_heads
            k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(att.transpose(1, 2).reshape(B, S, h))
            gate, up = self.gate_up(self.ln2(x)).chunk(2, dim=-1)
            return x + self.down(F.silu(gate) * up)

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(a.vocab, a.hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
            self.ln_f = RMSNorm(a.hidden)
            self.lm_head = nn.Linear(a.hidden, a.vocab, bias=False)  # untied
            residual = ("proj.weight", "down.weight")
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * a.layers) if name.endswith(residual) else 0.02
                    nn.init.normal_(p, 0.0, std)
            inv = a.rope_theta ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
            ang = torch.outer(torch.arange(a.seq, dtype=torch.float32), inv)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)

        def forward(self, idx, targets):
            x = self.wte(idx)
            for b in self.blocks:
                x = b(x, self.cos, self.sin)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.reshape(-1))

    return Llama()


def make_optimizer(model, torch, lr, fused):
    """AdamW as gpt4d's defaults: betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on weight matrices
    and embeddings only."""
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() != 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-8, fused=fused)


def update(model, opt, torch, loss):
    """The rest of an iteration after the forward: backward, the global gradient norm clipped at
    1.0 (gpt4d's --clip default), the AdamW step."""
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)


def main(argv):
    a = parse_args(argv)
    with stdout_for_results(is_stdout_name(a.out)):  # --out -: the JSON alone on stdout
        return run(a)


def sdpa_context(a):
    """The context that pins scaled_dot_product_attention's backend (--sdpa), or None when this
    PyTorch has no such backend."""
    if a.sdpa == "auto":
        return contextlib.nullcontext
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return None
    backend = getattr(SDPBackend, SDPA_BACKENDS[a.sdpa], None)
    return None if backend is None else (lambda: sdpa_kernel([backend]))


def write_trace(prof, path):
    """The profiler's Kineto trace, gzip when `path` ends in .gz, written atomically."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as f:
            data = f.read()
    atomic_write(path, gzip.compress(data) if str(path).endswith(".gz") else data)


def run(a):
    try:
        import torch
    except ImportError:
        print("pytorch_gpt.py: error: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("pytorch_gpt.py: error: no CUDA GPU visible", file=sys.stderr)
        return 2
    attention = sdpa_context(a)
    if attention is None:
        print(f"pytorch_gpt.py: error: --sdpa {a.sdpa}: PyTorch {torch.__version__} has no "
              f"SDPBackend.{SDPA_BACKENDS[a.sdpa]}", file=sys.stderr)
        return 2
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    model = build(a, torch).to(dev)
    if a.precision == "bf16":
        model = model.to(torch.bfloat16)
    autocast = ((lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if a.precision == "autocast"
                else contextlib.nullcontext)
    dtype = "bf16 autocast" if a.precision == "autocast" else "bf16"
    opt = make_optimizer(model, torch, LR, fused=True)
    step_model = torch.compile(model, mode=a.compile_mode) if a.compile else model
    n_params = sum(p.numel() for p in model.parameters())
    gen = torch.Generator(device=dev).manual_seed(a.seed)
    F = model_flop(a)
    name = torch.cuda.get_device_name(dev)
    peak = next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)
    arch = (f"llama (kv-heads {a.kv_heads}, ffn {a.ffn_hidden}, rope-theta {a.rope_theta:g}), "
            if a.arch == "llama" else "")
    sdpa = "" if a.sdpa == "auto" else f" ({a.sdpa})"
    print(f"pytorch_gpt: {arch}{a.layers} layers, hidden {a.hidden}, heads {a.heads}, seq {a.seq}, "
          f"vocab {a.vocab} ({n_params} parameters), batch {a.batch}, {dtype}, SDPA{sdpa}, "
          f"fused AdamW{compile_note(a)} on {name}", flush=True)

    def step():
        """One training iteration, timed: (loss, seconds)."""
        idx = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev, generator=gen)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with autocast(), attention():
            loss = step_model(idx[:, :-1], idx[:, 1:])
        update(model, opt, torch, loss)
        torch.cuda.synchronize()
        return loss.item(), time.perf_counter() - t0

    iters = []
    for i in range(a.iters):
        loss, dt = step()
        iters.append({"iter": i, "loss": loss, "time_ms": dt * 1e3})
        print(f"iter {i + 1:4d}/{a.iters}  loss {loss:.4f}  time {dt * 1e3:.1f} ms  "
              f"TFLOP/s {F / dt / 1e12:.1f}", flush=True)
    traced = None
    if a.trace:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            traced = [step()[1] * 1e3 for _ in range(a.trace_iters)]
        write_trace(prof, a.trace)
        print(f"trace: {a.trace_iters} iterations after the timed ones "
              f"({', '.join(f'{t:.1f}' for t in traced)} ms) in {a.trace}", flush=True)
    timing = stats.timing_summary([r["time_ms"] for r in iters], a.warmup)
    med = timing["p50_ms"] / 1e3
    tflops = F / med / 1e12
    summary = {**timing, "p10_time_ms": timing["p10_ms"], "p90_time_ms": timing["p90_ms"],
               "warmup_iters": a.warmup, "measured_iters": a.iters - a.warmup,
               "median_time_ms": med * 1e3, "tokens_per_s": a.batch * a.seq / med,
               "tflops_per_gpu": tflops, "mfu": tflops / peak if peak else None,
               "peak_tflops": peak, "model_flop_per_iter": F,
               "peak_memory_bytes": torch.cuda.max_memory_allocated(dev),
               "first_loss": iters[0]["loss"], "final_loss": iters[-1]["loss"]}
    result = {"config": {"model": {"layers": a.layers, "hidden": a.hidden, "heads": a.heads,
                                   "seq": a.seq, "vocab": a.vocab, "preset": a.preset,
                                   "parameters": n_params, "arch": a.arch,
                                   "kv_heads": a.kv_heads,
                                   "ffn_hidden": a.ffn_hidden or 4 * a.hidden,
                                   "rope_theta": a.rope_theta},
                         "batch": a.batch, "iters": a.iters, "warmup": a.warmup,
                         "compile": a.compile, "compile_mode": a.compile_mode,
                         "dtype": dtype, "precision": a.precision,
                         "attention": "torch SDPA (is_causal)", "sdpa_backend": a.sdpa,
                         "optimizer": "AdamW fused"},
              "context": {"device": name, "torch": torch.__version__,
                          "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                          "host": os.uname().nodename,
                          "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
              "iterations": iters, "summary": summary}
    if traced is not None:
        result["trace"] = {"file": os.path.basename(a.trace), "iterations": a.trace_iters,
                           "time_ms": traced}
    print(f"summary: median {med * 1e3:.1f} ms/iteration, {tflops:.1f} TFLOP/s per GPU, "
          f"peak memory {summary['peak_memory_bytes'] / 2**30:.2f} GiB", flush=True)
    if a.out:
        atomic_write_json(a.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
