"""The suite's presets: model size, grids, overlap flags and watchdog limits per preset and backend.

quick: small enough for CI on 2 cores in a few minutes (host) or a first look at a node (cuda).
full:  a node's worth of work: more grids, every single overlap flag, a 1.3B-class GPT on GPUs.

Each preset runs GPT (the default) or Llama (`ovb-suite --arch llama`: the preset's Llama model, the
same grids and overlap flags). The GPT quick host preset
also runs one short llama-tiny step on its first grid, so the suite exercises Llama end to end.

Grids are derived from the rank count N by patterns: the prime factors of N are dealt out, largest
first, over the dimensions a pattern names (x, y, z, d = data) in turn, e.g. N=8 with "xy" gives
(4,2,1,1) and with "xyzd" (2,2,2,1). Grids the model cannot be split over (gpt4d's rules: heads or
vocabulary not divisible by Gy, hidden by Gx*Gy, batch by Gdata*Gz, a layer's weight block by Gz)
are left out, and for Llama also kv-heads or the SwiGLU width not divisible by Gy, heads not divisible
by kv-heads or an odd head dimension; duplicates are dropped. fits() restates gpt4d's validation so that planning needs no
build; slurm/tests/config_parity.py pins it to `gpt4d --check-config --json`.
"""

from dataclasses import dataclass, replace

from .util import SuiteError

from ovb_analysis.overlap_flags import ALL, FLAGS, NONE  # noqa: E402 (the path is set by .util)

PRESETS = ("quick", "full")
ARCHS = ("gpt", "llama")


@dataclass(frozen=True)
class Model:
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    batch: int   # global batch in sequences (rounded up to a multiple of the rank count)
    iters: int
    arch: str = "gpt"
    kv_heads: int = 0      # llama: K/V heads of grouped-query attention (0: as many as heads)
    ffn_hidden: int = 0    # llama: the SwiGLU width (0: gpt's 4*hidden)

    def kv(self):
        return self.kv_heads or self.heads

    def ffn(self):
        return self.ffn_hidden or 4 * self.hidden


@dataclass(frozen=True)
class Preset:
    model: Model
    grid_patterns: tuple
    overlaps: tuple          # gpt4d --overlap values
    traced: tuple            # (grid pattern, overlap) pairs run with --trace
    timeout_s: float         # watchdog wall-clock limit of one step
    stall_s: float           # watchdog limit without output for launched (MPI) steps
    top_k: int = 3
    arch_check: object = None  # a Model of the other architecture run once (one short step)
    # gpt4d runs of every configuration, in interleaved rounds (each round runs every configuration
    # once), compared at the median of their medians: on the host, ranks sharing cores make one
    # run's median vary by tens of per cent between runs (results/host/quick-suite-model).
    rounds: int = 1


# The quick host runs take 23 iterations: gpt4d's warm-up rule leaves 3 and times 20, the fewest it
# calls a figure to quote (kMinTimedSamples), so the model is compared with steady-state medians.
_TABLE = {
    ("quick", "host"): Preset(Model(2, 64, 4, 32, 256, 8, 23), ("data", "xy", "zd"),
                              (NONE, ALL), (("xy", ALL),), 600, 300),
    ("quick", "cuda"): Preset(Model(4, 1024, 16, 1024, 50304, 8, 10), ("data", "xy", "zd"),
                              (NONE, ALL), (("xy", ALL),), 900, 300),
    ("full", "host"): Preset(Model(4, 128, 8, 64, 512, 16, 10),
                             ("x", "data", "xy", "xyz", "xyzd", "zd", "yd"),
                             (NONE, *FLAGS, ALL), (("xy", NONE), ("xy", ALL)), 1800, 600, 5),
    ("full", "cuda"): Preset(Model(24, 2048, 16, 2048, 50304, 16, 30),
                             ("x", "data", "xy", "xyz", "xyzd", "zd", "yd"),
                             (NONE, *FLAGS, ALL), (("xy", NONE), ("xy", ALL)), 3600, 900, 5),
}


# The Llama model of each host preset: the GPT preset's layers, hidden, heads, sequence, vocabulary,
# batch and iterations with half as many K/V heads and a SwiGLU width near 8h/3 rounded to a
# multiple of 16 (the Llama rule of thumb: the three SwiGLU matrices cost about the GPT MLP's two).
_LLAMA = {
    ("quick", "host"): Model(2, 64, 4, 32, 256, 8, 23, "llama", 2, 176),
    ("full", "host"): Model(4, 128, 8, 64, 512, 16, 10, "llama", 4, 352),
    # On GPUs the SwiGLU width is 8h/3 rounded up to a multiple of 256, as Llama's own rule does.
    ("quick", "cuda"): Model(4, 1024, 16, 1024, 50304, 8, 10, "llama", 8, 2816),
    ("full", "cuda"): Model(24, 2048, 16, 2048, 50304, 16, 30, "llama", 8, 5632),
}
# gpt4d's llama-tiny preset (2 layers, hidden 64, 4 heads, 2 K/V heads, SwiGLU 176) for one step
# beside the GPT quick host runs, timed like them (the model's comparison reads it).
_LLAMA_CHECK = Model(2, 64, 4, 32, 256, 8, 23, "llama", 2, 176)
_TABLE[("quick", "host")] = replace(_TABLE[("quick", "host")], arch_check=_LLAMA_CHECK)
for _key in (("quick", "host"), ("full", "host")):
    _TABLE[_key] = replace(_TABLE[_key], rounds=3)


def preset(name, backend, arch="gpt"):
    if name not in PRESETS:
        raise SuiteError(f"unknown preset '{name}' (known: {', '.join(PRESETS)})")
    if arch not in ARCHS:
        raise SuiteError(f"unknown architecture '{arch}' (known: {', '.join(ARCHS)})")
    p = _TABLE[(name, backend)]
    if arch == "gpt":
        return p
    if (name, backend) not in _LLAMA:
        raise SuiteError(f"preset {name} has no {arch} model for backend {backend}")
    return replace(p, model=_LLAMA[(name, backend)], arch_check=None)


def model_args(model, batch):
    """The shape options of gpt4d and ovb-model for `model` at global batch `batch`."""
    args = ["--layers", str(model.layers), "--hidden", str(model.hidden), "--heads",
            str(model.heads), "--seq", str(model.seq), "--vocab", str(model.vocab)]
    if model.arch != "gpt":
        args += ["--arch", model.arch, "--kv-heads", str(model.kv()), "--ffn-hidden",
                 str(model.ffn())]
    return args + ["--batch", str(batch)]


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return sorted(out, reverse=True)


def grid_for(pattern, ranks):
    """(gx, gy, gz, gdata) for a pattern over the letters x, y, z, d."""
    dims = {"x": 0, "y": 1, "z": 2, "d": 3}
    if pattern == "data":
        pattern = "d"
    g = [1, 1, 1, 1]
    for i, f in enumerate(_prime_factors(ranks)):
        g[dims[pattern[i % len(pattern)]]] *= f
    return tuple(g)


def fits(model, grid, batch, micro_batch=0):
    """Whether gpt4d accepts the model on the grid (ovb/gpt_plan.hpp validate_gpt_plan);
    micro_batch 0 is gpt4d's default, the whole local batch in one micro-step."""
    gx, gy, gz, gd = grid
    h = model.hidden
    if not (h % model.heads == 0 and h % (gx * gy) == 0 and model.heads % gy == 0
            and model.vocab % gy == 0 and batch % (gz * gd) == 0):
        return False
    if micro_batch < 0 or (micro_batch > 0 and batch % (micro_batch * gz * gd) != 0):
        return False
    if model.arch == "llama":
        # Whole K/V groups and the SwiGLU width are split over Y; rotary embeddings rotate pairs.
        kv, ffn, hd = model.kv(), model.ffn(), h // model.heads
        if not (model.heads % kv == 0 and hd % 2 == 0 and kv % gy == 0 and ffn % gy == 0):
            return False
        qkv, up, down = (model.heads + 2 * kv) * hd, 2 * ffn, ffn
    elif model.kv() != model.heads or model.ffn() != 4 * h:
        return False  # GQA and other MLP widths are Llama's
    else:
        qkv, up, down = 3 * h, 4 * h, 4 * h
    # The Z-gathered weight block of every layer (out/G(out) x in/G(in)) is sharded over Z:
    # qkv h->qkv, attention-out h->h (transposed), MLP-up h->up, MLP-down down->h (transposed),
    # LM head h->vocab.
    blocks = (qkv // gy * (h // gx), h // gx * (h // gy), up // gy * (h // gx),
              h // gx * (down // gy), model.vocab // gy * (h // gx))
    return all(b % gz == 0 for b in blocks)


def global_batch(model, ranks):
    return -(-model.batch // ranks) * ranks


def grids(p, ranks):
    """The preset's distinct grids for `ranks` ranks that the model can be split over."""
    batch = global_batch(p.model, ranks)
    out = []
    for pat in p.grid_patterns:
        g = grid_for(pat, ranks)
        if g not in out and fits(p.model, g, batch):
            out.append(g)
    return out
