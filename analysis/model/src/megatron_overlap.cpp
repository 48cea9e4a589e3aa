// Megatron-LM's loss, Transformer Engine's tensor-parallel overlap pairs and Megatron-Core's
// per-chunk data-parallel reduction (see megatron_overlap.hpp).
#include "ovb/model/megatron_overlap.hpp"

#include <algorithm>
#include <limits>

#include "ovb/model/gemm_chunks.hpp"

namespace ovb::model {

MemTerm megatron_cross_entropy(const Machine& mc, double logits, double act_bytes) {
  MemTerm t = mem_term(mc, (act_bytes + 36) * logits, MemClass::cross_entropy);
  t.bwd_us = mem_term(mc, (12 + act_bytes) * logits, MemClass::cross_entropy).time_us;
  return t;
}

TpOverlap tp_overlap_pair(const Machine& mc, const GemmTerm& gemm, double comm_us, TpMethod method,
                          int splits, std::string_view dtype) {
  // The GEMM in `splits` chunks of its rows (the tokens), as chunked_gemm prices them: smaller
  // GEMMs and one launch each; split counts that do not divide the rows run the GEMM whole,
  // beside the whole collective (as bulk).
  double g = gemm.time_us;
  if (method != TpMethod::bulk && splits > 1 && gemm.m % splits == 0)
    g = chunked_gemm(mc, gemm.m, gemm.n, gemm.k, dtype, splits, 'm').chunks_us;
  else
    method = TpMethod::bulk;
  const double c = comm_us * (1 + mc.comm_slowdown);
  double pair = std::max(g, c), hidden = std::min(g, c);
  if (method == TpMethod::pipeline) {
    // n steps, each a chunk's GEMM beside the reduce-scatter of the chunk before: the longer of
    // the two n times and the shorter once (the first GEMM chunk, or the last slice).
    pair += std::min(g, c) / splits;
  } else if (method == TpMethod::ring_exchange) {
    // The first chunk is the rank's own (comm_gemm_overlap.h at v1.8, split_overlap_ag: the GEMM
    // on the chunk in hand, then the send and receive of the next, which the next GEMM waits
    // for): tp GEMM chunks of g / n beside tp - 1 exchanges of c / (n - 1), back to back, take
    // n g/n when a chunk's GEMM is the longer, else the exchanges and the last chunk's GEMM.
    pair = std::max(g, c + g / splits);
    hidden = std::min(c, g * (splits - 1) / splits);
  }
  TpOverlap o;
  o.exposed_us = pair - gemm.time_us;
  o.hidden_us = hidden;
  return o;
}

double chunked_reduction_exposed_us(int chunks, double each_us, double window_us, double gap_us) {
  // Times from the end of the backward: chunk j (v-1 first) can start at -(j gap + window).
  double finish = std::numeric_limits<double>::lowest();
  for (int j = chunks - 1; j >= 0; --j)
    finish = std::max(finish, -(j * gap_us + window_us)) + each_us;
  return std::max(0.0, finish);
}

double chunked_gather_exposed_us(int chunks, double each_us, double window_us, double gap_us) {
  // Chunk j's first forward starts at j gap (+ the delay so far) and may overlap its gather for
  // `window`; chunks 0 and 1 are issued at the start, chunk j >= 2 when chunk j-1's forward
  // starts. The gathers run one after another; each delay pushes the rest of the compute.
  double finish = 0, delay = 0;
  for (int j = 0; j < chunks; ++j) {
    const double issued = j < 2 ? 0 : (j - 1) * gap_us + delay;
    finish = std::max(finish, issued) + each_us;
    delay += std::max(0.0, finish - (j * gap_us + delay + window_us));
  }
  return delay;
}

}  // namespace ovb::model
