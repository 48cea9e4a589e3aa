// The pieces of a Megatron-LM iteration whose cost follows its code rather than the 4D plan's:
// the unfused vocab-parallel loss, Transformer Engine's tensor-parallel collective+GEMM pairs and
// Megatron-Core's per-chunk data-parallel reduction with interleaving (used by predict_megatron;
// formulas in docs/model-megatron.md).
#pragma once

#include <string_view>

#include "ovb/model/compute_cost.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

// Megatron-LM's vocab-parallel cross-entropy (unfused, every release: megatron/mpu/cross_entropy.py
// of 2021, megatron/core/tensor_parallel/cross_entropy.py since): the 16-bit logits are cast to
// fp32 and put through max, an in-place subtract, exp, sum and divide; backward multiplies the
// kept softmax by the incoming gradient in place and casts it back. Bytes per logit element of a
// 16-bit (a-byte) activation: forward a + 36, backward 12 + a; time_us forward, bwd_us backward.
MemTerm megatron_cross_entropy(const Machine& mc, double logits, double act_bytes);

// The data-parallel reduction of a configuration in `chunks` model chunks, each `each_us` long,
// one after another on one stream (Megatron-Core's per-chunk synchronisation with interleaving).
// Reduce-scatter: chunk j's may start `window_us` before the end of its last backward, which lies
// j gap_us before the end of the stage's backward (chunk 0 last); returns how far the last one
// ends after that. All-gather: chunk j's first forward starts j gap_us (+ earlier delays) after
// the iteration's start and may overlap its gather for `window_us`; chunks 0 and 1 are issued at
// the start, chunk j >= 2 when chunk j-1's forward starts; returns the delay to the compute. With
// one chunk (gap 0) both are max(0, each - window).
double chunked_reduction_exposed_us(int chunks, double each_us, double window_us, double gap_us);
double chunked_gather_exposed_us(int chunks, double each_us, double window_us, double gap_us);

// One tensor-parallel collective under --tp-comm-overlap and the GEMM it runs with (Transformer
// Engine's userbuffers methods: ring_exchange cuts the GEMM's rows into `splits` = tp chunks, the
// first the rank's own, each computing while the next slice of the all-gather arrives; pipeline
// cuts the GEMM into `splits` chunks whose output slices are reduce-scattered while the next
// computes; bulk runs the collective beside the whole GEMM). exposed_us: time the pair takes
// beyond the GEMM alone; hidden_us: the collective time spent under the GEMM (which the
// machine's compute_slowdown stretches).
enum class TpMethod { ring_exchange, pipeline, bulk };
struct TpOverlap {
  double exposed_us = 0, hidden_us = 0;
};
TpOverlap tp_overlap_pair(const Machine& mc, const GemmTerm& gemm, double comm_us, TpMethod method,
                          int splits, std::string_view dtype);

}  // namespace ovb::model
