"""The suite's presets: model size, grids, overlap flags and watchdog limits per preset and backend.

quick: small enough for CI on 2 cores in a few minutes (host) or a first look at a node (cuda).
full:  a node's worth of work: more grids, every single overlap flag, a 1.3B-class GPT on GPUs.

Grids are derived from the rank count N by patterns: the prime factors of N are dealt out, largest
first, over the dimensions a pattern names (x, y, z, d = data) in turn, e.g. N=8 with "xy" gives
(4,2,1,1) and with "xyzd" (2,2,2,1). Grids the model cannot be split over (gpt4d's rules: heads or
vocabulary not divisible by Gy, hidden by Gx*Gy, batch by Gdata*Gz, a layer's weight block by Gz)
are left out; duplicates are dropped. fits() restates gpt4d's validation so that planning needs no
build; slurm/tests/config_parity.py pins it to `gpt4d --check-config --json`.
"""

from dataclasses import dataclass

from .util import SuiteError

PRESETS = ("quick", "full")


@dataclass(frozen=True)
class Model:
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    batch: int   # global batch in sequences (rounded up to a multiple of the rank count)
    iters: int


@dataclass(frozen=True)
class Preset:
    model: Model
    grid_patterns: tuple
    overlaps: tuple          # gpt4d --overlap values
    traced: tuple            # (grid pattern, overlap) pairs run with --trace
    timeout_s: float         # watchdog wall-clock limit of one step
    stall_s: float           # watchdog limit without output for launched (MPI) steps
    top_k: int = 3


_TABLE = {
    ("quick", "host"): Preset(Model(2, 64, 4, 32, 256, 8, 6), ("data", "xy", "zd"),
                              ("none", "oar,ors,oag"), (("xy", "oar,ors,oag"),), 600, 300),
    ("quick", "cuda"): Preset(Model(4, 1024, 16, 1024, 50304, 8, 10), ("data", "xy", "zd"),
                              ("none", "oar,ors,oag"), (("xy", "oar,ors,oag"),), 900, 300),
    ("full", "host"): Preset(Model(4, 128, 8, 64, 512, 16, 10),
                             ("x", "data", "xy", "xyz", "xyzd", "zd", "yd"),
                             ("none", "oar", "ors", "oag", "oar,ors,oag"),
                             (("xy", "none"), ("xy", "oar,ors,oag")), 1800, 600, 5),
    ("full", "cuda"): Preset(Model(24, 2048, 16, 2048, 50304, 16, 30),
                             ("x", "data", "xy", "xyz", "xyzd", "zd", "yd"),
                             ("none", "oar", "ors", "oag", "oar,ors,oag"),
                             (("xy", "none"), ("xy", "oar,ors,oag")), 3600, 900, 5),
}


def preset(name, backend):
    if name not in PRESETS:
        raise SuiteError(f"unknown preset '{name}' (known: {', '.join(PRESETS)})")
    return _TABLE[(name, backend)]


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
    # The Z-gathered weight block of every layer (out/G(out) x in/G(in)) is sharded over Z:
    # qkv h->3h, attention-out h->h (transposed), MLP-up h->4h, MLP-down 4h->h (transposed), LM
    # head h->vocab.
    blocks = (3 * h // gy * (h // gx), h // gx * (h // gy), 4 * h // gy * (h // gx),
              h // gx * (4 * h // gy), model.vocab // gy * (h // gx))
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
