// Compute term of the model, per rank, from the plan's layer geometry (linear_geom +
// tokens_per_rank) and the machine:
//  - GEMMs: for each layer, forward Y = X W^T (m=T, n=out_local, k=in_local), dX = dY W
//    (m=T, n=in_local, k=out_local), dW = dY^T X (m=out_local, n=in_local, k=T);
//    time = 2mnk / throughput(m, n, k) * ranks_per_device + kernel_overhead, the throughput from
//    the machine's GEMM table (exact shape, else interpolated), else peak * gemm_efficiency;
//  - attention: causal QK^T and AV per local head and sequence (half of each), at the throughput
//    of the batched GEMMs (m = sequences * local heads * s) times attention_efficiency; backward
//    twice the forward;
//  - memory-bound kernels (layer norm, bias, GELU, residual, attention I/O, embedding, softmax
//    cross-entropy, AdamW): bytes / (memory bandwidth * memory_efficiency); backward moves twice
//    the forward bytes, except GPT's GELU epilogue (gelu_backward_us);
//  - optimizer: every parameter shard read and written by AdamW (fp32 master, grad, m, v);
//  - micro-steps: T is one micro-step's tokens; every term but the optimizer runs once per
//    micro-step, and each micro-step after the first adds every linear layer's new weight and
//    bias gradient to the accumulated one in fp32 (the shard with Gz > 1, else the block: read
//    two, write one).
// Formulas for the byte counts: docs/model-costs.md, "Compute".
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

enum class GemmSource { table_exact, table_interpolated, peak_efficiency, quantized, ceiling };
// "table", "interpolated", "peak x efficiency", "peak x efficiency x waves", "ceiling" (any of
// them capped at peak x gemm_max_efficiency)
std::string_view name_of(GemmSource s);

// The fraction of the device a GEMM's output C[m, n] keeps busy, for the best of the machine's
// tiles: (tiles / SMs) / ceil(tiles / SMs) (the last wave's idle SMs) times m n / (the tiled
// area) (the edge tiles' padding); 1 without SMs or tiles in the machine file.
double wave_efficiency(const Machine& mc, std::int64_t m, std::int64_t n);

// Throughput of one device for a GEMM shape (see the header comment), TFLOP/s.
struct GemmRate {
  double tflops;
  GemmSource source;
};
GemmRate gemm_rate(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::string_view dtype);

struct GemmTerm {
  std::int64_t m = 0, n = 0, k = 0;
  double flop = 0, tflops = 0, time_us = 0;
  GemmSource source = GemmSource::peak_efficiency;
};
GemmTerm gemm_term(const Machine& mc, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::string_view dtype);

// A memory-bound piece of work (forward bytes; its backward moves twice as much) of one kernel
// class, timed at the machine's efficiency for that class (Machine::memory_efficiency_for: the
// calibrated gpu.memory_efficiency_by_class, else memory_efficiency).
struct MemTerm {
  double bytes = 0;
  double time_us = 0;  // forward
  double bwd_us = 0;   // backward
};
MemTerm mem_term(const Machine& mc, double fwd_bytes, MemClass c);

// Backward of GPT's MLP-up epilogue (bias + GELU) whose output is `out_bytes` (T out_local a):
// GELU's gradient reads the kept pre-activation and dY and writes dX (3 out_bytes, one tanh per
// element as in the forward) at the bias_gelu rate, and the bias gradient reads dY once more
// (out_bytes) at the residual (plain stream) rate. Not mem_term's 2 x the forward: at a rate
// measured per byte of the forward (which is set by the tanh on a CPU) that would count each
// element's tanh twice.
double gelu_backward_us(const Machine& mc, double out_bytes);

struct LinearCompute {
  LinearId id = LinearId::qkv;
  GemmTerm fwd, dx, dw;
  MemTerm epilogue;    // what follows the layer's GEMM (bias, GELU, residual)
  MemTerm accumulate;  // fp32 gradient accumulation, micro-steps after the first (time_us)
};

struct BlockCompute {
  std::array<LinearCompute, 4> lin;  // qkv, attn_out, mlp_up, mlp_down
  MemTerm ln1, ln2, attn_io;         // layer norms; attention reads q, k, v and writes o
  double attn_flop = 0;              // forward attention FLOP (causal half counted)
  double attn_fwd_us = 0, attn_bwd_us = 0;
  double fwd_us = 0, bwd_us = 0;  // everything above, forward and backward
  double accumulate_us = 0;       // the four layers' gradient accumulation (later micro-steps)
};

struct HeadCompute {
  LinearCompute lm_head;
  MemTerm embed, ln_f, ce;  // embeddings (+position), final LN, vocab-parallel cross-entropy
  double fwd_us = 0, bwd_us = 0;
  double accumulate_us = 0;  // the LM head's gradient accumulation (later micro-steps)
};

struct OptimizerCompute {
  double params = 0;  // parameter elements on this rank
  double bytes = 0;   // AdamW + gradient norm traffic
  double time_us = 0;
};

struct ComputeTerms {
  std::int64_t tokens = 0;       // T, per micro-step
  std::int64_t micro_steps = 1;  // per iteration
  BlockCompute block;
  HeadCompute head;
  OptimizerCompute optimizer;
  // micro_steps x (blocks' and head's forward and backward) + (micro_steps - 1) x accumulation
  // + optimizer.
  double total_us(std::int64_t layers, bool recompute) const;
};

// The linears' epilogues as the trainer runs them: `fused_epilogues` costs gpt4d's CUDA kernels
// (bias, GELU and GELU's backward inside the GEMMs, docs/model-costs.md "Compute"), else separate
// passes over each GEMM's output (gpt4d on the host, Megatron-LM, AxoNN). The three-argument form
// takes the machine's (gpu.fused_epilogues).
ComputeTerms compute_terms(const GptShape& m, const GptPlanOptions& o, const Machine& mc,
                           bool fused_epilogues);
inline ComputeTerms compute_terms(const GptShape& m, const GptPlanOptions& o, const Machine& mc) {
  return compute_terms(m, o, mc, mc.fused_epilogues);
}

}  // namespace ovb::model
