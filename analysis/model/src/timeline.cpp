// The overlap term: a replay of the iteration's schedule on a compute stream and three
// communication streams (see timeline.hpp). The schedule is visited, not stored: the replay keeps
// one record per collective and small tables of costs by op name, GEMM shape and collective.
#include "ovb/model/timeline.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "compiled_schedule.hpp"
#include "kernel_cost.hpp"
#include "ovb/error.hpp"

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

struct GiveUp {};  // thrown out of the visit once the replay cannot end before give_up_at_us

// A collective of the replay, by id: what its spans say. Its times are the links' (LinkShare).
struct Coll {
  Group group = Group::x;
  CollKind kind = CollKind::all_reduce;
  StreamId stream = StreamId::tp;
  Phase phase = Phase::forward;
  int micro_step = 0, layer = -1;
  std::string_view op;
};

// The replay's timing rules (timeline.hpp), fed priced steps: by PricedVisit below as the
// generator makes them, or from a compiled schedule (replay_compiled()).
class Replay {
 public:
  Replay(const Machine& mc, double give_up_at_us, std::vector<Span>* spans, Timeline& out)
      : mc_(mc), give_up_(give_up_at_us), spans_(spans), out_(out) {
    colls_.clear();
    links_.clear();
  }

  // A wait for another collective takes no compute time either.
  void wait(int id) {
    if (held_ == id) start_held(true);
    waits_.push_back(id);
  }

  void finish() {
    if (held_ >= 0) start_held(false);
    flush_waits();
    if (t_ >= give_up_) throw GiveUp{};
    out_.iteration_us = t_;
    if (spans_) collective_spans();
  }

  // A compute step of `us` (s: where it is, for its span).
  void compute(const Step& s, double us) {
    if (held_ >= 0 && us > 0) start_held(false);
    if (us > 0) flush_waits();  // a step of no time does not end a run of waits
    if (spans_ && us > 0) {     // a step of no time is no interval
      spans_->push_back(span(StreamId::compute, s.op, t_, t_ + us, s.phase, s.micro_step, s.layer));
      last_compute_ = spans_->size() - 1;
    }
    t_ += us;
    out_.compute_us += us;
    computed_since_wait_us_ += us;
    if (t_ >= give_up_) throw GiveUp{};
  }

  // An issue is started when a later step shows whether the compute stream waits for it before
  // any compute time passes (then it runs alone) or works under it (then it is stretched by
  // comm_slowdown): its wait, or a compute step that takes time, or another issue. Until then the
  // links are not run (every flush_waits() comes after it), so its start is decided by the time
  // known at its issue and its predecessors; its end by the collectives beside it (LinkShare).
  // `c`: the collective's group, kind, stream and where it is issued; `id`: its id (issue order).
  void issue(const Coll& c, std::span<const int> deps, const LinkUse& use, int id) {
    if (held_ >= 0) start_held(false);
    flush_waits();
    if (static_cast<std::size_t>(id) != colls_.size())
      throw Error("ovb-model: the schedule's collectives are not numbered in issue order");
    colls_.push_back(c);
    held_ = id;
    held_ready_ = t_;
    held_deps_.assign(deps.begin(), deps.end());
    held_use_ = use;
    const int g = static_cast<int>(c.group), k = static_cast<int>(c.kind);
    out_.comm_us[g][k] += use.us;
    out_.count[g][k] += 1;
  }

 private:
  void start_held(bool alone) {
    const Coll& c = colls_[static_cast<std::size_t>(held_)];
    held_ = -1;
    double ready = held_ready_;
    if (alone && computed_since_wait_us_ > 0) ready += charged_blocking_wait();
    links_.add(static_cast<int>(c.stream), ready, held_deps_, held_use_,
               alone ? 1 : 1 + std::max(0.0, mc_.comm_slowdown));
  }

  // Every collective's span on its stream, once the iteration is replayed.
  void collective_spans() {
    for (std::size_t id = 0; id < colls_.size(); ++id) {
      const Coll& c = colls_[id];
      const double end = links_.end(static_cast<int>(id));
      const double start = links_.start(static_cast<int>(id));
      if (end <= start) continue;
      Span sp = span(c.stream, c.op, start, end, c.phase, c.micro_step, c.layer);
      sp.comm = true;
      sp.group = c.group;
      sp.kind = c.kind;
      spans_->push_back(sp);
    }
  }

  // A collective waited for at its issue, with compute time since the compute stream last waited:
  // on shared cores its partners are still computing or descheduled, so it starts (at the
  // earliest) the machine's blocking wait for that much compute after its issue.
  // The delay is counted from its issue: a collective that its stream or its dependencies hold
  // back longer anyway absorbs it (it is then charged, but waits no longer).
  double charged_blocking_wait() {
    const double delay = std::max(0.0, mc_.blocking_wait_us(computed_since_wait_us_));
    if (delay <= 0) return 0;
    out_.blocking_wait_us += delay;
    out_.blocking_waits += 1;
    return delay;
  }

  // A run of waits with no compute time between them: the compute stream is first stretched by
  // what ran under each collective before the run, then waits for each in turn.
  void flush_waits() {
    if (waits_.empty()) return;
    const double t0 = t_;
    links_.run_through(t0);
    double extra = 0;
    for (int id : waits_) extra += std::max(0.0, mc_.compute_slowdown) * links_.ran_before(id, t0);
    if (extra > 0) {
      if (spans_ && last_compute_ < spans_->size() && (*spans_)[last_compute_].end_us == t_)
        (*spans_)[last_compute_].end_us += extra;  // the op that ran under the collective
      else if (spans_)
        spans_->push_back(
            span(StreamId::compute, "interference", t_, t_ + extra, Phase::forward, 0, -1));
      t_ += extra;
      out_.interference_us += extra;
    }
    for (int id : waits_) {
      const Coll& c = colls_[static_cast<std::size_t>(id)];
      const double end = links_.end(id), start = links_.start(id);
      if (end <= t_) continue;
      // All of a collective that started after the compute stream arrived and ran alone: its
      // duration exactly.
      const double exposed =
          start >= t_ && !links_.shared(id) ? (start - t_) + links_.duration(id) : end - t_;
      out_.exposed_us[static_cast<int>(c.group)][static_cast<int>(c.kind)] += exposed;
      if (spans_) {
        Span sp = span(StreamId::compute, {}, t_, end, c.phase, c.micro_step, c.layer);
        sp.name = "wait " + std::string(c.op);
        sp.comm = true;
        sp.group = c.group;
        sp.kind = c.kind;
        spans_->push_back(std::move(sp));
      }
      t_ = end;
    }
    waits_.clear();
    computed_since_wait_us_ = 0;
  }

  static Span span(StreamId stream, std::string_view name, double start, double end, Phase phase,
                   int micro_step, int layer) {
    Span s;
    s.stream = stream;
    s.name = std::string(name);
    s.start_us = start;
    s.end_us = end;
    s.phase = phase;
    s.micro_step = micro_step;
    s.layer = layer;
    return s;
  }

  const Machine& mc_;
  double give_up_;
  std::vector<Span>* spans_;
  Timeline& out_;
  double t_ = 0;
  // One record per collective, reused from one replay to the next (a search replays thousands).
  static thread_local std::vector<Coll> colls_;
  static thread_local LinkShare links_;  // the collectives' times
  std::vector<int> waits_;               // the run of waits not yet applied
  int held_ = -1;                        // the issue not yet started, issued at held_ready_
  double held_ready_ = 0;
  std::vector<int> held_deps_;
  LinkUse held_use_;
  double computed_since_wait_us_ = 0;  // compute time since the compute stream last waited
  std::size_t last_compute_ = static_cast<std::size_t>(-1);
};

thread_local std::vector<Coll> Replay::colls_;
thread_local LinkShare Replay::links_;

// The generator's steps priced as they come (KernelCosts) and fed to the replay; slot steps take
// no time.
class PricedVisit final : public StepVisitor {
 public:
  PricedVisit(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
              const GptPlanOptions& o, const Machine& mc, Replay& replay)
      : costs_(m, ct, pc, o, mc), replay_(replay) {}

  void step(const Step& s, const CollOp* issued) override {
    switch (s.kind) {
      case StepKind::compute: return replay_.compute(s, costs_.compute_us(s));
      case StepKind::issue: {
        const CollOp& op = *issued;
        Coll c;
        c.group = op.group;
        c.kind = op.kind;
        c.stream = s.stream;
        c.phase = op.phase;
        c.micro_step = op.micro_step;
        c.layer = op.layer;
        c.op = s.op;
        return replay_.issue(c, s.deps, costs_.collective(op), s.coll);
      }
      case StepKind::wait: return replay_.wait(s.coll);
      case StepKind::slot_take:
      case StepKind::slot_release: return;  // both on the compute stream, in order: no time
    }
  }

 private:
  KernelCosts costs_;
  Replay& replay_;
};

// Whether the schedule waits for a collective of this role right after its issue under o's flags.
bool always_blocking(CollRole r, const GptPlanOptions& o) {
  switch (r) {
    case CollRole::weight_gather: return !o.oag;
    case CollRole::input_grad_reduce: return !o.oar;
    case CollRole::weight_grad_scatter:
    case CollRole::param_grad_reduce:
    case CollRole::data_grad_reduce:
    case CollRole::param_gather: return !o.ors;
    case CollRole::output_reduce: return !o.otp;  // tp: chunked under its GEMM's slices
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

bool nothing_overlaps(const PlanComm& pc, const GptPlanOptions& o) {
  bool all = true;
  for_each_slot(pc, [&](const CommSlot& s, double) { all = all && always_blocking(s.op.role, o); });
  return all;
}

namespace {

Timeline summed(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                const GptPlanOptions& o) {
  Timeline out;
  out.compute_us = ct.total_us(m.layers, o.recompute);
  double comm = 0;
  for_each_slot(pc, [&](const CommSlot& s, double mult) {
    const int g = static_cast<int>(s.cost.group), k = static_cast<int>(s.cost.kind);
    out.comm_us[g][k] += mult * s.cost.time_us;
    out.exposed_us[g][k] += mult * s.cost.time_us;
    out.count[g][k] += mult;
    comm += mult * s.cost.time_us;
  });
  out.iteration_us = out.compute_us + comm;
  return out;
}

}  // namespace

Timeline simulate(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                  const GptPlanOptions& o, const Machine& mc, double give_up_at_us,
                  std::vector<Span>* spans) {
  // The search's common case, without the replay; not on a machine with a blocking wait, which
  // the replay charges where compute precedes a blocking collective.
  if (!spans && mc.blocking_wait.empty() && nothing_overlaps(pc, o)) {
    Timeline out = summed(m, ct, pc, o);
    if (out.iteration_us >= give_up_at_us)
      out.iteration_us = std::numeric_limits<double>::infinity();
    return out;
  }
  Timeline out;
  Replay replay(mc, give_up_at_us, spans, out);
  try {
    PricedVisit visit(m, ct, pc, o, mc, replay);
    visit_gpt_schedule(m, o, visit);
    replay.finish();
  } catch (const GiveUp&) {
    out.iteration_us = std::numeric_limits<double>::infinity();
  }
  return out;
}

Timeline replay_schedule(const GptSchedule& sched, const GptShape& m, const ComputeTerms& ct,
                         const PlanComm& pc, const GptPlanOptions& o, const Machine& mc,
                         std::vector<Span>* spans) {
  Timeline out;
  Replay replay(mc, std::numeric_limits<double>::infinity(), spans, out);
  PricedVisit visit(m, ct, pc, o, mc, replay);
  for (const Step& s : sched.steps)
    visit.step(s, s.kind == StepKind::issue
                      ? &sched.collectives.at(static_cast<std::size_t>(s.coll))
                      : nullptr);
  replay.finish();
  return out;
}

Timeline replay_compiled(const CompiledSchedule& cs, const std::vector<LinkUse>& collective_use,
                         const Machine& mc, double give_up_at_us) {
  using C = CompiledSchedule;
  if (collective_use.size() != cs.collectives.size())
    throw Error("ovb-model: a compiled schedule priced with " +
                std::to_string(collective_use.size()) + " collective costs for its " +
                std::to_string(cs.collectives.size()));
  std::vector<Coll> colls(cs.collectives.size());  // what an issue of each records
  for (std::size_t i = 0; i < colls.size(); ++i) {
    colls[i].group = cs.collectives[i].op.group;
    colls[i].kind = cs.collectives[i].op.kind;
    colls[i].stream = cs.collectives[i].stream;
  }
  static const Step kNoSpan;  // no spans: where a compute step is does not matter
  Timeline out;
  Replay replay(mc, give_up_at_us, nullptr, out);
  std::vector<int> deps;
  int id = 0;
  try {
    for (const std::uint32_t word : cs.steps) {
      const std::uint32_t i = word & C::kIndexMask;
      switch (word >> C::kKindShift) {
        case C::compute: replay.compute(kNoSpan, cs.compute_us[i]); break;
        case C::dep: deps.push_back(static_cast<int>(i)); break;
        case C::issue:
          replay.issue(colls[i], deps, collective_use[i], id++);
          deps.clear();
          break;
        case C::wait: replay.wait(static_cast<int>(i)); break;
      }
    }
    replay.finish();
  } catch (const GiveUp&) {
    out.iteration_us = std::numeric_limits<double>::infinity();
  }
  return out;
}

}  // namespace ovb::model
