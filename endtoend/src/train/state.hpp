// Every buffer of a gpt4d rank, allocated once before training through TrackedMemory (nothing is
// allocated on the hot path). The categories and sizes are those of ovb::gpt_memory():
//   params      fp32 master weights + a working copy in the activation dtype (flat, layout.hpp;
//               in fp32 there is no separate copy: the master is the working copy, all of it)
//   grads       fp32 gradients, flat (with sharded gradients: the rank's chunks, at shard offsets;
//               the bucket buffers are GradBuckets')
//   optimizer   AdamW m and v, fp32
// The separate master and the moments are indexed by the layout's shard offsets: the rank's
// chunks only with the sharded optimizer, else the flat offsets.
//   gathered    Z-gathered weight blocks (owned by WeightGatherer)
//   grad_blocks fp32 dW blocks awaiting their Z reduce-scatter (owned by DwWindow)
//   activations residual stream res[0..L] [T, h/Gx] and the saved tensors of each block (of one
//               block with --recompute); T = tokens of one micro-step
//   workspace   final LN, logits (their gradient in place), cross-entropy statistics, gradient
//               buffers, LN/attention scratch, the tokens and targets of every micro-step, the
//               two global scalars, with micro-steps a bias-gradient scratch, GEMM workspace (CUDA)
#pragma once

#include <cstdint>
#include <vector>

#include "model/layout.hpp"
#include "ovb/tracked_memory.hpp"

namespace ovb::gpt {

// The tensors a block saves for its backward. [T, n] in the activation dtype unless noted.
struct ActSet {
  void* ln1 = nullptr;   // LN1 output [T, h/Gx]
  void* xmid = nullptr;  // residual after attention, LN2 input [T, h/Gx]
  void* ln2 = nullptr;   // LN2 output [T, h/Gx]
  void* qkv = nullptr;   // [T, 3h/Gy] (Llama: [T, (heads + 2 kv) d / Gy], after RoPE)
  void* att = nullptr;   // attention output [T, h/Gy]
  void* pre = nullptr;   // MLP-up output before GELU [T, 4h/Gy] (Llama: gate|up [T, 2 ffn/Gy])
  void* gelu = nullptr;  // [T, 4h/Gy] (Llama: the SwiGLU output [T, ffn/Gy])
  float* mr1 = nullptr;  // LN1 (mean, rstd) [T, 2] (RMSNorm: mean 0)
  float* mr2 = nullptr;  // LN2 (mean, rstd) [T, 2]
  float* lse = nullptr;  // attention log-sum-exp [B_local, heads/Gy, seq]
};

class ModelState {
 public:
  ModelState(const GptShape& m, const GptPlanOptions& o, const ParamLayout& layout,
             TrackedMemory& mem);

  // fp32 master: flat offsets when !separate_work(), else shard offsets (Bucket::shard_offset).
  // Gradients: flat offsets, or shard offsets with sharded gradients.
  float* params() const { return params_.as<float>(); }
  float* grads() const { return grads_.as<float>(); }
  float* adam_m() const { return m_.as<float>(); }  // moments: shard offsets
  float* adam_v() const { return v_.as<float>(); }
  void* work() const { return work_.data() ? work_.data() : params_.data(); }
  bool separate_work() const { return work_.data() != nullptr; }

  void* res(int l) const { return res_[static_cast<std::size_t>(l)].data(); }
  const ActSet& set(int block) const {
    return sets_[recompute_ ? 0 : static_cast<std::size_t>(block)];
  }

  Buffer& params_buffer() { return params_; }
  Buffer& grads_buffer() { return grads_; }

  // Workspace.
  void *lnf_out, *logits, *dres, *dtmp, *gbig1, *gbig2;
  float *lnf_mr, *ce_local, *ce_all, *ce_lse, *ln_scratch, *att_scratch, *scalars;
  // A layer's bias gradient before it is added to the accumulated one (micro-steps after the
  // first; null unless accumulates_full_gradients(), or without biases): max_bias_local() floats.
  float* bias_acc = nullptr;
  std::int32_t *tokens, *targets;               // [micro-steps * T]: micro-step k's at k * T
  Buffer tokens_buf, targets_buf, scalars_buf;  // filled from the host every iteration / read back

 private:
  void* act(std::int64_t elems, MemKind kind);
  float* f32(std::int64_t elems, MemKind kind);

  TrackedMemory& mem_;
  std::size_t a_;
  bool recompute_;
  int layers_;
  std::vector<Buffer> owned_;
  Buffer params_, grads_, m_, v_, work_;
  std::vector<Buffer> res_;
  std::vector<ActSet> sets_;
};

}  // namespace ovb::gpt
