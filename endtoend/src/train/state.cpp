// Allocation of every buffer of a rank (see state.hpp; sizes mirror gpt_memory()).
#include "train/state.hpp"

#include <algorithm>

namespace ovb::gpt {

void* ModelState::act(std::int64_t elems, MemKind kind) {
  owned_.push_back(mem_.allocate(static_cast<std::size_t>(elems) * a_, kind));
  return owned_.back().data();
}

float* ModelState::f32(std::int64_t elems, MemKind kind) {
  owned_.push_back(mem_.allocate(static_cast<std::size_t>(elems) * sizeof(float), kind));
  return owned_.back().as<float>();
}

ModelState::ModelState(const GptShape& m, const GptPlanOptions& o, const ParamLayout& layout,
                       TrackedMemory& mem)
    : mem_(mem),
      a_(size_of(o.act_dtype)),
      recompute_(o.recompute),
      layers_(static_cast<int>(m.layers)) {
  const GridShape& g = o.grid;
  const std::size_t n = static_cast<std::size_t>(layout.total);
  const std::size_t own = static_cast<std::size_t>(layout.shard_total);
  const bool separate = o.act_dtype != DType::f32;
  params_ = mem.allocate((separate ? own : n) * 4, MemKind::params);
  if (separate) work_ = mem.allocate(n * a_, MemKind::params);
  // Sharded gradients: the rank's chunks only (the bucket buffers belong to GradBuckets).
  grads_ = mem.allocate((gradients_sharded(o) ? own : n) * 4, MemKind::grads);
  m_ = mem.allocate(own * 4, MemKind::optimizer);
  v_ = mem.allocate(own * 4, MemKind::optimizer);

  const std::int64_t T = tokens_per_rank(m, o);
  const std::int64_t hx = m.hidden / g.gx, hy = m.hidden / g.gy, hl = m.heads / g.gy;
  // Local widths of the QKV output, the MLP-up output and the activation (GPT 3h, 4h, 4h over Y).
  const std::vector<LinearSpec> specs = block_linears(m);
  const std::int64_t qkv_w = linear_geom(specs[0], g).out_local;
  const std::int64_t up_w = linear_geom(specs[2], g).out_local;
  const std::int64_t act_w = linear_geom(specs[3], g).in_local;
  for (int l = 0; l <= layers_; ++l)
    res_.push_back(mem.allocate(static_cast<std::size_t>(T * hx) * a_, MemKind::activations));
  const int n_sets = o.recompute ? 1 : layers_;
  for (int s = 0; s < n_sets; ++s) {
    ActSet a;
    a.ln1 = act(T * hx, MemKind::activations);
    a.xmid = act(T * hx, MemKind::activations);
    a.ln2 = act(T * hx, MemKind::activations);
    a.qkv = act(T * qkv_w, MemKind::activations);
    a.att = act(T * hy, MemKind::activations);
    a.pre = act(T * up_w, MemKind::activations);
    a.gelu = act(T * act_w, MemKind::activations);
    a.mr1 = f32(2 * T, MemKind::activations);
    a.mr2 = f32(2 * T, MemKind::activations);
    a.lse = f32(T * hl, MemKind::activations);
    sets_.push_back(a);
  }

  const std::int64_t vy = m.vocab / g.gy;
  lnf_out = act(T * hx, MemKind::workspace);
  lnf_mr = f32(2 * T, MemKind::workspace);
  logits = act(T * vy, MemKind::workspace);
  ce_local = f32(3 * T, MemKind::workspace);
  ce_all = f32(3 * T * g.gy, MemKind::workspace);
  ce_lse = f32(T, MemKind::workspace);
  dres = act(T * hx, MemKind::workspace);
  dtmp = act(T * hx, MemKind::workspace);
  gbig1 = act(T * std::max(up_w, qkv_w), MemKind::workspace);  // d(MLP-up out), dQKV
  gbig2 = act(T * std::max(act_w, hy), MemKind::workspace);    // d(activation), d(attention)
  ln_scratch = f32(2 * T, MemKind::workspace);
  att_scratch = f32(T * hl, MemKind::workspace);
  const std::size_t iter_tokens = static_cast<std::size_t>(local_batch(o) * m.seq);
  tokens_buf = mem.allocate(iter_tokens * 4, MemKind::workspace);
  targets_buf = mem.allocate(iter_tokens * 4, MemKind::workspace);
  scalars_buf = mem.allocate(2 * sizeof(float), MemKind::workspace);
  if (accumulates_full_gradients(o) && max_bias_local(m, g) > 0)
    bias_acc = f32(max_bias_local(m, g), MemKind::workspace);
  tokens = tokens_buf.as<std::int32_t>();
  targets = targets_buf.as<std::int32_t>();
  scalars = scalars_buf.as<float>();
}

}  // namespace ovb::gpt
