// Where every parameter of the GPT lives on this rank: one flat buffer (fp32 master weights, and
// with the same offsets the gradients, AdamW moments and the working copy in the activation
// dtype), cut into data-parallel buckets - one per block, one "head" bucket - exactly as
// gpt_collectives() lists them:
//   block l: [qkv shard | attn_out shard | mlp_up shard | mlp_down shard | ln1.g ln1.b ln2.g ln2.b
//             qkv.b attn_out.b mlp_up.b mlp_down.b]      (the tail is block_small_params())
//   head:    [lm_head shard | ln_f.g ln_f.b | wte [V, h/Gx] | wpe [seq, h/Gx]]
// Llama has no biases and no wpe (their indices are -1): block tail [ln1.g ln2.g], head
// [lm_head shard | ln_f.g | wte].
// With the sharded optimizer (ovb::optimizer_sharded()) each bucket is followed by zeros up to
// Gdata equal chunks (ovb::bucket_extent()); data rank d reduces and updates chunk d, and the fp32
// master (when separate from the working copy) and the AdamW moments hold only the rank's chunks,
// back to back ("shard" offsets). Without it the rank owns every bucket whole and the shard
// offsets are the flat ones.
// Every tensor knows which piece of the global tensor it holds, so weights are initialised by
// global index (the same model on every grid) and shards can be gathered for comparisons.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ovb/gpt_plan.hpp"

namespace ovb::gpt {

enum class Init { normal, ones, zeros };

struct TensorDesc {
  std::string name;         // "L3.qkv.w", "L3.ln1.g", "lm_head.w", "wte", ...
  std::uint64_t id = 0;     // tensor id of the counter-based initialiser
  std::int64_t offset = 0;  // first element in the flat buffers
  std::int64_t count = 0;   // elements on this rank
  // The global tensor is [rows, cols]; this rank holds the block [block_rows, block_cols] at
  // (row0, col0), flattened row-major, and of that the elements [flat0, flat0 + count).
  std::int64_t rows = 1, cols = 1, row0 = 0, col0 = 0, block_rows = 1, block_cols = 1, flat0 = 0;
  Init init = Init::zeros;
  float stddev = 0;
  bool decay = false;  // AdamW weight decay applies
  bool owner = false;  // this rank's copy is the one counted in the gradient norm (see layout.cpp)
  // The same among the ranks of one data index (the X, Y, Z replicas): with the sharded optimizer
  // each data rank counts the elements of its own chunk that this holds for.
  bool owner_in_data_rank = false;
  std::int64_t global_index(std::int64_t e) const {  // global row-major index of local element e
    const std::int64_t f = flat0 + e;
    return (row0 + f / block_cols) * cols + col0 + f % block_cols;
  }
};

struct Bucket {
  int layer = -1;           // block index, -1 for the head bucket
  std::int64_t offset = 0;  // in the flat buffers
  std::int64_t count = 0;   // whole bucket (the data all-reduce's count)
  std::int64_t small_offset = 0,
               small_count = 0;  // the Z all-reduced part (LN, biases, embeddings)
  // The rank's chunk: [own_offset, own_offset + own_count) in the flat buffers (the whole bucket
  // unless sharded; then data_chunk() elements at offset + d * own_count, padding included), at
  // shard_offset in the master and moment buffers.
  std::int64_t own_offset = 0, own_count = 0, shard_offset = 0;
  std::int64_t extent = 0;  // count, padded to Gdata * own_count when sharded
};

// Offsets of one linear layer's tensors and its geometry.
struct LinearParams {
  LinearGeom geom;
  int layer = -1;
  int weight = -1, bias = -1;  // indices into ParamLayout::tensors (-1: none)
};

struct BlockParams {
  LinearParams qkv, attn_out, mlp_up, mlp_down;
  int ln1_g = -1, ln1_b = -1, ln2_g = -1, ln2_b = -1;
  const LinearParams& linear(int i) const;  // 0..3 in forward order
};

struct HeadParams {
  LinearParams lm_head;
  int lnf_g = -1, lnf_b = -1, wte = -1, wpe = -1;
};

struct ParamLayout {
  std::vector<TensorDesc> tensors;
  std::vector<BlockParams> blocks;
  HeadParams head;
  std::vector<Bucket> buckets;  // blocks in order, then the head bucket
  std::int64_t total = 0;       // elements of the flat buffers (padding included)
  std::int64_t shard_total = 0;  // elements of the rank's chunks (the moments; = total unsharded)
  const TensorDesc& operator[](int i) const { return tensors[static_cast<std::size_t>(i)]; }
};

// The part of tensor t inside [lo, hi) of the flat buffers, as a tensor of its own (same global
// indices; count 0 when they do not meet) placed as if flat element lo went to `offset`: how a
// rank initialises and updates the chunk it owns in the shard buffers.
TensorDesc slice(const TensorDesc& t, std::int64_t lo, std::int64_t hi, std::int64_t offset);

// The layout of rank `coords` on grid o.grid. std of the weight initialiser: 0.02, divided by
// sqrt(2L) for the residual projections (attn_out, mlp_down), as GPT-2.
ParamLayout make_layout(const GptShape& m, const GptPlanOptions& o, const Coords& coords);

}  // namespace ovb::gpt
