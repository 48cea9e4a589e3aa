// The step phase (see optimizer.hpp).
#include "train/optimizer.hpp"

#include "ovb/annotate.hpp"
#include "train/schedule.hpp"

namespace ovb::gpt {

Optimizer::Optimizer(const Config& cfg, const ParamLayout& layout, ModelState& st, Kernels& k,
                     CommEngine& comm)
    : cfg_(cfg), st_(st), k_(k), comm_(comm) {
  for (const TensorDesc& t : layout.tensors) {
    if (t.owner) {
      if (!norm_runs_.empty() && norm_runs_.back().offset + norm_runs_.back().count == t.offset)
        norm_runs_.back().count += t.count;
      else
        norm_runs_.push_back({t.offset, t.count, false});
    }
    if (!update_runs_.empty() && update_runs_.back().decay == t.decay &&
        update_runs_.back().offset + update_runs_.back().count == t.offset)
      update_runs_.back().count += t.count;
    else
      update_runs_.push_back({t.offset, t.count, t.decay});
  }
}

void Optimizer::step(int iter) {
  ScopedRange range("step", "phase");
  Stream& s = comm_.compute();
  for (const Run& r : norm_runs_) k_.sumsq(s, st_.grads() + r.offset, r.count, st_.scalars + 1);
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
  const std::size_t act = size_of(cfg_.plan.act_dtype);
  for (const Run& r : update_runs_) {
    a.weight_decay = r.decay ? static_cast<float>(cfg_.optim.weight_decay) : 0.0f;
    void* work = st_.separate_work() ? static_cast<char*>(st_.work()) + r.offset * act : nullptr;
    k_.adamw(s, st_.params() + r.offset, st_.grads() + r.offset, st_.adam_m() + r.offset,
             st_.adam_v() + r.offset, work, r.count, a, st_.scalars + 1);
  }
}

}  // namespace ovb::gpt
