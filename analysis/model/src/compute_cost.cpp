// Compute term of the model: GEMMs per local shape, attention, memory-bound kernels, optimizer
// (see compute_cost.hpp; byte counts documented in docs/model-costs.md, "Compute").
#include "ovb/model/compute_cost.hpp"

#include <algorithm>

#include "ovb/metrics.hpp"

namespace ovb::model {

GemmTerm gemm_term(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::string_view dtype) {
  GemmTerm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.flop =
      metrics::gemm_flop(static_cast<double>(m), static_cast<double>(n), static_cast<double>(k));
  const GemmRate r = gemm_rate(mc, m, n, k, dtype);
  g.tflops = r.tflops;
  g.source = r.source;
  // TFLOP/s = 1e6 FLOP/us; ranks sharing the device share its throughput.
  g.time_us = g.flop / (r.tflops * 1e6) * mc.ranks_per_device + mc.kernel_overhead_us;
  return g;
}

MemTerm mem_term(const Machine& mc, double fwd_bytes, MemClass c) {
  const double bytes_per_us = mc.memory_bandwidth_gbps * mc.memory_efficiency_for(c) * 1e3;
  MemTerm t;
  t.bytes = fwd_bytes;
  t.time_us = fwd_bytes / bytes_per_us * mc.ranks_per_device + mc.kernel_overhead_us;
  t.bwd_us = 2 * fwd_bytes / bytes_per_us * mc.ranks_per_device + 2 * mc.kernel_overhead_us;
  return t;
}

double gelu_backward_us(const Machine& mc, double out_bytes) {
  return mem_term(mc, 3 * out_bytes, MemClass::bias_gelu).time_us +
         mem_term(mc, out_bytes, MemClass::residual).time_us;
}

namespace {

LinearCompute linear_compute(const Machine& mc, const LinearGeom& L, const GptPlanOptions& o,
                             std::int64_t T, std::string_view dt, double epilogue_bytes,
                             MemClass epilogue_class) {
  LinearCompute c;
  c.id = L.spec.id;
  c.fwd = gemm_term(mc, T, L.out_local, L.in_local, dt);
  c.dx = gemm_term(mc, T, L.in_local, L.out_local, dt);
  c.dw = gemm_term(mc, L.out_local, L.in_local, T, dt);
  c.epilogue = epilogue_bytes > 0 ? mem_term(mc, epilogue_bytes, epilogue_class) : MemTerm{};
  if (accumulates_full_gradients(o)) {
    // gpt4d adds the shard into the dW block before the Z reduce-scatter (Gz > 1), else the dW
    // block into the gradient; the bias gradient likewise (fp32: read two, write one).
    const double dw = static_cast<double>(o.grid.gz > 1 ? L.shard : L.block);
    c.accumulate = mem_term(mc, 12 * dw, MemClass::grad_accum);
    if (L.bias_local > 0)
      c.accumulate.time_us += mem_term(mc, 12.0 * L.bias_local, MemClass::grad_accum).time_us;
  }
  return c;
}

}  // namespace

ComputeTerms compute_terms(const GptShape& m, const GptPlanOptions& o, const Machine& mc,
                           bool fused_epilogues) {
  ComputeTerms ct;
  const GridShape& g = o.grid;
  const std::int64_t T = tokens_per_rank(m, o);
  ct.tokens = T;
  ct.micro_steps = micro_steps(o);
  const std::string_view dt = name_of(o.act_dtype);
  const double a = static_cast<double>(size_of(o.act_dtype));
  const double Td = static_cast<double>(T);
  const double hx = static_cast<double>(m.hidden) / g.gx;
  const double hy = static_cast<double>(m.hidden) / g.gy;

  // Block: epilogues are bias (read + write of the output), plus GELU (one more write: both the
  // pre-activation and the activation are kept) or the residual add (two reads, one write).
  // Llama has no biases: its QKV epilogue is RoPE (read and write q and the local K heads), its
  // MLP-up one the SwiGLU (read gate|up, write half as much); the residual adds as for GPT.
  // Fused (gpt4d's CUDA linears, linear.cpp): the bias is added in the GEMM's epilogue, and so
  // is the GELU where no all-reduce follows the GEMM (its group over the input dimension has
  // size 1), writing the pre-activation beside the activation; elsewhere the GELU is one pass
  // after the all-reduce (read, write). Backward: the bias gradient is one read of dY, and the
  // GELU's backward joins MLP-down's dX GEMM, reading the pre-activation, where that dX needs no
  // all-reduce, else it is its own pass. Residual adds as unfused. Llama has neither bias nor GELU.
  const std::vector<LinearSpec> specs = block_linears(m);
  BlockCompute& b = ct.block;
  const bool fused = fused_epilogues && !m.llama();
  const double kv_local = static_cast<double>(m.kv() * m.head_dim()) / g.gy;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const LinearGeom L = linear_geom(specs[i], g);
    const double out = Td * static_cast<double>(L.out_local) * a;
    const bool up = L.spec.id == LinearId::mlp_up;
    if (fused) {
      const double residual = L.spec.transposed ? 3 * Td * hx * a : 0;
      const bool gelu_in_gemm = up && g.size(L.in_dim) == 1;
      const double fwd = residual + (up ? (gelu_in_gemm ? 1 : 2) * out : 0);
      LinearCompute c = linear_compute(mc, L, o, T, dt, fwd, up ? MemClass::bias_gelu
                                                                : MemClass::residual);
      // Backward: the bias gradient (one read of dY), the residual's (twice its forward bytes,
      // as mem_term), and for MLP-up the GELU's: a read of the pre-activation in MLP-down's dX
      // GEMM, or its own pass (gelu_backward_us, the bias gradient included).
      double bwd = mem_term(mc, out, MemClass::residual).time_us;
      const auto down = std::find_if(specs.begin(), specs.end(), [](const LinearSpec& x) {
        return x.id == LinearId::mlp_down;
      });
      if (up && g.size(linear_geom(*down, g).out_dim) > 1)
        bwd = gelu_backward_us(mc, out);
      else if (up)
        bwd += mem_term(mc, out, MemClass::bias_gelu).time_us;
      if (residual > 0) bwd += mem_term(mc, residual, MemClass::residual).bwd_us;
      c.epilogue.bwd_us = bwd;
      b.lin[i] = c;
      continue;
    }
    double epi = 2 * out;                              // bias
    if (up) epi = 3 * out;                             // bias + GELU
    if (m.llama()) {
      epi = 0;
      if (L.spec.id == LinearId::qkv) epi = 2 * Td * (hy + kv_local) * a;  // RoPE on q and k
      if (L.spec.id == LinearId::mlp_up) epi = 1.5 * out;                  // SwiGLU
    }
    if (L.spec.transposed) epi += 3 * Td * hx * a;     // + residual
    // Kernel class: the activations compute a transcendental per element (GELU a tanh, SwiGLU's
    // SiLU an exponential), RoPE an angle, its cosine and sine per pair: each its own class; bias
    // and residual adds are plain element-wise streams.
    MemClass cls = MemClass::residual;
    if (L.spec.id == LinearId::mlp_up) cls = m.llama() ? MemClass::swiglu : MemClass::bias_gelu;
    const bool rope = m.llama() && L.spec.id == LinearId::qkv;
    if (rope) cls = MemClass::rope;
    b.lin[i] = linear_compute(mc, L, o, T, dt, epi, cls);
    // RoPE's backward turns dq and dk back: the forward's one pass, not twice its bytes.
    if (rope) b.lin[i].epilogue.bwd_us = b.lin[i].epilogue.time_us;
    if (L.spec.id == LinearId::mlp_up && !m.llama())
      b.lin[i].epilogue.bwd_us = gelu_backward_us(mc, out);
  }
  const MemClass norm = m.llama() ? MemClass::rmsnorm : MemClass::layernorm;
  b.ln1 = mem_term(mc, 2 * Td * hx * a, norm);
  b.ln2 = b.ln1;
  const double nseq = static_cast<double>(micro_batch(o));  // sequences per micro-step
  const double heads_local = static_cast<double>(m.heads) / g.gy;
  // Read q, k, v (GQA: fewer K/V), write o; without flash attention the s x s scores are written,
  // put through the softmax and read again (4 a bytes each), at the softmax class's rate.
  b.attn_io = mem_term(mc, 2 * Td * hy * a + 2 * Td * kv_local * a, MemClass::copy);
  if (!mc.flash_attention) {
    const MemTerm scores =
        mem_term(mc, 4 * nseq * heads_local * double(m.seq) * m.seq * a, MemClass::softmax);
    b.attn_io.bytes += scores.bytes;
    b.attn_io.time_us += scores.time_us - mc.kernel_overhead_us;
    b.attn_io.bwd_us += scores.bwd_us - 2 * mc.kernel_overhead_us;
  }
  // Causal attention: half of QK^T [s, s, d] and of AV [s, d, s] per local head and sequence.
  // One fused kernel runs them for every head and sequence at once, so its throughput is that of
  // the batched GEMM (m = sequences * local heads * s).
  const std::int64_t rows = static_cast<std::int64_t>(nseq * heads_local) * m.seq;
  const GemmRate qk = gemm_rate(mc, rows, m.seq, m.head_dim(), dt);
  const GemmRate av = gemm_rate(mc, rows, m.head_dim(), m.seq, dt);
  const double half = 0.5 * metrics::gemm_flop(double(rows), double(m.seq), double(m.head_dim()));
  b.attn_flop = 2 * half;
  const double attn_us = (half / (qk.tflops * 1e6) + half / (av.tflops * 1e6)) /
                         mc.attention_products_efficiency() * mc.ranks_per_device;
  b.attn_fwd_us = attn_us + mc.kernel_overhead_us;
  // Backward: dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q, four products of the forward's
  // shapes; fused (flash) attention keeps no P and recomputes S = Q K^T first, a fifth
  // (Dao 2023, FlashAttention-2, arXiv 2307.08691, Algorithm 2): 2.5 x the forward's two.
  b.attn_bwd_us = (mc.flash_attention ? 2.5 : 2) * attn_us + mc.kernel_overhead_us;
  b.fwd_us = b.ln1.time_us + b.ln2.time_us + b.attn_io.time_us + b.attn_fwd_us;
  b.bwd_us = b.ln1.bwd_us + b.ln2.bwd_us + b.attn_io.bwd_us + b.attn_bwd_us;
  for (const LinearCompute& c : b.lin) {
    b.fwd_us += c.fwd.time_us + c.epilogue.time_us;
    b.bwd_us += c.dx.time_us + c.dw.time_us + c.epilogue.bwd_us;
    b.accumulate_us += c.accumulate.time_us;
  }

  // Head: token and position embedding (two reads, one write; Llama's token embedding alone one
  // read, one write), final LN, LM head (no bias), and
  // the cross-entropy's local statistics (one read of the logits; backward writes dlogits).
  HeadCompute& h = ct.head;
  h.lm_head = linear_compute(mc, linear_geom(lm_head_linear(m), g), o, T, dt, 0, MemClass::copy);
  h.accumulate_us = h.lm_head.accumulate.time_us;
  if (gradients_sharded(o) && micro_steps(o) > 1) {
    // Sharded gradients accumulate after the data reduce-scatter: each bucket's chunk is added
    // into the rank's shard (fp32: read two, write one), nothing per linear layer.
    b.accumulate_us =
        mem_term(mc, 12.0 * data_chunk(block_bucket_count(m, g), o), MemClass::grad_accum).time_us;
    h.accumulate_us =
        mem_term(mc, 12.0 * data_chunk(head_bucket_count(m, g), o), MemClass::grad_accum).time_us;
  }
  // Llama: no position embedding.
  h.embed = mem_term(mc, (m.llama() ? 2 : 3) * Td * hx * a, MemClass::copy);
  h.ln_f = mem_term(mc, 2 * Td * hx * a, norm);
  h.ce = mem_term(mc, Td * (static_cast<double>(m.vocab) / g.gy) * a, MemClass::cross_entropy);
  h.fwd_us = h.embed.time_us + h.ln_f.time_us + h.ce.time_us + h.lm_head.fwd.time_us;
  h.bwd_us =
      h.embed.bwd_us + h.ln_f.bwd_us + h.ce.bwd_us + h.lm_head.dx.time_us + h.lm_head.dw.time_us;

  // AdamW per parameter element: read master, grad, m, v (16 B), write master, m, v (12 B), the
  // gradient norm reads the grad again (4 B), and the working copy is written when not fp32.
  OptimizerCompute& opt = ct.optimizer;
  opt.params = gpt_memory(m, o).optimizer / 8;  // m and v: 8 bytes per parameter element
  opt.bytes = opt.params * (32 + (o.act_dtype == DType::f32 ? 0 : a));
  opt.time_us = mem_term(mc, opt.bytes, MemClass::adamw).time_us;
  return ct;
}

double ComputeTerms::total_us(std::int64_t layers, bool recompute) const {
  const double L = static_cast<double>(layers);
  const double steps = static_cast<double>(micro_steps);
  return steps *
             (L * (block.fwd_us * (recompute ? 2 : 1) + block.bwd_us) + head.fwd_us + head.bwd_us) +
         (steps - 1) * (L * block.accumulate_us + head.accumulate_us) + optimizer.time_us;
}

}  // namespace ovb::model
