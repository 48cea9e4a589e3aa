// The replays of one plan variant on the X/Y/Z orders of its grid (search_choice.cpp): the same
// Timeline as simulate() on each order, for less. The variant's schedule is compiled once
// (compiled_schedule.hpp) and replayed with each order's collective costs; an order whose costs
// and link uses equal, bit for bit, those of an order already replayed has that replay's result
// (the replay is a function of the steps and those), cut by the new give-up time:
//  - a finished replay of time t is t, or infinity when t >= the new give_up_at_us;
//  - one that gave up at g (so t >= g) is infinity for give_up_at_us <= g; else it is replayed.
// A schedule longer than the caller's budget of steps is not compiled: simulate() each time; so is
// a plan in which nothing overlaps (simulate() sums its terms, no replay).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "compiled_schedule.hpp"

namespace ovb::model {

class OrderReplays {
 public:
  // simulate(m, ct, pc, o, mc, give_up_at_us), pc costed on o.grid (every call: the same m, ct,
  // o but for o.grid's order, and mc). budget_steps: what the caller still lets compiled schedules
  // hold; a compilation takes its steps from it.
  Timeline replay(const GptShape& m, const ComputeTerms& ct, const PlanComm& pc,
                  const GptPlanOptions& o, const Machine& mc, double give_up_at_us,
                  std::size_t& budget_steps);

 private:
  struct Done {
    std::vector<LinkUse> collective_use;
    Timeline timeline;
    double give_up_at_us;
  };
  std::optional<CompiledSchedule> compiled_;
  bool too_large_ = false;  // longer than the budget when first compiled
  std::vector<Done> done_;
};

}  // namespace ovb::model
