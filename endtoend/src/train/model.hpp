// The GPT (or Llama: RMSNorm, RoPE, grouped-query attention, SwiGLU) forward and backward of one
// rank under the 4D algorithm: every kernel on the compute
// stream, every collective through the CommEngine, in the order of gpt_schedule() (overlap
// flags reorder issue and wait, never the set). Files: linear.cpp (a 4D linear layer with OAR and
// ORS), block.cpp (layer norms, attention, blocks), head.cpp (embedding, final LN, LM head,
// vocab-parallel cross-entropy, data-parallel buckets).
//
// Micro-steps (--micro-batch): forward() and backward() run once per micro-step on that
// micro-step's tokens. Gradients accumulate in fp32: layer norms and embeddings with +=; the
// linear layers' dW and bias GEMMs overwrite, so after the first micro-step their result is
// added to the accumulated gradient - with Gz > 1 the rank's accumulated shard is added into its
// own chunk of the dW block before the Z reduce-scatter (which then writes the running sum), with
// Gz = 1 the dW goes to a slot of the dW window and is added. The Z small-parameter and data
// reductions run in the last micro-step only.
// With sharded gradients (ZeRO-2) each bucket's gradient is written afresh every micro-step into
// a bucket buffer (grad_buckets.hpp) taken when the bucket's backward starts, reduced over Z and
// reduce-scattered over data in every micro-step; the chunks accumulate there.
#pragma once

#include <vector>

#include "config.hpp"
#include "kernels/kernels.hpp"
#include "model/layout.hpp"
#include "train/comm.hpp"
#include "train/dw_window.hpp"
#include "train/gather.hpp"
#include "train/grad_buckets.hpp"
#include "train/state.hpp"

namespace ovb::gpt {

// The two terms of a residual add that a layer norm makes its input from (Model::layer_norm).
struct LnInputSum {
  const void* a = nullptr;
  const void* b = nullptr;
};

class Model {
 public:
  Model(const Config& cfg, const ParamLayout& layout, ModelState& st, Kernels& k, CommEngine& comm,
        WeightGatherer& gather, DwWindow& dw, GradBuckets& buckets);

  // Selects micro-step k (0-based) of the iteration: its tokens and its collectives' micro_step.
  void begin_micro_step(int k);
  // Forward of this rank's tokens of the micro-step (st.tokens, st.targets on the device); adds
  // the rank's share of the loss sum to st.scalars[0] (only ranks with x = y = 0 count, each
  // token once).
  void forward();
  // Backward, accumulated into st.grads (zeroed by the caller before the first micro-step).
  // Collectives deferred by ORS stay in flight: CommEngine::wait_all() before using the
  // gradients.
  void backward();

 private:
  // linear.cpp
  void linear_forward(const LinearParams& lp, const void* x, void* y, void* gelu_out, Phase ph,
                      bool rc);
  // gelu_in: x = gelu(gelu_in); dx then gets the GELU backward as well.
  void linear_backward(const LinearParams& lp, const void* dy, const void* x, void* dx,
                       const void* gelu_in = nullptr);
  // block.cpp
  // With `sum` = {a, b}, the input x is first made as a + b (the residual add, fused into the
  // statistics pass).
  using Sum = LnInputSum;
  void layer_norm(int layer, const char* name, void* x, int g, int b, void* out, float* mr,
                  Phase ph, bool rc, Sum sum = {});
  void layer_norm_backward(int layer, const char* name, const void* dy, const void* x,
                           const float* mr, int g, int b, void* dx);
  void block_forward(int l, Phase ph, bool rc);
  void rope(void* qkv, bool backward);  // Llama: on the local q and k heads, in place
  void block_backward(int l);
  // head.cpp
  void head_forward();
  void head_backward();
  // Every micro-step's gradients of bucket b go to grad_base_[b] (the flat buffer's bucket, or a
  // bucket buffer with sharded gradients).
  void take_bucket(int b);
  // Last micro-step only (every micro-step with sharded gradients).
  void bucket_reduce(int bucket_index, int layer, const char* name);

  const void* wptr(int tensor) const;  // working copy of a (small) tensor
  float* gptr(int tensor) const;       // its gradient
  const std::int32_t* tokens() const { return st_.tokens + micro_step_ * T_; }
  const std::int32_t* targets() const { return st_.targets + micro_step_ * T_; }
  bool last_micro_step() const { return micro_step_ == steps_ - 1; }
  // Index of a linear layer among all of them (4 per block, then the LM head).
  std::size_t linear_slot(const LinearParams& lp) const;
  CollOp op(Phase ph, int layer, std::string name, CollRole role, CollKind kind, Group g,
            std::int64_t count, DType dt, bool rc = false) const;

  const Config& cfg_;
  const GptShape& m_;
  const GptPlanOptions& o_;
  const ParamLayout& layout_;
  ModelState& st_;
  Kernels& k_;
  CommEngine& comm_;
  WeightGatherer& gather_;
  DwWindow& dw_;
  GradBuckets& buckets_;
  bool grads_sharded_;
  std::vector<int> tensor_bucket_;  // per tensor: its bucket
  std::vector<float*> grad_base_;   // per bucket: where its first element's gradient is
  std::int64_t T_, B_local_, hx_, hy_, heads_local_, vy_;
  std::int64_t kv_local_, ffn_local_;  // K/V heads and MLP width (GELU 4h, SwiGLU ffn) over Y
  std::size_t a_;
  std::vector<CollHandle> bucket_deps_;  // collectives the current data bucket waits for
  int micro_step_ = 0, steps_ = 1;
  // Per linear layer: the Z reduce-scatter of the previous micro-step, which wrote the shard the
  // next one adds into its dW block.
  std::vector<CollHandle> last_scatter_;
};

}  // namespace ovb::gpt
