// Activation bytes of one layer and micro-batch under Megatron-LM (see megatron_activations.hpp).
#include "ovb/model/megatron_activations.hpp"

namespace ovb::model {

LayerActivationShape layer_activation_shape(const GptShape& m, const MegatronConfig& c,
                                            bool flash_attention) {
  LayerActivationShape x;
  x.s = static_cast<double>(m.seq);
  x.b = c.micro_batch;
  x.h = static_cast<double>(m.hidden);
  x.ffn = static_cast<double>(m.ffn());
  x.heads = static_cast<double>(m.heads);
  x.kv_heads = static_cast<double>(m.kv());
  x.t = c.tp;
  x.sequence_parallel = c.sequence_parallel;
  x.flash_attention = flash_attention;
  return x;
}

double gpt_layer_activation_bytes(const LayerActivationShape& x, Recompute r) {
  // Korthikanti et al. 2022, Table 2 (a = heads):
  //   no recompute:  sbh (34 + 5as/h) / t with SP; sbh (10 + 24/t + 5as/(ht)) without
  //   selective:     34 sbh / t with SP;       sbh (10 + 24/t) without
  //   full:          2 sbh / t with SP (the layer's input only); 2 sbh without
  // The 5as/h term is the unfused attention's s x s tensors per head: softmax output (2 bytes),
  // dropout mask (1) and dropout output (2). Fused (flash) attention keeps none of them: its
  // inputs Q, K, V and output O are already among the 34 sbh (Q, K 4, V 2, the out-projection's
  // input 2), and it adds its fp32 log-sum-exp, 4 bytes per head and token (Dao et al. 2022,
  // arXiv 2205.14135, Section 3.1: the backward recomputes the scores from Q, K and it).
  const double sbh = x.s * x.b * x.h, a = x.heads, s = x.s, h = x.h, t = x.t;
  const bool sp = x.sequence_parallel;
  const double scores = x.flash_attention ? 4 * a * x.s * x.b / t : sbh * 5 * a * s / (h * t);
  switch (r) {
    case Recompute::none: return (sp ? 34 * sbh / t : sbh * (10 + 24 / t)) + scores;
    case Recompute::selective: return sp ? 34 * sbh / t : sbh * (10 + 24 / t);
    case Recompute::full: return sp ? 2 * sbh / t : 2 * sbh;
  }
  return 0;
}

double llama_layer_activation_bytes(const LayerActivationShape& x, Recompute r) {
  // Bytes per token (one of s*b) of every tensor a Llama layer keeps for its backward, in
  // Megatron-Core with Transformer Engine: bf16 (e = 2) activations, fp32 statistics.
  // Replicated over the tensor-parallel group unless sequence parallelism shards them by t:
  //   RMSNorm before attention (fused with the QKV GEMM): its input x, e h, and 1/rms, 4;
  //   the QKV GEMM's input, the norm's output, e h (kept sequence-sharded under SP and gathered
  //     again for the weight gradient);
  //   the same three for the norm fused with the MLP's gate|up GEMM: e h + 4 + e h.
  // Sharded by t (local heads, local ffn columns), the same with or without SP:
  //   Q after RoPE, e h, and K after RoPE, e kv d (d = h/heads): RoPE keeps only its cos/sin
  //     (s x d, not per token and hidden), so the pre-RoPE Q, K are not kept;
  //   V, e kv d: the fused attention (Transformer Engine's cuDNN backend, its choice on Hopper)
  //     copies Q, K, V to a layout it accepts and keeps the copies; V is otherwise a strided
  //     view of the QKV GEMM's output (see selective below);
  //   the attention output O, e h: kept by the fused attention and as the out-projection's input,
  //     one storage (no s x s scores: fused attention recomputes them in its backward);
  //   the softmax log-sum-exp, fp32 per local head: 4 heads;
  //   the gate|up GEMM's output, kept by the fused SwiGLU for its backward: e 2 ffn;
  //   the SwiGLU's output, the down projection's input: e ffn.
  // No dropout (rate 0 in Llama training: no masks) and no biases (nothing saved for them).
  const double e = 2, h = x.h, d_kv = x.h / x.heads * x.kv_heads, t = x.t;
  const double tokens = x.s * x.b;
  const double norms = 2 * (e * h + 4 + e * h);  // two norms: input, 1/rms, output
  const double attention = e * h + 2 * e * d_kv + e * h + 4 * x.heads;  // Q, K, V, O, lse
  const double mlp = e * 2 * x.ffn + e * x.ffn;
  const double replicated = x.sequence_parallel ? norms / t : norms;
  switch (r) {
    case Recompute::none: return tokens * (replicated + (attention + mlp) / t);
    case Recompute::selective: {
      // Megatron-Core's default selective recomputation checkpoints the core attention: its
      // inputs Q, K, V are kept by the checkpoint, its log-sum-exp is dropped, and its output
      // is kept by the out-projection. The checkpoint keeps V as passed, a view of the QKV GEMM's
      // output [tokens, (heads + 2 kv) d / t], which keeps that whole storage: e (h + 2 kv d) in
      // place of V's own copy.
      const double kept = e * h + e * d_kv + e * (h + 2 * d_kv) + e * h;  // Q, K, QKV output, O
      return tokens * (replicated + (kept + mlp) / t);
    }
    case Recompute::full: {
      // Every layer checkpointed (--recompute-method uniform, 1 layer): only its input is kept.
      const double input = e * h;
      return tokens * (x.sequence_parallel ? input / t : input);
    }
  }
  return 0;
}

double megatron_layer_activation_bytes(const GptShape& m, const MegatronConfig& c,
                                       bool flash_attention) {
  const LayerActivationShape x = layer_activation_shape(m, c, flash_attention);
  return m.llama() ? llama_layer_activation_bytes(x, c.recompute)
                   : gpt_layer_activation_bytes(x, c.recompute);
}

}  // namespace ovb::model
