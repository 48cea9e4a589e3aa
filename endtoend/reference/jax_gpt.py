"""An independent reference for gpt4d's models in JAX, written from the architectures' published
definitions (GPT-2; Llama), not from gpt4d's code or the PyTorch reference:
  GPT:   token + learned position embeddings; per block x += attn(LN1(x)), x += MLP(LN2(x)) with
         LayerNorm (eps 1e-5, biased variance), biases in every linear, causal multi-head
         attention (scale 1/sqrt(d)), MLP 4h with GELU's tanh approximation; final LN; untied LM
         head; mean next-token cross-entropy.
  Llama: token embedding only; RMSNorm (eps 1e-5) gains, no biases; rotary position embedding
         on q and k (feature pairs (2i, 2i+1) rotated by pos * theta^(-2i/d), the RoPE paper's
         form); grouped-query attention (query head j reads K/V head j // (heads/kv_heads));
         SwiGLU MLP down(silu(gate x) * up x).
  AdamW: global-norm clipping, bias-corrected moments, decoupled weight decay on weight matrices
         and embeddings.
Parameters are named and shaped as gpt4d's tensors (gpt4d_init.gpt4d_weights), so that jax.grad
gives gradients in gpt4d's layout; from_gpt4d() is the one place that knows how gpt4d packs a
block's q, k, v heads and SwiGLU's gate and up rows. Runs in float64 when the caller enables
jax_enable_x64, so that the reference carries no fp32 rounding of its own.

  grads = jax.grad(loss)(params, tokens, targets, a)    a: shape options as gpt4d_weights
"""
import jax
import jax.numpy as jnp

EPS = 1e-5  # LayerNorm and RMSNorm
ROPE_THETA = 10000.0


def from_gpt4d(w, a, layer):
    """Block `layer`'s weights under their textbook names, cut out of gpt4d's packed tensors:
    QKV rows are grouped per K/V head as [q of its heads/kv_heads query heads | k | v] (GPT: one
    query head per group); Llama's up rows alternate gate j, up j."""
    p = f"L{layer}."
    kv = a.kv_heads if a.arch == "llama" else a.heads
    d, r = a.hidden // a.heads, a.heads // kv
    groups = w[p + "qkv.w"].reshape(kv, r + 2, d, a.hidden)
    out = {"wq": groups[:, :r].reshape(a.heads * d, a.hidden),
           "wk": groups[:, r].reshape(kv * d, a.hidden),
           "wv": groups[:, r + 1].reshape(kv * d, a.hidden),
           "wo": w[p + "attn_out.w"], "w_down": w[p + "mlp_down.w"],
           "norm1": w[p + "ln1.g"][0], "norm2": w[p + "ln2.g"][0]}
    if a.arch == "llama":
        out["w_gate"], out["w_up"] = w[p + "mlp_up.w"][0::2], w[p + "mlp_up.w"][1::2]
        return out
    b = w[p + "qkv.b"][0].reshape(kv, r + 2, d)
    out.update(w_up=w[p + "mlp_up.w"], bq=b[:, :r].reshape(-1), bk=b[:, r].reshape(-1),
               bv=b[:, r + 1].reshape(-1), bo=w[p + "attn_out.b"][0],
               b_up=w[p + "mlp_up.b"][0], b_down=w[p + "mlp_down.b"][0],
               norm1_b=w[p + "ln1.b"][0], norm2_b=w[p + "ln2.b"][0])
    return out


def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + EPS) * g + b


def rms_norm(x, g):
    return x / jnp.sqrt((x * x).mean(-1, keepdims=True) + EPS) * g


def gelu_tanh(x):
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x ** 3)))


def rotate(x):
    """RoPE on x [batch, seq, heads, d]: pair i at position t turned by t * theta^(-2i/d), as a
    complex multiplication (x_2i + i x_2i+1) e^(i angle)."""
    seq, d = x.shape[1], x.shape[3]
    angle = jnp.arange(seq)[:, None] * ROPE_THETA ** (-jnp.arange(0, d, 2) / d)  # [seq, d/2]
    z = jax.lax.complex(x[..., 0::2], x[..., 1::2]) * jnp.exp(1j * angle)[None, :, None, :]
    return jnp.stack((z.real, z.imag), axis=-1).reshape(x.shape)


def attention(q, k, v):
    """Causal softmax(q k^T / sqrt(d)) v; q [B, S, H, d], k and v [B, S, kv, d] shared by
    H/kv consecutive query heads."""
    rep = q.shape[2] // k.shape[2]
    k, v = jnp.repeat(k, rep, axis=2), jnp.repeat(v, rep, axis=2)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    seq = q.shape[1]
    s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -jnp.inf)
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)


def block(x, p, a):
    llama = a.arch == "llama"
    B, S, _ = x.shape
    d = a.hidden // a.heads
    h = rms_norm(x, p["norm1"]) if llama else layer_norm(x, p["norm1"], p["norm1_b"])
    q, k, v = h @ p["wq"].T, h @ p["wk"].T, h @ p["wv"].T
    if not llama:
        q, k, v = q + p["bq"], k + p["bk"], v + p["bv"]
    q, k, v = (t.reshape(B, S, -1, d) for t in (q, k, v))
    if llama:
        q, k = rotate(q), rotate(k)
    o = attention(q, k, v).reshape(B, S, a.hidden) @ p["wo"].T
    x = x + (o if llama else o + p["bo"])
    if llama:
        h = rms_norm(x, p["norm2"])
        return x + (jax.nn.silu(h @ p["w_gate"].T) * (h @ p["w_up"].T)) @ p["w_down"].T
    h = layer_norm(x, p["norm2"], p["norm2_b"])
    return x + gelu_tanh(h @ p["w_up"].T + p["b_up"]) @ p["w_down"].T + p["b_down"]


def loss(w, tokens, targets, a):
    """Mean cross-entropy of the next tokens; w: gpt4d_weights' dict, tokens/targets [B, S]."""
    x = w["wte"][tokens]
    if a.arch != "llama":
        x = x + w["wpe"][: tokens.shape[1]]
    for layer in range(a.layers):
        x = block(x, from_gpt4d(w, a, layer), a)
    x = rms_norm(x, w["ln_f.g"][0]) if a.arch == "llama" else layer_norm(
        x, w["ln_f.g"][0], w["ln_f.b"][0])
    logp = jax.nn.log_softmax(x @ w["lm_head.w"].T, axis=-1)
    return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()


def decays(name):
    """AdamW's weight decay applies to weight matrices and embeddings, not to gains and biases."""
    return name.endswith(".w") or name in ("wte", "wpe")


def adamw(w, g, m, v, step, lr, wd=0.1, beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0):
    """One AdamW step (step counts from 1) after clipping the global gradient norm to `clip`
    (scale clip / (norm + 1e-6) when the norm exceeds it); returns new weights and moments."""
    norm = jnp.sqrt(sum(jnp.sum(t * t) for t in g.values()))
    scale = jnp.where(norm > clip, clip / (norm + 1e-6), 1.0)
    new_w, new_m, new_v = {}, {}, {}
    for n in w:
        gn = g[n] * scale
        new_m[n] = beta1 * m[n] + (1 - beta1) * gn
        new_v[n] = beta2 * v[n] + (1 - beta2) * gn * gn
        mhat, vhat = new_m[n] / (1 - beta1 ** step), new_v[n] / (1 - beta2 ** step)
        new_w[n] = w[n] - lr * (mhat / (jnp.sqrt(vhat) + eps) + (wd if decays(n) else 0.0) * w[n])
    return new_w, new_m, new_v
