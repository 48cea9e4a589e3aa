// The step phase (see optimizer.hpp).
#include "train/optimizer.hpp"

#include <algorithm>

#include "ovb/annotate.hpp"
#include "ovb/error.hpp"
#include "train/schedule.hpp"

namespace ovb::gpt {

Optimizer::Optimizer(const Config& cfg, const ParamLayout& layout, ModelState& st, Kernels& k,
                     CommEngine& comm)
    : cfg_(cfg), st_(st), k_(k), comm_(comm), sharded_(optimizer_sharded(cfg.plan)) {
  const bool grads_sharded = gradients_sharded(cfg.plan);
  for (const Bucket& b : layout.buckets) buckets_.push_back({&b, {}});
  std::size_t bi = 0;
  for (const TensorDesc& t : layout.tensors) {
    if (t.count == 0) continue;
    while (bi < buckets_.size() && t.offset >= buckets_[bi].bucket->offset + buckets_[bi].bucket->count)
      ++bi;
    if (bi == buckets_.size())
      throw Error("gpt4d internal error: tensor " + t.name + " lies in no gradient bucket");
    BucketStep& bs = buckets_[bi];
    const Bucket& b = *bs.bucket;
    // The part of the tensor in the rank's chunk (all of it without sharding).
    const std::int64_t lo = std::max(t.offset, b.own_offset);
    const std::int64_t hi = std::min(t.offset + t.count, b.own_offset + b.own_count);
    if (hi <= lo) continue;
    const std::int64_t shard = b.shard_offset + (lo - b.own_offset);
    const std::int64_t grad = grads_sharded ? shard : lo;
    if (sharded_ ? t.owner_in_data_rank : t.owner) {
      if (!norm_runs_.empty() && norm_runs_.back().offset + norm_runs_.back().count == lo &&
          norm_runs_.back().grad + norm_runs_.back().count == grad)
        norm_runs_.back().count += hi - lo;
      else
        norm_runs_.push_back({lo, hi - lo, false, 0, grad});
    }
    if (!bs.runs.empty() && bs.runs.back().decay == t.decay &&
        bs.runs.back().offset + bs.runs.back().count == lo)
      bs.runs.back().count += hi - lo;
    else
      bs.runs.push_back({lo, hi - lo, t.decay, shard, grad});
  }
}

void Optimizer::step(int iter) {
  ScopedRange range("step", "phase");
  Stream& s = comm_.compute();
  for (const Run& r : norm_runs_) k_.sumsq(s, st_.grads() + r.grad, r.count, st_.scalars + 1);
  comm_.wait(comm_.issue(CollOp{Phase::step, -1, "global", CollRole::scalars, CollKind::all_reduce,
                                Group::world, 0, 2, DType::f32, false},
                         st_.scalars, st_.scalars));
  AdamWArgs a;
  a.lr = static_cast<float>(learning_rate(cfg_.optim, iter));
  a.beta1 = static_cast<float>(cfg_.optim.beta1);
  a.beta2 = static_cast<float>(cfg_.optim.beta2);
  a.eps = static_cast<float>(cfg_.optim.eps);
  a.step = iter + 1;
  a.clip = static_cast<float>(cfg_.optim.clip);
  const DType act_dtype = cfg_.plan.act_dtype;
  const std::size_t act = size_of(act_dtype);
  char* work = static_cast<char*>(st_.work());
  const bool separate = st_.separate_work();
  for (const BucketStep& bs : buckets_) {
    for (const Run& r : bs.runs) {
      a.weight_decay = r.decay ? static_cast<float>(cfg_.optim.weight_decay) : 0.0f;
      float* master = st_.params() + (separate ? r.shard : r.offset);
      k_.adamw(s, master, st_.grads() + r.grad, st_.adam_m() + r.shard, st_.adam_v() + r.shard,
               separate ? work + r.offset * act : nullptr, r.count, a, st_.scalars + 1);
    }
    if (!sharded_) continue;
    // The bucket's updated working weights to every data rank: with ORS (which also defers the
    // data reduce-scatters) while the next buckets update, else waited for at once.
    const Bucket& b = *bs.bucket;
    const CollHandle h = comm_.issue(
        CollOp{Phase::step, b.layer, b.layer < 0 ? "head" : "block", CollRole::param_gather,
               CollKind::all_gather, Group::data, 0, b.own_count, act_dtype, false},
        work + b.own_offset * act, work + b.offset * act);
    if (!cfg_.plan.ors) comm_.wait(h);
  }
  if (sharded_) comm_.wait_all();
}

}  // namespace ovb::gpt
