// The generator of one iteration's schedule (see ovb/gpt_schedule.hpp, docs/schedule.md).
//
// It walks the iteration the way gpt4d runs it - micro-steps of forward and backward, then the
// step - and keeps the state that decides the order of issues and waits: the Z all-gather
// schedule with its OAG prefetch and ring of gathered slots (gpt4d's WeightGatherer), the ring of
// dW blocks (DwWindow), the bucket buffers of sharded gradients (GradBuckets), the previous
// micro-step's reduce-scatter of each layer, and the collectives a data bucket depends on. A wait
// for a collective already waited for, and a collective over a group of size 1, produce no step.
// Steps go to a StepVisitor as they are made (op names are the constants below, nothing is
// allocated per step), so that a consumer replaying the iteration need not store it.
#include "ovb/gpt_schedule.hpp"

#include <utility>

#include "ovb/error.hpp"

namespace ovb {

namespace {

constexpr int kNone = -1;

// The compute ops' names, one constant each (Step::op).
struct LinearOps {
  std::string_view fwd, dx, dw, accumulate, bias_accumulate;
};
const LinearOps& linear_ops(LinearId id) {
  static constexpr LinearOps kOps[] = {
      {"qkv.fwd", "qkv.dx", "qkv.dw", "qkv.accumulate", "qkv.bias_accumulate"},
      {"attn_out.fwd", "attn_out.dx", "attn_out.dw", "attn_out.accumulate",
       "attn_out.bias_accumulate"},
      {"mlp_up.fwd", "mlp_up.dx", "mlp_up.dw", "mlp_up.accumulate", "mlp_up.bias_accumulate"},
      {"mlp_down.fwd", "mlp_down.dx", "mlp_down.dw", "mlp_down.accumulate",
       "mlp_down.bias_accumulate"},
      {"lm_head.fwd", "lm_head.dx", "lm_head.dw", "lm_head.accumulate", "lm_head.bias_accumulate"},
  };
  return kOps[static_cast<int>(id)];
}
struct NormOps {
  std::string_view name, stats, apply, bwd_stats, bwd;
};
constexpr NormOps kLn1{"ln1", "ln1.stats", "ln1", "ln1.bwd_stats", "ln1.bwd"};
constexpr NormOps kLn2{"ln2", "ln2.stats", "ln2", "ln2.bwd_stats", "ln2.bwd"};
constexpr NormOps kLnF{"ln_f", "ln_f.stats", "ln_f", "ln_f.bwd_stats", "ln_f.bwd"};

class Generator {
 public:
  Generator(const GptShape& m, const GptPlanOptions& o, StepVisitor& sink)
      : m_(m),
        o_(o),
        g_(o.grid),
        T_(tokens_per_rank(m, o)),
        L_(static_cast<int>(m.layers)),
        sink_(sink),
        out_(schedule_counts(m, o)) {
    for (const LinearSpec& s : block_linears(m)) geo_.push_back(linear_geom(s, g_));
    geo_.push_back(linear_geom(lm_head_linear(m), g_));
    z_sharded_ = g_.gz > 1;
    grads_sharded_ = gradients_sharded(o);
    steps_ = out_.micro_steps;
    last_scatter_.assign(static_cast<std::size_t>(4 * L_ + 1), kNone);
    plan_gathers();
    dw_readers_.assign(static_cast<std::size_t>(out_.dw_slots), kNone);
    if (grads_sharded_) {
      ring_.assign(static_cast<std::size_t>(out_.bucket_slots - 1), {});  // + the head's
      current_.assign(static_cast<std::size_t>(L_ + 1), kNone);
      first_.assign(static_cast<std::size_t>(L_ + 1), kNone);
    }
    issued_.swap(spare_issued_);  // the last visit's buffer (empty), so it need not grow again
  }
  ~Generator() {
    issued_.clear();
    issued_.swap(spare_issued_);
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  ScheduleCounts run() {
    for (int k = 0; k < steps_; ++k) {
      micro_ = k;
      begin_gathers();
      forward();
      backward();
    }
    wait_all();
    for (int s = -1; s < static_cast<int>(ring_.size()); ++s) settle(s);  // GradBuckets::finish
    optimizer_step();
    return out_;
  }

 private:
  // ---- Steps ----
  Step base(StepKind kind, int layer, std::string_view op) const {
    Step s;
    s.kind = kind;
    s.phase = phase_;
    s.micro_step = phase_ == Phase::step ? 0 : micro_;
    s.layer = layer;
    s.recompute = rc_;
    s.op = op;
    return s;
  }
  void compute(int layer, std::string_view op, GemmShape gemm = {}, int linear = -1) {
    Step s = base(StepKind::compute, layer, op);
    s.gemm = gemm;
    s.linear.value = linear;
    sink_.step(s, nullptr);
  }
  void slot(StepKind kind, SlotPool pool, int index, int layer, int linear = -1) {
    slot_as(kind, pool, index, layer, linear, phase_, rc_);
  }
  void slot_as(StepKind kind, SlotPool pool, int index, int layer, int linear, Phase phase,
               bool recompute) {
    Step s = base(kind, layer, name_of(pool));
    s.phase = phase;
    s.recompute = recompute;
    s.pool = pool;
    s.slot = index;
    s.linear.value = linear;
    sink_.step(s, nullptr);
  }

  // ---- The communication engine: ids, waits once each ----
  int group_size(Group gr) const {
    return gr == Group::world ? g_.world() : g_.size(static_cast<Dim>(gr));
  }
  // `name`: the op's name, a constant (CollOp::op gets a copy).
  int issue(CollOp op, std::string_view name, int linear = -1, const std::vector<int>& deps = {}) {
    op.group_size = group_size(op.group);
    if (op.group_size <= 1) return kNone;
    op.micro_step = op.phase == Phase::step ? 0 : micro_;
    const int id = static_cast<int>(issued_.size());
    Step s = base(StepKind::issue, op.layer, name);
    s.phase = op.phase;
    s.recompute = op.recompute;
    s.linear.value = linear;
    s.stream = stream_of(op);
    s.coll = id;
    for (int d : deps)
      if (d >= 0) s.deps.push_back(d);
    issued_.push_back({op.layer, s.linear, name, false});
    sink_.step(s, &op);
    return id;
  }
  void wait(int id) {
    if (id < 0 || issued_[static_cast<std::size_t>(id)].waited) return;
    Issued& is = issued_[static_cast<std::size_t>(id)];
    is.waited = true;
    Step s = base(StepKind::wait, is.layer, is.op);
    s.linear = is.linear;
    s.coll = id;
    const int layer = is.layer, linear = is.linear.value;  // before the sink sees the step
    sink_.step(s, nullptr);
    // A dW block's slot is free once its reduce-scatter has completed.
    for (std::size_t i = 0; i < dw_readers_.size(); ++i)
      if (dw_readers_[i] == id) {
        dw_readers_[i] = kNone;
        slot(StepKind::slot_release, SlotPool::dw, static_cast<int>(i), layer, linear);
      }
  }
  void wait_all() {
    for (std::size_t i = 0; i < issued_.size(); ++i) wait(static_cast<int>(i));
  }
  CollOp op(int layer, std::string_view name, CollRole role, CollKind kind, Group gr,
            std::int64_t count, DType dt) const {
    return CollOp{phase_, layer, std::string(name), role, kind, gr, 0, count, dt, rc_, micro_};
  }

  // ---- Z all-gathers (gpt4d's WeightGatherer) ----
  struct Request {
    int layer, linear;  // linear 0..3 in the block, 4: LM head
    Phase phase;
    bool recompute;
  };
  void plan_gathers() {
    if (!z_sharded_) return;
    for (int l = 0; l < L_; ++l)
      for (int i = 0; i < 4; ++i) gathers_.push_back({l, i, Phase::forward, false});
    gathers_.push_back({-1, 4, Phase::forward, false});
    if (!o_.cache_weights) {
      gathers_.push_back({-1, 4, Phase::backward, false});
      for (int l = L_ - 1; l >= 0; --l)
        for (int i = 0; i < 4; ++i)
          gathers_.push_back(o_.recompute ? Request{l, i, Phase::backward, true}
                                          : Request{l, 3 - i, Phase::backward, false});
    }
    const int K = out_.gathered_slots - 1;  // the ring (not cached) and the LM head's
    int seq = 0;
    for (const Request& r : gathers_)
      gather_slot_.push_back(o_.cache_weights ? (r.layer < 0 ? 4 * L_ : 4 * r.layer + r.linear)
                                              : (r.layer < 0 ? K : seq++ % K));
  }
  void begin_gathers() {
    cursor_ = 0;
    gather_id_.assign(gathers_.size(), kNone);
    gather_issued_.assign(gathers_.size(), false);
    gather_held_.assign(gathers_.size(), false);
  }
  int ordinal(int layer, int li) const { return layer < 0 ? 4 * L_ : 4 * layer + li; }
  void issue_gather(std::size_t k) {
    const Request& r = gathers_[k];
    const LinearGeom& L = geo_[static_cast<std::size_t>(r.linear)];
    slot_as(StepKind::slot_take, SlotPool::gathered, gather_slot_[k], r.layer,
            ordinal(r.layer, r.linear), r.phase, r.recompute);
    const std::string_view name = name_of(L.spec.id);
    CollOp c{r.phase,
             r.layer,
             std::string(name),
             CollRole::weight_gather,
             CollKind::all_gather,
             Group::z,
             0,
             L.shard,
             o_.act_dtype,
             r.recompute,
             micro_};
    gather_id_[k] = issue(std::move(c), name, ordinal(r.layer, r.linear));
    gather_issued_[k] = true;
    gather_held_[k] = true;
  }
  void acquire(int layer, int li) {
    if (!z_sharded_) return;
    if (o_.cache_weights && phase_ == Phase::backward) return;
    if (o_.recompute && phase_ == Phase::backward && !rc_ && layer >= 0) return;  // recomputed
    const std::size_t k = cursor_++;
    if (k >= gathers_.size() || gathers_[k].layer != layer || gathers_[k].linear != li)
      throw Error("gpt_schedule internal error: weight gather out of order");
    if (!gather_issued_[k]) issue_gather(k);
    if (o_.oag && k + 1 < gathers_.size() && gathers_[k + 1].phase == phase_ &&
        !gather_issued_[k + 1])
      issue_gather(k + 1);  // prefetch: issued before this layer's compute
    wait(gather_id_[k]);
  }
  void release(int layer, int li) {
    if (!z_sharded_ || o_.cache_weights || rc_) return;
    // From the latest acquired back: the layer's own is among the last few (a forward scan
    // would make a micro-step quadratic in the layers).
    for (std::size_t k = cursor_; k-- > 0;)
      if (gather_held_[k] && gathers_[k].layer == layer && gathers_[k].linear == li) {
        gather_held_[k] = false;
        slot(StepKind::slot_release, SlotPool::gathered, gather_slot_[k], layer,
             ordinal(layer, li));
        return;
      }
  }

  // ---- dW blocks (DwWindow) ----
  void take_dw(int layer, int linear) {
    if (dw_readers_.empty()) throw Error("gpt_schedule internal error: dW block without a slot");
    const std::size_t i = dw_next_++ % dw_readers_.size();
    wait(dw_readers_[i]);
    dw_readers_[i] = kNone;
    dw_taken_ = static_cast<int>(i);
    slot(StepKind::slot_take, SlotPool::dw, static_cast<int>(i), layer, linear);
  }

  // ---- Bucket buffers of sharded gradients (GradBuckets); slot -1 is the head bucket's ----
  struct BucketSlot {
    int reader = kNone;   // its data reduce-scatter
    int pending = kNone;  // bucket whose in-place chunk is still to be added into the shard
    bool held = false;
  };
  BucketSlot& bucket_slot(int s) { return s < 0 ? head_ : ring_[static_cast<std::size_t>(s)]; }
  int pool_index(int s) const { return s < 0 ? static_cast<int>(ring_.size()) : s; }
  void settle(int s) {
    if (!grads_sharded_) return;
    BucketSlot& b = bucket_slot(s);
    wait(b.reader);
    b.reader = kNone;
    if (b.pending != kNone) {
      wait(first_[static_cast<std::size_t>(b.pending)]);
      compute(b.pending == L_ ? -1 : b.pending, "bucket.accumulate");
      b.pending = kNone;
    }
    if (b.held) {
      b.held = false;
      slot(StepKind::slot_release, SlotPool::bucket, pool_index(s), -1);
    }
  }
  void take_bucket(int b) {  // b: block index, L for the head
    if (!grads_sharded_) return;
    const int s = b == L_ ? -1 : static_cast<int>(ring_next_++ % ring_.size());
    settle(s);
    bucket_slot(s).held = true;
    slot(StepKind::slot_take, SlotPool::bucket, pool_index(s), b == L_ ? -1 : b);
    compute(b == L_ ? -1 : b, "bucket.zero");
    current_[static_cast<std::size_t>(b)] = s;
  }
  void hold_bucket(int b, int reduce_scatter) {
    const int s = current_[static_cast<std::size_t>(b)];
    BucketSlot& bs = bucket_slot(s);
    bs.reader = reduce_scatter;
    if (micro_ == 0) first_[static_cast<std::size_t>(b)] = reduce_scatter;
    bs.pending = micro_ > 0 ? b : kNone;
    if (!o_.ors) settle(s);
  }

  // ---- Layers ----
  void layer_norm(int layer, const NormOps& n) {
    norm_pass(layer, n, n.stats, CollRole::ln_stats, n.apply);
  }
  void layer_norm_backward(int layer, const NormOps& n) {
    norm_pass(layer, n, n.bwd_stats, CollRole::ln_grad_stats, n.bwd);
  }
  // One pass of a norm over X-sharded rows: its statistics, their blocking X all-reduce, the rest.
  void norm_pass(int layer, const NormOps& n, std::string_view stats, CollRole role,
                 std::string_view rest) {
    compute(layer, stats);
    wait(issue(op(layer, n.name, role, CollKind::all_reduce, Group::x,
                  norm_stats_per_token(m_) * T_, DType::f32),
               n.name));
    compute(layer, rest);
  }
  // With tp and an output all-reduce, k row slices of the tokens: each slice's GEMM, then its
  // all-reduce on tp; the compute stream waits for all of them after the last slice.
  void linear_forward(int layer, int li, bool gelu) {
    const LinearGeom& L = geo_[static_cast<std::size_t>(li)];
    const std::string_view name = name_of(L.spec.id);
    const bool reduced = g_.size(L.in_dim) > 1;
    const std::int64_t k = o_.otp && reduced ? o_.tp_chunks : 1, rows = T_ / k;
    acquire(layer, li);
    // The slices' issues are consecutive ids (nothing else is issued between them).
    int first = kNone;
    for (std::int64_t c = 0; c < k; ++c) {
      compute(layer, linear_ops(L.spec.id).fwd, {rows, L.out_local, L.in_local},
              ordinal(layer, li));
      if (c == k - 1) release(layer, li);
      const int id = issue(op(layer, name, CollRole::output_reduce, CollKind::all_reduce,
                              group_of(L.in_dim), rows * L.out_local, o_.act_dtype),
                           name, ordinal(layer, li));
      if (c == 0) first = id;
    }
    if (first != kNone)
      for (std::int64_t c = 0; c < k; ++c) wait(first + static_cast<int>(c));
    if (gelu && reduced) compute(layer, "gelu");
  }
  void linear_backward(int layer, int li, bool gelu) {
    const LinearGeom& L = geo_[static_cast<std::size_t>(li)];
    const std::string_view name = name_of(L.spec.id);
    const LinearOps& ops = linear_ops(L.spec.id);
    const int ord = ordinal(layer, li);
    acquire(layer, li);
    const bool accumulate = micro_ > 0 && !grads_sharded_;
    int& previous = last_scatter_[static_cast<std::size_t>(ord)];
    int ar = kNone, rs = kNone;
    auto weight_grad = [&] {
      if (z_sharded_ || accumulate) take_dw(layer, ord);
      compute(layer, ops.dw, {L.out_local, L.in_local, T_}, ord);
      if (accumulate && L.bias_local > 0) compute(layer, ops.bias_accumulate, {}, ord);
      if (accumulate && z_sharded_) {
        wait(previous);
        compute(layer, ops.accumulate, {}, ord);
      } else if (accumulate) {
        compute(layer, ops.accumulate, {}, ord);
      }
      if (z_sharded_) {
        rs = issue(op(layer, name, CollRole::weight_grad_scatter, CollKind::reduce_scatter,
                      Group::z, L.shard, o_.grad_dtype),
                   name, ord);
        dw_readers_[static_cast<std::size_t>(dw_taken_)] = rs;
        previous = rs;
      } else if (accumulate) {
        slot(StepKind::slot_release, SlotPool::dw, dw_taken_, layer, ord);  // added: free again
      }
    };
    auto input_grad = [&] {
      compute(layer, ops.dx, {T_, L.in_local, L.out_local}, ord);
      ar = issue(op(layer, name, CollRole::input_grad_reduce, CollKind::all_reduce,
                    group_of(L.out_dim), T_ * L.in_local, o_.act_dtype),
                 name, ord);
    };
    if (o_.ors && g_.size(L.out_dim) == 1) {
      weight_grad();
      input_grad();
    } else {
      input_grad();
      if (!o_.oar) wait(ar);
      weight_grad();
    }
    release(layer, li);
    wait(ar);
    if (gelu && g_.size(L.out_dim) > 1) compute(layer, "gelu.bwd");
    if (rs >= 0) {
      bucket_deps_.push_back(rs);
      if (!o_.ors) wait(rs);
    }
  }

  void block_forward(int l) {
    layer_norm(l, kLn1);
    linear_forward(l, 0, false);
    if (m_.llama()) compute(l, "rope");
    compute(l, "attention");
    linear_forward(l, 1, false);
    layer_norm(l, kLn2);
    linear_forward(l, 2, !m_.llama());
    if (m_.llama()) compute(l, "swiglu");
    linear_forward(l, 3, false);
  }
  void block_backward(int l) {
    if (o_.recompute) {
      rc_ = true;
      block_forward(l);
      rc_ = false;
    }
    bucket_deps_.clear();
    take_bucket(l);
    linear_backward(l, 3, !m_.llama());
    if (m_.llama()) compute(l, "swiglu.bwd");
    linear_backward(l, 2, false);
    layer_norm_backward(l, kLn2);
    linear_backward(l, 1, false);
    compute(l, "attention.bwd");
    if (m_.llama()) compute(l, "rope.bwd");
    linear_backward(l, 0, false);
    layer_norm_backward(l, kLn1);
    bucket_reduce(l);
  }

  // The Z small-parameter all-reduce and the data reduction of bucket b (block index, L: head).
  void bucket_reduce(int b) {
    const bool last = micro_ == steps_ - 1;
    if (!last && !grads_sharded_) {
      bucket_deps_.clear();
      return;
    }
    const bool head = b == L_;
    const int layer = head ? -1 : b;
    const std::string_view name = head ? "head" : "block";
    const std::int64_t small = head ? head_small_params(m_, g_) : block_small_params(m_, g_);
    const std::int64_t count = head ? head_bucket_count(m_, g_) : block_bucket_count(m_, g_);
    const int z = issue(op(layer, name, CollRole::param_grad_reduce, CollKind::all_reduce, Group::z,
                           small, o_.grad_dtype),
                        name);
    if (!o_.ors) wait(z);
    bucket_deps_.push_back(z);
    const CollKind kind = optimizer_sharded(o_) ? CollKind::reduce_scatter : CollKind::all_reduce;
    const int d = issue(op(layer, name, CollRole::data_grad_reduce, kind, Group::data,
                           data_chunk(count, o_), o_.grad_dtype),
                        name, -1, bucket_deps_);
    if (grads_sharded_) hold_bucket(b, d);
    if (!o_.ors) wait(d);
    bucket_deps_.clear();
  }

  void forward() {
    phase_ = Phase::forward;
    compute(-1, "embedding");
    for (int l = 0; l < L_; ++l) block_forward(l);
    layer_norm(-1, kLnF);
    linear_forward(-1, 4, false);
    compute(-1, "ce");
    if (g_.gy > 1)
      wait(issue(
          op(-1, "loss", CollRole::ce_stats, CollKind::all_gather, Group::y, 3 * T_, DType::f32),
          "loss"));
    compute(-1, "ce_combine");
  }

  void backward() {
    phase_ = Phase::backward;
    bucket_deps_.clear();
    take_bucket(L_);
    compute(-1, "ce.bwd");
    linear_backward(-1, 4, false);
    layer_norm_backward(-1, kLnF);
    const std::vector<int> head_deps = bucket_deps_;  // the LM head's reduce-scatter
    for (int l = L_ - 1; l >= 0; --l) block_backward(l);
    compute(-1, "embedding.bwd");
    bucket_deps_ = head_deps;
    bucket_reduce(L_);
  }

  void optimizer_step() {
    phase_ = Phase::step;
    compute(-1, "sumsq");
    wait(issue(
        op(-1, "global", CollRole::scalars, CollKind::all_reduce, Group::world, 2, DType::f32),
        "global"));
    const bool sharded = optimizer_sharded(o_);
    for (int b = 0; b <= L_; ++b) {
      const bool head = b == L_;
      compute(head ? -1 : b, "adamw");
      if (!sharded) continue;
      const std::int64_t count = head ? head_bucket_count(m_, g_) : block_bucket_count(m_, g_);
      const std::string_view name = head ? "head" : "block";
      const int h = issue(op(head ? -1 : b, name, CollRole::param_gather, CollKind::all_gather,
                             Group::data, data_chunk(count, o_), o_.act_dtype),
                          name);
      if (!o_.ors) wait(h);
    }
    if (sharded) wait_all();
  }

  const GptShape& m_;
  const GptPlanOptions& o_;
  const GridShape& g_;
  std::int64_t T_;
  int L_;
  std::vector<LinearGeom> geo_;  // the block's four, then the LM head
  bool z_sharded_ = false, grads_sharded_ = false;
  int steps_ = 1, micro_ = 0;
  Phase phase_ = Phase::forward;
  bool rc_ = false;
  StepVisitor& sink_;
  ScheduleCounts out_;
  // Per collective id: what its wait step repeats.
  struct Issued {
    int layer;
    LinearOrdinal linear;
    std::string_view op;
    bool waited;
  };
  std::vector<Issued> issued_;
  // issued_'s buffer between visits on this thread (the model's search visits thousands of
  // schedules of up to millions of collectives: growing it anew each time was a tenth of a visit).
  static thread_local std::vector<Issued> spare_issued_;
  // Gathers.
  std::vector<Request> gathers_;
  std::vector<int> gather_slot_, gather_id_;
  std::vector<bool> gather_issued_, gather_held_;
  std::size_t cursor_ = 0;
  // dW ring.
  std::vector<int> dw_readers_;
  std::size_t dw_next_ = 0;
  int dw_taken_ = kNone;
  std::vector<int> last_scatter_;
  // Buckets.
  BucketSlot head_;
  std::vector<BucketSlot> ring_;
  std::size_t ring_next_ = 0;
  std::vector<int> current_, first_;
  std::vector<int> bucket_deps_;
};

thread_local std::vector<Generator::Issued> Generator::spare_issued_;

}  // namespace

ScheduleCounts schedule_counts(const GptShape& m, const GptPlanOptions& o) {
  ScheduleCounts c;
  c.micro_steps = static_cast<int>(micro_steps(o));
  if (o.grid.gz > 1)  // every layer's block when cached, else the ring; + the LM head's
    c.gathered_slots = o.cache_weights ? static_cast<int>(4 * m.layers + 1)
                                       : (o.recompute ? 4 : 1) + (o.oag ? 1 : 0) + 1;
  c.dw_slots = dw_slots(m, o);
  c.bucket_slots = gradients_sharded(o) ? grad_bucket_slots(o) + 1 : 0;
  return c;
}

ScheduleCounts visit_gpt_schedule(const GptShape& m, const GptPlanOptions& o,
                                  StepVisitor& visitor) {
  validate_gpt_plan(m, o);
  return Generator(m, o, visitor).run();
}

GptSchedule gpt_schedule(const GptShape& m, const GptPlanOptions& o) {
  struct Collect final : StepVisitor {
    GptSchedule out;
    void step(const Step& s, const CollOp* issued) override {
      out.steps.push_back(s);
      if (issued) out.collectives.push_back(*issued);
    }
  } c;
  static_cast<ScheduleCounts&>(c.out) = visit_gpt_schedule(m, o, c);
  return std::move(c.out);
}

}  // namespace ovb
