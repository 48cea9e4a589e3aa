// Embedding, final layer norm, LM head and the vocab-parallel cross-entropy, the model's forward
// and backward, and the data-parallel gradient buckets (all-reduced, or reduce-scattered into
// the data ranks' chunks with the sharded optimizer).
//
// Cross-entropy with the vocabulary split over Y: each Y rank computes, per token, the max and
// sum of exp over its vocabulary slice and the target's logit (0 when the target is elsewhere);
// one all-gather over Y of these 3T floats lets every rank combine them into the log-sum-exp, so
// the loss and the logits gradient (softmax - onehot) / (B*seq) need no other collective.
#include "ovb/annotate.hpp"
#include "train/model.hpp"

namespace ovb::gpt {

void Model::forward() {
  ScopedRange range("forward", "phase");
  const HeadParams& hp = layout_.head;
  k_.embedding_forward(comm_.compute(), tokens(), wptr(hp.wte),
                       hp.wpe >= 0 ? wptr(hp.wpe) : nullptr, st_.res(0), T_, m_.seq, hx_);
  for (int l = 0; l < m_.layers; ++l) block_forward(l, Phase::forward, false);
  head_forward();
}

void Model::head_forward() {
  ScopedRange range("head", "layer");
  Stream& s = comm_.compute();
  const HeadParams& hp = layout_.head;
  const int L = static_cast<int>(m_.layers);
  // The last block's output residual add, fused into ln_f (block.cpp).
  layer_norm(-1, "ln_f", st_.res(L), hp.lnf_g, hp.lnf_b, st_.lnf_out, st_.lnf_mr, Phase::forward,
             false, Sum{st_.set(L - 1).xmid, st_.dtmp});
  linear_forward(hp.lm_head, st_.lnf_out, st_.logits, nullptr, Phase::forward, false);
  const std::int64_t v0 = comm_.coord(Dim::y) * vy_;
  k_.ce_partial(s, st_.logits, targets(), st_.ce_local, T_, vy_, v0);
  const float* parts = st_.ce_local;
  if (o_.grid.gy > 1) {
    comm_.wait(comm_.issue(op(Phase::forward, -1, "loss", CollRole::ce_stats, CollKind::all_gather,
                              Group::y, 3 * T_, DType::f32),
                           st_.ce_local, st_.ce_all));
    parts = st_.ce_all;
  }
  // Every token's loss is known on all X and Y ranks of its (z, d): x = y = 0 counts it.
  const bool counts = comm_.coord(Dim::x) == 0 && comm_.coord(Dim::y) == 0;
  k_.ce_combine(s, parts, o_.grid.gy, st_.ce_lse, counts ? st_.scalars : nullptr, T_);
}

void Model::head_backward() {
  ScopedRange range("head backward", "layer");
  Stream& s = comm_.compute();
  const HeadParams& hp = layout_.head;
  const float scale = 1.0f / static_cast<float>(o_.batch * m_.seq);
  take_bucket(static_cast<int>(layout_.buckets.size()) - 1);
  k_.ce_backward(s, st_.logits, targets(), st_.ce_lse, scale, T_, vy_, comm_.coord(Dim::y) * vy_);
  linear_backward(hp.lm_head, st_.logits, st_.lnf_out, st_.dtmp);
  k_.zero(s, st_.dres, static_cast<std::size_t>(T_ * hx_) * a_);
  layer_norm_backward(-1, "ln_f", st_.dtmp, st_.res(static_cast<int>(m_.layers)), st_.lnf_mr,
                      hp.lnf_g, hp.lnf_b, st_.dres);
}

void Model::backward() {
  ScopedRange range("backward", "phase");
  bucket_deps_.clear();
  head_backward();
  const std::vector<CollHandle> head_deps = bucket_deps_;  // the LM head's reduce-scatter
  for (int l = static_cast<int>(m_.layers) - 1; l >= 0; --l) block_backward(l);
  const HeadParams& hp = layout_.head;
  k_.embedding_backward(comm_.compute(), tokens(), st_.dres, gptr(hp.wte),
                        hp.wpe >= 0 ? gptr(hp.wpe) : nullptr, T_, m_.seq, hx_);
  bucket_deps_ = head_deps;
  bucket_reduce(static_cast<int>(layout_.buckets.size()) - 1, -1, "head");
}

// Only in the last micro-step: the reductions are linear, so the accumulated gradients are
// reduced once per iteration (the data all-reduces behind the last micro-step's backward). With
// sharded gradients in every micro-step, from the bucket buffer: micro-step 0's chunk straight
// into the rank's shard, later ones in place and added there (grad_buckets.hpp).
void Model::bucket_reduce(int bucket_index, int layer, const char* name) {
  if (!last_micro_step() && !grads_sharded_) {
    bucket_deps_.clear();
    return;
  }
  const Bucket& b = layout_.buckets[static_cast<std::size_t>(bucket_index)];
  float* base = grad_base_[static_cast<std::size_t>(bucket_index)];
  float* small = base + (b.small_offset - b.offset);
  const CollHandle z = comm_.issue(op(Phase::backward, layer, name, CollRole::param_grad_reduce,
                                      CollKind::all_reduce, Group::z, b.small_count, o_.grad_dtype),
                                   small, small);
  if (!o_.ors) comm_.wait(z);
  bucket_deps_.push_back(z);
  // Sharded optimizer: a reduce-scatter leaves each data rank the sum over its own chunk (in
  // place); otherwise the whole bucket is all-reduced (own chunk = bucket).
  float* target = grads_sharded_ ? buckets_.reduce_target(bucket_index, micro_step_)
                                 : base + (b.own_offset - b.offset);
  const CollKind kind = optimizer_sharded(o_) ? CollKind::reduce_scatter : CollKind::all_reduce;
  const CollHandle d = comm_.issue(op(Phase::backward, layer, name, CollRole::data_grad_reduce,
                                      kind, Group::data, b.own_count, o_.grad_dtype),
                                   base, target, bucket_deps_);
  if (grads_sharded_) buckets_.hold(bucket_index, d, micro_step_);
  if (!o_.ors) comm_.wait(d);
  bucket_deps_.clear();
}

}  // namespace ovb::gpt
