"""gpt4d's initial weights for the references, so that they start from gpt4d's model: gpt4d's
counter-based initialiser (endtoend/src/model/rng.hpp) evaluated at every global index, laid out
as gpt4d lays out its tensors (endtoend/src/model/layout.cpp, docs/algorithm.md). Pure Python,
for the small models of check_same_model.py and check_jax_reference.py.

  load_gpt4d_init(model, a, seed, torch)   into pytorch_gpt.py's modules (their parameter order)
  gpt4d_weights(a, seed, np)               {gpt4d tensor name: float32 array} in gpt4d's layout
  a: the reference's options (arch, layers, hidden, heads, kv_heads, ffn_hidden, seq, vocab)
"""
import math
import struct

M64 = (1 << 64) - 1


def mix64(z):
    """splitmix64's finaliser, as rng.hpp."""
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def f32(x):
    """x rounded to IEEE single precision (C++'s static_cast<float>)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def normal_at(seed, stream, index):
    """rng.hpp's normal_at: Box-Muller in double from one hash, rounded to float."""
    r = mix64(mix64(mix64(seed) ^ stream) ^ index)
    u1 = ((r >> 32) + 1.0) / 4294967296.0
    u2 = (r & 0xFFFFFFFF) / 4294967296.0
    return f32(math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2))


def gpt4d_tensor(torch, seed, tid, rows, cols, stddev):
    """gpt4d's global [rows, cols] weight: stddev * normal_at(seed, id, row-major index), the
    product in float (both factors are floats in gpt4d)."""
    n = torch.tensor([normal_at(seed, tid, i) for i in range(rows * cols)], dtype=torch.float32)
    return (n * torch.tensor(stddev, dtype=torch.float32)).view(rows, cols)


def gpt4d_weights(a, seed, np):
    """Every gpt4d tensor by its layout name ("L0.qkv.w", "L0.ln1.g", "wte", ...), shaped as
    gpt4d's global tensors ([rows, cols]; vectors [1, n]) and holding gpt4d's initial values for
    --seed `seed`: tensor ids and standard deviations as in load_gpt4d_init below."""
    h, L = a.hidden, a.layers
    llama = a.arch == "llama"
    kv = a.kv_heads if llama else a.heads
    d = h // a.heads
    ffn = a.ffn_hidden if llama else 4 * h
    std_w = f32(0.02)
    std_proj = f32(std_w / f32(math.sqrt(f32(2.0 * L))))

    def normal(tid, rows, cols, std):
        n = np.array([normal_at(seed, tid, i) for i in range(rows * cols)], dtype=np.float32)
        return (n * np.float32(std)).reshape(rows, cols)

    w = {}
    for l in range(L):
        tid, p = 16 * (l + 1), f"L{l}."
        w[p + "qkv.w"] = normal(tid + 0, (a.heads + 2 * kv) * d, h, std_w)
        w[p + "attn_out.w"] = normal(tid + 2, h, h, std_proj)
        w[p + "mlp_up.w"] = normal(tid + 4, (2 if llama else 1) * ffn, h, std_w)
        w[p + "mlp_down.w"] = normal(tid + 6, h, ffn, std_proj)
        w[p + "ln1.g"] = np.ones((1, h), np.float32)
        w[p + "ln2.g"] = np.ones((1, h), np.float32)
        if not llama:
            for name, n in (("ln1.b", h), ("ln2.b", h), ("qkv.b", (a.heads + 2 * kv) * d),
                            ("attn_out.b", h), ("mlp_up.b", ffn), ("mlp_down.b", h)):
                w[p + name] = np.zeros((1, n), np.float32)
    w["lm_head.w"] = normal(5, a.vocab, h, std_w)
    w["ln_f.g"] = np.ones((1, h), np.float32)
    w["wte"] = normal(1, a.vocab, h, std_w)
    if not llama:
        w["ln_f.b"] = np.zeros((1, h), np.float32)
        w["wpe"] = normal(2, a.seq, h, std_w)
    return w


def load_gpt4d_init(model, a, seed, torch):
    """Sets every parameter of the reference `model` (built by pytorch_gpt.build for options `a`)
    to gpt4d's initial value for --seed `seed`. Tensor ids and standard deviations as
    layout.cpp's make_layout: block l has id 16 (l + 1) + 0 (QKV), 2 (attention-out), 4 (MLP-up),
    6 (MLP-down); the LM head 5, wte 1, wpe 2; norms start at gain 1, bias 0, linear biases at 0."""
    h, d, L = a.hidden, a.hidden // a.heads, a.layers
    llama = a.arch == "llama"
    kv = a.kv_heads if llama else a.heads
    r = a.heads // kv
    ffn = a.ffn_hidden if llama else 4 * h
    std_w = f32(0.02)
    std_proj = f32(std_w / f32(math.sqrt(f32(2.0 * L))))
    with torch.no_grad():
        for name, p in model.named_parameters():  # gains 1, biases 0 (gpt4d's Init::ones/zeros)
            p.fill_(1.0 if name.endswith("weight") and p.dim() == 1 else 0.0)
        for l, blk in enumerate(model.blocks):
            tid = 16 * (l + 1)
            qkv = gpt4d_tensor(torch, seed, tid + 0, (a.heads + 2 * kv) * d, h, std_w)
            # gpt4d's QKV rows: per K/V group [q of its r query heads | k | v] (GPT: r = 1).
            groups = qkv.view(kv, (r + 2) * d, h)
            q = groups[:, :r * d].reshape(-1, h)
            k = groups[:, r * d:(r + 1) * d].reshape(-1, h)
            v = groups[:, (r + 1) * d:].reshape(-1, h)
            if llama:
                blk.q.weight.copy_(q)
                blk.kv.weight.copy_(torch.cat((k, v)))
            else:
                blk.qkv.weight.copy_(torch.cat((q, k, v)))
            blk.proj.weight.copy_(gpt4d_tensor(torch, seed, tid + 2, h, h, std_proj))
            up = gpt4d_tensor(torch, seed, tid + 4, (2 if llama else 1) * ffn, h, std_w)
            if llama:  # rows 2j gate j, 2j+1 up j; the reference: [gate | up]
                blk.gate_up.weight.copy_(torch.cat((up[0::2], up[1::2])))
            else:
                blk.up.weight.copy_(up)
            blk.down.weight.copy_(gpt4d_tensor(torch, seed, tid + 6, h, ffn, std_proj))
        model.lm_head.weight.copy_(gpt4d_tensor(torch, seed, 5, a.vocab, h, std_w))
        model.wte.weight.copy_(gpt4d_tensor(torch, seed, 1, a.vocab, h, std_w))
        if not llama:
            model.wpe.weight.copy_(gpt4d_tensor(torch, seed, 2, a.seq, h, std_w))
