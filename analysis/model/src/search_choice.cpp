// The plan variant chosen per grid and order (see search_choice.hpp). The winner is what
// preferred() picks over the variants in plan_variants() order: the fastest that fits, a tie
// kept by the earlier variant; if none fits, the one that needs least memory. The pruned path
// finds the same winner while replaying few variants:
//  - memory comes first: when some variant fits, those that do not are never replayed; when none
//    fits, only the smallest is (its time is printed, not compared);
//  - a variant is replayed only when a lower bound of its iteration can beat the best so far:
//    first its compute time (no collective list needed), then its compute time plus the
//    communication that blocks the compute stream (blocking_comm_us(), which without overlap
//    flags is the iteration itself); with tp (sliced GEMMs, rated per slice) the compute part of
//    both bounds is 0, so a tp variant is only ruled out by its blocking communication or its
//    replay's give-up;
//  - the variant with the lowest tighter bound is replayed first (without overlap flags it is
//    the winner), then those that their bounds do not rule out, from the lowest tighter bound up;
//  - a replay gives up once its clock passes the best so far (simulate(), give_up_at_us);
//  - the collective list of a variant is built only when first needed, and costed once per order;
//  - on a grid of several orders a variant's schedule is compiled once and replayed per order,
//    an order whose collective costs and links equal an earlier one's reusing its replay
//    (order_replays.hpp), within a budget of steps held (beyond it, simulate()).
#include "search_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "order_replays.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/plan_comm.hpp"

namespace ovb::model {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The steps the compiled schedules of one grid's variants may hold, 4 bytes each: 64 MiB.
constexpr std::size_t kCompiledStepsBudget = std::size_t{1} << 24;

// A variant of the grid: what does not depend on the X/Y/Z order, built once.
struct Variant {
  GptPlanOptions options;
  GptMemory memory;
  double memory_bytes = 0;
  bool fits = false;
  std::optional<ComputeTerms> compute;
  std::optional<PlanComm> comm;
  std::size_t costed_for = static_cast<std::size_t>(-1);  // the order comm is costed for
  OrderReplays replays;                                   // on a grid of several orders
};

class Chooser {
 public:
  // exhaustive: every replay is simulate()'s (the reference keeps to the replay of the visit).
  Chooser(const GptShape& m, const std::vector<GptPlanOptions>& variants,
          const std::vector<GridShape>& orders, const Machine& mc, double limit, bool exhaustive)
      : m_(m), orders_(orders), mc_(mc), compiled_(!exhaustive && orders.size() > 1) {
    for (const GptPlanOptions& v : variants) {
      Variant x;
      x.options = v;
      x.memory = gpt_memory(m, v);
      x.memory_bytes = x.memory.total();
      x.fits = x.memory_bytes <= limit;
      vs_.push_back(std::move(x));
    }
  }

  std::size_t size() const { return vs_.size(); }
  const Variant& operator[](std::size_t i) const { return vs_[i]; }

  // Lower bounds of variant i's iteration: compute alone (any order), and compute plus blocking
  // communication on order k.
  double compute_bound_us(std::size_t i) { return compute_lower_us(i) * margin(i); }
  double bound_us(std::size_t i, std::size_t k) {
    const double comm = blocking_comm_us(comm_on(i, k), vs_[i].options);
    return (compute_lower_us(i) + comm) * margin(i);
  }

  Timeline replay(std::size_t i, std::size_t k, double give_up_at_us) {
    const PlanComm& pc = comm_on(i, k);
    GptPlanOptions o = vs_[i].options;
    o.grid = orders_[k];
    if (!compiled_) return simulate(m_, compute(i), pc, o, mc_, give_up_at_us);
    return vs_[i].replays.replay(m_, compute(i), pc, o, mc_, give_up_at_us, budget_steps_);
  }

  Candidate candidate(std::size_t i, std::size_t k, Timeline tl) const {
    const Variant& v = vs_[i];
    Candidate c;
    c.grid = orders_[k];
    c.options = v.options;
    c.options.grid = orders_[k];
    c.timeline = std::move(tl);
    c.memory_bytes = v.memory_bytes;
    c.memory = v.memory;
    c.fits = v.fits;
    return c;
  }

 private:
  const ComputeTerms& compute(std::size_t i) {
    Variant& v = vs_[i];
    if (!v.compute) v.compute = compute_terms(m_, v.options, mc_);
    return *v.compute;
  }

  // The compute the replay spends at least. With tp the replay runs each GEMM with an output
  // all-reduce as row slices, each at its own shape's rate, which an interpolated GEMM table may
  // rate faster than the whole GEMM: no bound from the whole-GEMM terms, 0.
  double compute_lower_us(std::size_t i) {
    if (vs_[i].options.otp) return 0;
    return compute(i).total_us(m_.layers, vs_[i].options.recompute);
  }

  const PlanComm& comm_on(std::size_t i, std::size_t k) {
    Variant& v = vs_[i];
    if (!v.comm) v.comm = plan_comm_uncosted(m_, v.options);
    if (v.costed_for != k) recost(*v.comm, mc_, orders_[k]);
    v.costed_for = k;
    return *v.comm;
  }

  // The bounds are sums of the same terms as the replay's clock, added in another order: each
  // of the replay's additions to its clock may round it down by one part in 2^53 of the sum.
  // About 110 additions per layer and micro-step at most (forward, recomputed forward, backward,
  // each wait adding two), counted as 256, and 1024 for the head, the step and the bound's own
  // sums: the margin covers their rounding.
  double margin(std::size_t i) const {
    const double additions = static_cast<double>(micro_steps(vs_[i].options)) *
                                 static_cast<double>(m_.layers + 2) * 256 +
                             1024;
    return 1 - additions * 2.3e-16;
  }

  const GptShape& m_;
  const std::vector<GridShape>& orders_;
  const Machine& mc_;
  std::vector<Variant> vs_;
  bool compiled_;  // replays through each variant's OrderReplays
  std::size_t budget_steps_ = kCompiledStepsBudget;
};

// Every variant replayed in full, the winner by preferred() in plan_variants() order.
Candidate exhaustive_choice(Chooser& ch, std::size_t k) {
  std::optional<Candidate> best;
  for (std::size_t i = 0; i < ch.size(); ++i) {
    Candidate c = ch.candidate(i, k, ch.replay(i, k, kInf));
    if (!best || preferred(c.fits, c.timeline.iteration_us, c.memory_bytes, best->fits,
                           best->timeline.iteration_us, best->memory_bytes))
      best = std::move(c);
  }
  return std::move(*best);
}

// The fastest of the fitting variants `fit` (sorted by compute bound `bound`) on order k. Returns
// the winner's index, its timeline in `out`.
std::size_t fastest_fitting(Chooser& ch, const std::vector<std::size_t>& fit,
                            const std::vector<double>& bound, std::size_t k, Timeline& out) {
  std::vector<double> tight(fit.size(), -1);  // the tighter bounds on this order, when computed
  auto tight_of = [&](std::size_t j) {
    if (tight[j] < 0) tight[j] = ch.bound_us(fit[j], k);
    return tight[j];
  };
  // Replayed first: the lowest tighter bound (none with a higher compute bound has a lower one).
  std::size_t lowest = 0;
  for (std::size_t j = 0; j < fit.size() && bound[j] <= tight_of(lowest); ++j)
    if (tight_of(j) < tight_of(lowest)) lowest = j;
  std::size_t best = fit[lowest];
  out = ch.replay(best, k, kInf);
  double best_us = out.iteration_us;
  // Whether a variant with this lower bound can still win (an earlier variant wins a tie).
  auto can_win = [&](double lower_us, std::size_t i) {
    return lower_us < best_us || (lower_us == best_us && i < best);
  };
  // The others that their bounds do not rule out, replayed from the lowest tighter bound up.
  std::vector<std::pair<double, std::size_t>> todo;
  for (std::size_t j = 0; j < fit.size(); ++j) {
    if (j == lowest) continue;
    if (!can_win(bound[j], fit[j])) break;  // sorted: none after it can win either
    if (can_win(tight_of(j), fit[j])) todo.emplace_back(tight_of(j), fit[j]);
  }
  std::sort(todo.begin(), todo.end());
  for (const auto& [b, i] : todo) {
    if (!can_win(b, i)) continue;
    // The replay gives up once its clock reaches a time at which it can no longer win.
    Timeline tl = ch.replay(i, k, i < best ? std::nextafter(best_us, kInf) : best_us);
    if (can_win(tl.iteration_us, i)) {
      best = i;
      best_us = tl.iteration_us;
      out = std::move(tl);
    }
  }
  return best;
}

}  // namespace

std::vector<Candidate> choose_per_order(const GptShape& m,
                                        const std::vector<GptPlanOptions>& variants,
                                        const std::vector<GridShape>& orders, const Machine& mc,
                                        double memory_limit_bytes, bool exhaustive) {
  Chooser ch(m, variants, orders, mc, memory_limit_bytes, exhaustive);
  std::vector<Candidate> out;
  if (exhaustive) {
    for (std::size_t k = 0; k < orders.size(); ++k) out.push_back(exhaustive_choice(ch, k));
    return out;
  }
  std::vector<std::size_t> fit;
  std::size_t smallest = 0;
  for (std::size_t i = 0; i < ch.size(); ++i) {
    if (ch[i].fits) fit.push_back(i);
    if (ch[i].memory_bytes < ch[smallest].memory_bytes) smallest = i;
  }
  if (fit.empty()) {  // none fits: the smallest stands for every order
    for (std::size_t k = 0; k < orders.size(); ++k)
      out.push_back(ch.candidate(smallest, k, ch.replay(smallest, k, kInf)));
    return out;
  }
  std::vector<double> bound_of(ch.size());
  for (std::size_t i : fit) bound_of[i] = ch.compute_bound_us(i);
  std::stable_sort(fit.begin(), fit.end(),
                   [&](std::size_t a, std::size_t b) { return bound_of[a] < bound_of[b]; });
  std::vector<double> bound;
  for (std::size_t i : fit) bound.push_back(bound_of[i]);
  for (std::size_t k = 0; k < orders.size(); ++k) {
    Timeline tl;
    const std::size_t best = fastest_fitting(ch, fit, bound, k, tl);
    out.push_back(ch.candidate(best, k, std::move(tl)));
  }
  return out;
}

}  // namespace ovb::model
