// A transformer block on one rank: pre-LN, QKV (normal), causal attention over the local heads,
// attention-out (transposed), residual, LN, MLP-up (normal) + GELU, MLP-down (transposed),
// residual. Layer norms reduce their statistics over X (forward: sum and sum of squares;
// backward: the two row sums of the gradient). Llama: RMSNorm (one statistic, one row sum), RoPE
// on q and k after QKV, grouped-query attention over the local K/V groups, SwiGLU after MLP-up.
// Buffer use is listed in state.hpp.
#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "train/model.hpp"

namespace ovb::gpt {

Model::Model(const Config& cfg, const ParamLayout& layout, ModelState& st, Kernels& k,
             CommEngine& comm, WeightGatherer& gather, DwWindow& dw, GradBuckets& buckets)
    : cfg_(cfg),
      m_(cfg.model),
      o_(cfg.plan),
      layout_(layout),
      st_(st),
      k_(k),
      comm_(comm),
      gather_(gather),
      dw_(dw),
      buckets_(buckets),
      grads_sharded_(gradients_sharded(cfg.plan)) {
  const GridShape& g = o_.grid;
  for (const TensorDesc& t : layout_.tensors) {
    int b = 0;
    while (b + 1 < static_cast<int>(layout_.buckets.size()) &&
           t.offset >= layout_.buckets[static_cast<std::size_t>(b)].offset +
                           layout_.buckets[static_cast<std::size_t>(b)].extent)
      ++b;
    tensor_bucket_.push_back(b);
  }
  // Sharded gradients: set when the bucket's buffer is taken (take_bucket()).
  for (const Bucket& b : layout_.buckets)
    grad_base_.push_back(grads_sharded_ ? nullptr : st_.grads() + b.offset);
  T_ = tokens_per_rank(m_, o_);
  B_local_ = T_ / m_.seq;
  hx_ = m_.hidden / g.gx;
  hy_ = m_.hidden / g.gy;
  heads_local_ = m_.heads / g.gy;
  kv_local_ = m_.kv() / g.gy;
  ffn_local_ = m_.ffn() / g.gy;
  vy_ = m_.vocab / g.gy;
  a_ = size_of(o_.act_dtype);
  steps_ = static_cast<int>(micro_steps(o_));
  last_scatter_.assign(static_cast<std::size_t>(4 * m_.layers + 1), -1);
}

void Model::begin_micro_step(int k) {
  micro_step_ = k;
  gather_.begin_micro_step(k);
}

std::size_t Model::linear_slot(const LinearParams& lp) const {
  if (lp.layer < 0) return static_cast<std::size_t>(4 * m_.layers);
  for (int i = 0; i < 4; ++i)
    if (&layout_.blocks[static_cast<std::size_t>(lp.layer)].linear(i) == &lp)
      return static_cast<std::size_t>(4 * lp.layer + i);
  throw Error("gpt4d internal error: linear layer not in its block");
}

const void* Model::wptr(int tensor) const {
  return static_cast<const char*>(st_.work()) +
         static_cast<std::size_t>(layout_[tensor].offset) * a_;
}

float* Model::gptr(int tensor) const {
  const int b = tensor_bucket_[static_cast<std::size_t>(tensor)];
  return grad_base_[static_cast<std::size_t>(b)] +
         (layout_[tensor].offset - layout_.buckets[static_cast<std::size_t>(b)].offset);
}

void Model::take_bucket(int b) {
  if (grads_sharded_) grad_base_[static_cast<std::size_t>(b)] = buckets_.take(b);
}

CollOp Model::op(Phase ph, int layer, std::string name, CollRole role, CollKind kind, Group g,
                 std::int64_t count, DType dt, bool rc) const {
  return CollOp{ph, layer, std::move(name), role, kind, g, 0, count, dt, rc, micro_step_};
}

void Model::layer_norm(int layer, const char* name, void* x, int g, int b, void* out, float* mr,
                       Phase ph, bool rc, Sum sum) {
  Stream& s = comm_.compute();
  const bool rms = m_.llama();
  if (sum.a && rms)
    k_.add_rms_partial(s, sum.a, sum.b, x, st_.ln_scratch, T_, hx_);
  else if (sum.a)
    k_.add_ln_partial(s, sum.a, sum.b, x, st_.ln_scratch, T_, hx_);
  else if (rms)
    k_.rms_partial(s, x, st_.ln_scratch, T_, hx_);
  else
    k_.ln_partial(s, x, st_.ln_scratch, T_, hx_);
  comm_.wait(comm_.issue(op(ph, layer, name, CollRole::ln_stats, CollKind::all_reduce, Group::x,
                            norm_stats_per_token(m_) * T_, DType::f32, rc),
                         st_.ln_scratch, st_.ln_scratch));
  if (rms)
    k_.rms_forward(s, x, st_.ln_scratch, wptr(g), out, mr, T_, hx_, m_.hidden);
  else
    k_.ln_forward(s, x, st_.ln_scratch, wptr(g), wptr(b), out, mr, T_, hx_, m_.hidden);
}

void Model::layer_norm_backward(int layer, const char* name, const void* dy, const void* x,
                                const float* mr, int g, int b, void* dx) {
  Stream& s = comm_.compute();
  const bool rms = m_.llama();
  if (rms)
    k_.rms_backward_partial(s, dy, x, mr, wptr(g), st_.ln_scratch, T_, hx_);
  else
    k_.ln_backward_partial(s, dy, x, mr, wptr(g), st_.ln_scratch, T_, hx_);
  comm_.wait(
      comm_.issue(op(Phase::backward, layer, name, CollRole::ln_grad_stats, CollKind::all_reduce,
                     Group::x, norm_stats_per_token(m_) * T_, DType::f32),
                  st_.ln_scratch, st_.ln_scratch));
  if (rms)
    k_.rms_backward(s, dy, x, mr, wptr(g), st_.ln_scratch, dx, gptr(g), T_, hx_, m_.hidden);
  else
    k_.ln_backward(s, dy, x, mr, wptr(g), st_.ln_scratch, dx, gptr(g), gptr(b), T_, hx_, m_.hidden);
}

void Model::block_forward(int l, Phase ph, bool rc) {
  ScopedRange range("layer" + std::to_string(l) + (rc ? " recompute" : ""), "layer");
  Stream& s = comm_.compute();
  const BlockParams& bp = layout_.blocks[static_cast<std::size_t>(l)];
  const ActSet& a = st_.set(l);
  void* x = st_.res(l);
  const std::int64_t D = m_.head_dim();
  // The previous block's output residual add res(l) = xmid(l-1) + dtmp (its MLP-down output) is
  // fused into this LN1 (into ln_f after the last block). The recomputed forward only rebuilds
  // the saved tensors: res(l) is still there.
  Sum in;
  if (!rc && l > 0) in = Sum{st_.set(l - 1).xmid, st_.dtmp};
  layer_norm(l, "ln1", x, bp.ln1_g, bp.ln1_b, a.ln1, a.mr1, ph, rc, in);
  linear_forward(bp.qkv, a.ln1, a.qkv, nullptr, ph, rc);
  if (m_.llama()) rope(a.qkv, false);
  k_.gqa_attention_forward(s, a.qkv, a.att, a.lse, B_local_, m_.seq, heads_local_, kv_local_, D);
  linear_forward(bp.attn_out, a.att, st_.dtmp, nullptr, ph, rc);
  // xmid = x + attention output, fused into LN2.
  layer_norm(l, "ln2", a.xmid, bp.ln2_g, bp.ln2_b, a.ln2, a.mr2, ph, rc, Sum{x, st_.dtmp});
  if (m_.llama()) {
    linear_forward(bp.mlp_up, a.ln2, a.pre, nullptr, ph, rc);
    k_.swiglu_forward(s, a.pre, a.gelu, T_, ffn_local_);
  } else {
    linear_forward(bp.mlp_up, a.ln2, a.pre, a.gelu, ph, rc);
  }
  linear_forward(bp.mlp_down, a.gelu, st_.dtmp, nullptr, ph, rc);
}

void Model::block_backward(int l) {
  if (o_.recompute) block_forward(l, Phase::backward, true);
  ScopedRange range("layer" + std::to_string(l) + " backward", "layer");
  Stream& s = comm_.compute();
  const BlockParams& bp = layout_.blocks[static_cast<std::size_t>(l)];
  const ActSet& a = st_.set(l);
  bucket_deps_.clear();
  take_bucket(l);
  // st_.dres holds the gradient of the block output.
  if (m_.llama()) {
    linear_backward(bp.mlp_down, st_.dres, a.gelu, st_.gbig2);
    k_.swiglu_backward(s, a.pre, st_.gbig2, st_.gbig1, T_, ffn_local_);
  } else {
    linear_backward(bp.mlp_down, st_.dres, a.gelu, st_.gbig1, a.pre);  // with the GELU backward
  }
  linear_backward(bp.mlp_up, st_.gbig1, a.ln2, st_.dtmp);
  layer_norm_backward(l, "ln2", st_.dtmp, a.xmid, a.mr2, bp.ln2_g, bp.ln2_b, st_.dres);
  linear_backward(bp.attn_out, st_.dres, a.att, st_.gbig2);
  k_.gqa_attention_backward(s, a.qkv, a.att, st_.gbig2, a.lse, st_.gbig1, st_.att_scratch, B_local_,
                            m_.seq, heads_local_, kv_local_, m_.head_dim());
  if (m_.llama()) rope(st_.gbig1, true);  // dQKV back through the rotation
  linear_backward(bp.qkv, st_.gbig1, a.ln1, st_.dtmp);
  layer_norm_backward(l, "ln1", st_.dtmp, st_.res(l), a.mr1, bp.ln1_g, bp.ln1_b, st_.dres);
  bucket_reduce(l, l, "block");
}

void Model::rope(void* qkv, bool backward) {
  k_.rope(comm_.compute(), qkv, B_local_, m_.seq, kv_local_, heads_local_ / kv_local_,
          m_.head_dim(), static_cast<float>(m_.rope_theta), backward);
}

}  // namespace ovb::gpt
