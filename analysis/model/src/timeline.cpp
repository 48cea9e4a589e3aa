// The overlap term: one iteration on a compute stream and three communication streams
// (see timeline.hpp).
#include "ovb/model/timeline.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

namespace ovb::model {

double Timeline::exposed_total_us() const {
  double s = 0;
  for (const auto& g : exposed_us)
    for (double v : g) s += v;
  return s;
}

double Timeline::comm_group_us(Group g) const {
  const auto& r = comm_us[static_cast<int>(g)];
  return r[0] + r[1] + r[2];
}

double Timeline::exposed_group_us(Group g) const {
  const auto& r = exposed_us[static_cast<int>(g)];
  return r[0] + r[1] + r[2];
}

namespace {

struct Pending {
  double start, end;
  Group group;
  CollKind kind;
  bool waited = false;         // by the compute stream before the end of backward (the ORS window)
  const CollOp* op = nullptr;  // for the spans of its waits
  int layer = -1;              // the block that issued it (a block's ops are alike when aggregated)
};

// kSpans: the replay records its spans (explain --timeline); without, the code the search runs
// millions of times is the replay alone, not one test more.
template <bool kSpans>
class Sim {
 public:
  Sim(const ComputeTerms& ct, const GptPlanOptions& o, const Machine& mc, Timeline& out,
      std::vector<Span>* spans)
      : ct_(ct), o_(o), mc_(mc), out_(out), spans_(spans) {}

  void iteration(const PlanComm& pc, double give_up_at_us) {
    // gpt4d's ring of dW blocks under ORS (dw_window.hpp): min(window, 4L+1) slots.
    dw_slots_ = static_cast<std::size_t>(std::min<std::int64_t>(o_.ors_window, 4 * pc.layers + 1));
    previous_scatter_.assign(static_cast<std::size_t>(4 * pc.layers + 1), kNone);
    const HeadComm& h = pc.head;
    const HeadCompute& hk = ct_.head;
    const std::size_t head = static_cast<std::size_t>(4 * pc.layers);
    every_ = pc.reductions_every_micro_step;
    for (std::int64_t k = 0; k < pc.micro_steps; ++k) {
      micro_ = static_cast<int>(k);
      phase_ = Phase::forward;
      accumulate_ = k > 0 && !every_;
      adds_ = k > 0 && every_;
      const bool last = k == pc.micro_steps - 1 || every_;
      chain_ = -1;  // forward: the first all-gather cannot be prefetched
      run(hk.embed.time_us, "embedding");
      for (std::int64_t l = 0; l < pc.layers; ++l) {
        layer_ = static_cast<int>(l);
        block_forward(pc.block(l), false);
        layer_ = -1;
        if (t_ >= give_up_at_us) return give_up();
      }
      blocking(h.ln_f);
      run(hk.ln_f.time_us, "ln_f");
      linear_forward(h.lm_head, hk.lm_head, false, LinearId::lm_head);
      run(hk.ce.time_us, "ce");
      blocking(h.ce);

      phase_ = Phase::backward;
      chain_ = -1;  // backward (and its recomputed forwards): a new prefetch chain
      if (every_) settle(head_use_);
      run(hk.ce.bwd_us, "ce.bwd");
      linear_backward(h.lm_head, hk.lm_head, head, LinearId::lm_head);
      run(hk.ln_f.bwd_us, "ln_f.bwd");
      blocking(h.ln_f_grad);
      for (std::int64_t l = pc.layers - 1; l >= 0; --l) {
        layer_ = static_cast<int>(l);
        block_backward(pc.block(l), static_cast<std::size_t>(4 * l), last);
        layer_ = -1;
        if (t_ >= give_up_at_us) return give_up();
      }
      run(hk.embed.bwd_us, "embedding.bwd");
      if (last) {
        grad_op(h.param_reduce);
        grad_op(h.data_reduce);
        if (every_) hold(head_use_, h.data_reduce, hk.accumulate_us);
      }
    }
    wait_gradients();
    if (every_) {  // the chunks still to be added into the shard (gpt4d's GradBuckets::finish())
      for (const BucketUse& u : ring_) run(u.add_us, "bucket.accumulate");
      run(head_use_.add_us, "bucket.accumulate");
      ring_.clear();
      head_use_ = {};
    }

    phase_ = Phase::step;
    micro_ = 0;
    blocking(h.scalars);
    step(pc);
    out_.iteration_us = t_;
  }

 private:
  void give_up() { out_.iteration_us = std::numeric_limits<double>::infinity(); }

  // The spans (explain --timeline), recorded only in Sim<true>. Named a + b (an op and its pass, or
  // "wait " and the collective's op); `layer`: the block the op belongs to.
  void record(StreamId stream, double start, double end, const CollOp* op, int layer,
              std::string_view a, std::string_view b = {}) {
    if (end <= start) return;
    Span s;
    s.stream = stream;
    s.name.reserve(a.size() + b.size());
    s.name.append(a).append(b);
    s.start_us = start;
    s.end_us = end;
    s.phase = phase_;
    s.micro_step = micro_;
    s.layer = layer;
    if (op) {
      s.comm = true;
      s.group = op->group;
      s.kind = op->kind;
    }
    if (stream == StreamId::compute) last_compute_ = spans_->size();
    spans_->push_back(std::move(s));
  }

  // Interference: the compute stream's last op ran stretched (a new span when there is none).
  void stretch(double from, double to) {
    if (to <= from) return;
    if (last_compute_ < spans_->size() && !(*spans_)[last_compute_].comm &&
        (*spans_)[last_compute_].end_us == from)
      (*spans_)[last_compute_].end_us = to;
    else
      record(StreamId::compute, from, to, nullptr, layer_, "interference");
  }

  void run(double us, std::string_view name) {
    if constexpr (kSpans) record(StreamId::compute, t_, t_ + us, nullptr, layer_, name);
    t_ += us;
    out_.compute_us += us;
  }
  // A linear layer's pass (".fwd", ".dx", ...).
  void run(double us, LinearId id, std::string_view pass) {
    if constexpr (kSpans)
      record(StreamId::compute, t_, t_ + us, nullptr, layer_, name_of(id), pass);
    t_ += us;
    out_.compute_us += us;
  }

  void account(const CommSlot& s) {
    const int g = static_cast<int>(s.cost.group), k = static_cast<int>(s.cost.kind);
    out_.comm_us[g][k] += s.cost.time_us;
    out_.count[g][k] += 1;
  }

  void expose(Group g, CollKind k, double us) {
    out_.exposed_us[static_cast<int>(g)][static_cast<int>(k)] += us;
    t_ += us;
  }

  // AdamW, and with the sharded optimizer the data all-gathers of the updated weights: gpt4d
  // issues each bucket's right after the bucket's update (buckets in layout order, the updates
  // taking time in proportion to their chunks). With ORS they run behind the next buckets'
  // updates and the step ends when all have; without, each is waited for at once.
  void step(const PlanComm& pc) {
    const double opt_us = ct_.optimizer.time_us;
    std::vector<const CommSlot*> gathers;
    for (std::int64_t l = 0; l < pc.layers; ++l)
      if (pc.block(l).param_gather.present) gathers.push_back(&pc.block(l).param_gather);
    if (pc.head.param_gather.present) gathers.push_back(&pc.head.param_gather);
    if (gathers.empty()) return run(opt_us, "adamw");
    double total = 0;
    for (const CommSlot* s : gathers) total += static_cast<double>(s->op.count);
    std::vector<Pending> issued;
    for (const CommSlot* s : gathers) {
      run(opt_us * static_cast<double>(s->op.count) / total, "adamw");
      if (o_.ors)
        issued.push_back(issue(*s, t_, grad_free_));
      else
        blocking(*s);
    }
    for (const Pending& p : issued) wait(p);
  }

  void blocking(const CommSlot& s) {
    if (!s.present) return;
    account(s);
    if constexpr (kSpans) {
      record(stream_of(s.op), t_, t_ + s.cost.time_us, &s.op, layer_, s.op.op);
      record(StreamId::compute, t_, t_ + s.cost.time_us, &s.op, layer_, "wait ", s.op.op);
    }
    expose(s.cost.group, s.cost.kind, s.cost.time_us);
  }

  Pending issue(const CommSlot& s, double at, double& stream_free) {
    account(s);
    const double start = std::max(at, stream_free);
    const double end = start + s.cost.time_us * (1 + std::max(0.0, mc_.comm_slowdown));
    stream_free = end;
    if constexpr (kSpans) record(stream_of(s.op), start, end, &s.op, layer_, s.op.op);
    return {start, end, s.cost.group, s.cost.kind, false, &s.op, layer_};
  }

  // The compute stream waits for p: first the compute that ran under it is stretched, then any
  // remaining communication is exposed.
  void wait(const Pending& p) {
    const double under = std::max(0.0, std::min(p.end, t_) - p.start);
    const double extra = std::max(0.0, mc_.compute_slowdown) * under;
    const double before = t_;
    t_ += extra;
    out_.interference_us += extra;
    if constexpr (kSpans) stretch(before, t_);
    if (p.end > t_) {
      if constexpr (kSpans) record(StreamId::compute, t_, p.end, p.op, p.layer, "wait ", p.op->op);
      expose(p.group, p.kind, p.end - t_);
    }
  }

  void gather(const CommSlot& s) {
    if (!s.present) return;
    if (!o_.oag) return blocking(s);
    const Pending p = issue(s, chain_ < 0 ? t_ : chain_, ag_free_);
    wait(p);
    chain_ = t_;
  }

  void grad_op(const CommSlot& s) {
    if (!s.present) return;
    if (!o_.ors) return blocking(s);
    pending_.push_back(issue(s, t_, grad_free_));
  }

  // Before a dW GEMM under ORS: its slot of the dW ring is free once the reduce-scatter issued
  // from it `dw_slots_` layers earlier has completed.
  void take_dw_slot(const CommSlot& wgrad) {
    if (!o_.ors || !wgrad.present || in_flight_.size() < dw_slots_) return;
    Pending& p = pending_[in_flight_.front()];
    in_flight_.erase(in_flight_.begin());
    if (p.waited) return;  // already, by a micro-step's accumulation
    wait(p);
    p.waited = true;
  }

  void wait_gradients() {
    const double t_end = t_;
    double extra = 0;
    for (const Pending& p : pending_)
      if (!p.waited)
        extra +=
            std::max(0.0, mc_.compute_slowdown) * std::max(0.0, std::min(p.end, t_end) - p.start);
    const double before = t_;
    t_ += extra;
    out_.interference_us += extra;
    if constexpr (kSpans) stretch(before, t_);
    // Queued in order on one stream: each op's part after the compute stream arrived is exposed.
    for (const Pending& p : pending_)
      if (!p.waited && p.end > t_) {
        const double from = std::max(p.start, t_);
        out_.exposed_us[static_cast<int>(p.group)][static_cast<int>(p.kind)] += p.end - from;
        if constexpr (kSpans)
          record(StreamId::compute, from, p.end, p.op, p.layer, "wait ", p.op->op);
      }
    t_ = std::max(t_, grad_free_);
    pending_.clear();
    in_flight_.clear();
  }

  void linear_forward(const LinearComm& c, const LinearCompute& k, bool rc, LinearId id) {
    gather(rc ? c.gather_rc : c.gather);
    run(k.fwd.time_us, id, ".fwd");
    blocking(rc ? c.out_reduce_rc : c.out_reduce);
    run(k.epilogue.time_us, id, ".epilogue");
  }

  // The dW GEMM; in a micro-step after the first, the accumulation after it, which first waits
  // for the layer's reduce-scatter of the micro-step before (it wrote the accumulated shard).
  void weight_grad(const LinearComm& c, const LinearCompute& k, std::size_t linear, LinearId id) {
    take_dw_slot(c.wgrad);
    run(k.dw.time_us, id, ".dw");
    if (!accumulate_) return;
    std::size_t& prev = previous_scatter_[linear];
    if (prev != kNone && !pending_[prev].waited) {
      wait(pending_[prev]);
      pending_[prev].waited = true;
    }
    run(k.accumulate.time_us, id, ".accumulate");
  }

  void dw_reduce_scatter(const CommSlot& wgrad, std::size_t linear) {
    grad_op(wgrad);
    if (o_.ors && wgrad.present) in_flight_.push_back(pending_.size() - 1);
    // Without ORS it was waited for at once: nothing to wait for in the next micro-step.
    previous_scatter_[linear] = o_.ors && wgrad.present ? pending_.size() - 1 : kNone;
  }

  void linear_backward(const LinearComm& c, const LinearCompute& k, std::size_t linear,
                       LinearId id) {
    gather(c.gather_bwd);
    run(k.epilogue.bwd_us, id, ".epilogue.bwd");
    // No dX all-reduce to hide (its group has size 1): with ORS, dW first so that its
    // reduce-scatter overlaps the dX GEMM (as gpt4d does).
    if (o_.ors && !c.in_grad.present) {
      weight_grad(c, k, linear, id);
      dw_reduce_scatter(c.wgrad, linear);
      run(k.dx.time_us, id, ".dx");
      blocking(c.in_grad);
      return;
    }
    run(k.dx.time_us, id, ".dx");
    if (o_.oar && c.in_grad.present) {
      const Pending p = issue(c.in_grad, t_, tp_free_);
      weight_grad(c, k, linear, id);
      wait(p);
    } else {
      blocking(c.in_grad);
      weight_grad(c, k, linear, id);
    }
    dw_reduce_scatter(c.wgrad, linear);
  }

  void block_forward(const BlockComm& b, bool rc) {
    const BlockCompute& k = ct_.block;
    blocking(rc ? b.ln1_rc : b.ln1);
    run(k.ln1.time_us, "ln1");
    linear_forward(b.lin[0], k.lin[0], rc, LinearId::qkv);
    run(k.attn_fwd_us + k.attn_io.time_us, "attention");
    linear_forward(b.lin[1], k.lin[1], rc, LinearId::attn_out);
    blocking(rc ? b.ln2_rc : b.ln2);
    run(k.ln2.time_us, "ln2");
    linear_forward(b.lin[2], k.lin[2], rc, LinearId::mlp_up);
    linear_forward(b.lin[3], k.lin[3], rc, LinearId::mlp_down);
  }

  // Sharded gradients (gpt4d's GradBuckets): a bucket buffer is free again once its data
  // reduce-scatter has completed; in a micro-step after the first its chunk is then added into
  // the rank's shard. The head bucket has its own buffer, the blocks a ring of
  // grad_bucket_slots() buffers.
  struct BucketUse {
    std::size_t pending = kNone;  // the data reduce-scatter in pending_ (ORS), else none
    double add_us = 0;            // the chunk's addition still to run
  };
  void settle(BucketUse& u) {
    if (u.pending != kNone && !pending_[u.pending].waited) {
      wait(pending_[u.pending]);
      pending_[u.pending].waited = true;
    }
    run(u.add_us, "bucket.accumulate");
    u = {};
  }
  void hold(BucketUse& u, const CommSlot& data_reduce, double add_us) {
    u.pending = o_.ors && data_reduce.present ? pending_.size() - 1 : kNone;
    u.add_us = adds_ ? add_us : 0;
    if (!o_.ors) settle(u);
  }
  void take_bucket_buffer() {
    if (ring_.size() < static_cast<std::size_t>(grad_bucket_slots(o_))) return;
    settle(ring_.front());
    ring_.erase(ring_.begin());
  }

  // `first`: the index of the block's first linear layer; `last`: the last micro-step (or
  // every one with sharded gradients).
  void block_backward(const BlockComm& b, std::size_t first, bool last) {
    const BlockCompute& k = ct_.block;
    if (o_.recompute) block_forward(b, true);
    if (every_) take_bucket_buffer();
    linear_backward(b.lin[3], k.lin[3], first + 3, LinearId::mlp_down);
    linear_backward(b.lin[2], k.lin[2], first + 2, LinearId::mlp_up);
    run(k.ln2.bwd_us, "ln2.bwd");
    blocking(b.ln2_grad);
    linear_backward(b.lin[1], k.lin[1], first + 1, LinearId::attn_out);
    run(k.attn_bwd_us + k.attn_io.bwd_us, "attention.bwd");
    linear_backward(b.lin[0], k.lin[0], first, LinearId::qkv);
    run(k.ln1.bwd_us, "ln1.bwd");
    blocking(b.ln1_grad);
    if (!last) return;
    grad_op(b.param_reduce);
    grad_op(b.data_reduce);
    if (every_) {
      ring_.emplace_back();
      hold(ring_.back(), b.data_reduce, k.accumulate_us);
    }
  }

  const ComputeTerms& ct_;
  const GptPlanOptions& o_;
  const Machine& mc_;
  Timeline& out_;
  std::vector<Span>* spans_;          // where Sim<true> records (null in Sim<false>)
  std::size_t last_compute_ = kNone;  // the compute stream's last span in *spans_
  Phase phase_ = Phase::forward;      // where the compute stream is, for the spans
  int micro_ = 0, layer_ = -1;
  double t_ = 0, chain_ = -1, ag_free_ = 0, tp_free_ = 0, grad_free_ = 0;
  std::vector<Pending> pending_;
  std::vector<std::size_t>
      in_flight_;  // indices into pending_ of the dW reduce-scatters in the ring
  std::size_t dw_slots_ = 1;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  bool accumulate_ = false;  // a micro-step after the first, accumulating full gradients
  bool every_ = false;       // sharded gradients: the reductions in every micro-step
  bool adds_ = false;        // and this micro-step's chunks are added into the shard
  std::vector<BucketUse> ring_;
  BucketUse head_use_;
  // Per linear layer (4 per block, then the LM head): its last reduce-scatter in pending_.
  std::vector<std::size_t> previous_scatter_;
};

}  // namespace

namespace {

// Whether simulate() issues a collective of this role as blocking() under o's flags.
bool always_blocking(CollRole r, const GptPlanOptions& o) {
  switch (r) {
    case CollRole::weight_gather: return !o.oag;
    case CollRole::input_grad_reduce: return !o.oar;
    case CollRole::weight_grad_scatter:
    case CollRole::param_grad_reduce:
    case CollRole::data_grad_reduce:
    case CollRole::param_gather: return !o.ors;
    case CollRole::output_reduce:
    case CollRole::ln_stats:
    case CollRole::ln_grad_stats:
    case CollRole::ce_stats:
    case CollRole::scalars: return true;
  }
  return false;
}

}  // namespace

double blocking_comm_us(const PlanComm& pc, const GptPlanOptions& o) {
  double us = 0;
  for_each_slot(pc, [&](const CommSlot& s, double mult) {
    if (always_blocking(s.op.role, o)) us += mult * s.cost.time_us;
  });
  return us;
}

Timeline simulate(const ComputeTerms& ct, const PlanComm& pc, const GptPlanOptions& o,
                  const Machine& mc, double give_up_at_us, std::vector<Span>* spans) {
  Timeline out;
  if (spans) {
    Sim<true> sim(ct, o, mc, out, spans);
    sim.iteration(pc, give_up_at_us);
  } else {
    Sim<false> sim(ct, o, mc, out, nullptr);
    sim.iteration(pc, give_up_at_us);
  }
  return out;
}

}  // namespace ovb::model
