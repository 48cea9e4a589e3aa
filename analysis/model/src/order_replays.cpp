// A variant's replays on the orders of its grid (see order_replays.hpp).
#include "order_replays.hpp"

#include <algorithm>
#include <limits>

namespace ovb::model {

namespace {

bool same(const std::vector<LinkUse>& a, const std::vector<LinkUse>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const LinkUse& x, const LinkUse& y) {
    return x.us == y.us && x.latency_us == y.latency_us && x.link == y.link && x.share == y.share;
  });
}

}  // namespace

Timeline OrderReplays::replay(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                              const GptPlanOptions& o, const Machine& mc, double give_up_at_us,
                              std::size_t& budget_steps) {
  if (nothing_overlaps(pc, o)) return simulate(m, ct, pc, o, mc, give_up_at_us);  // a sum
  if (!compiled_ && !too_large_) {
    compiled_ = compile_schedule(m, ct, pc, o, mc, budget_steps);
    too_large_ = !compiled_;
    if (compiled_) budget_steps -= compiled_->steps.size();
  }
  if (too_large_) return simulate(m, ct, pc, o, mc, give_up_at_us);
  std::vector<LinkUse> use = price_collectives(*compiled_, m, ct, pc, o, mc);
  for (Done& d : done_) {
    if (!same(d.collective_use, use)) continue;
    if (d.timeline.iteration_us < d.give_up_at_us || give_up_at_us <= d.give_up_at_us) {
      Timeline t = d.timeline;  // finished, or given up at a time no later than this one
      if (t.iteration_us >= give_up_at_us) t.iteration_us = std::numeric_limits<double>::infinity();
      return t;
    }
    d.timeline = replay_compiled(*compiled_, use, mc, give_up_at_us);  // gave up too early
    d.give_up_at_us = give_up_at_us;
    return d.timeline;
  }
  done_.push_back({use, replay_compiled(*compiled_, use, mc, give_up_at_us), give_up_at_us});
  return done_.back().timeline;
}

}  // namespace ovb::model
