// The schedule of one plan variant compiled for replays on several X/Y/Z orders of its grid (the
// search replays a variant on each order, search_choice.cpp): the generator runs once, each
// compute step is priced once (KernelCosts, the replay's own costs), the steps that move no clock
// are dropped (slot steps and compute steps of no time: the replay does nothing for them), and
// each issue names one of the few distinct collectives of the schedule, priced per order.
// replay_compiled() runs the replay's timing rules (timeline.cpp) over it: the Timeline of
// simulate() on that order, bit for bit (TimelineCompiled.* compares them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ovb/gpt_schedule.hpp"
#include "ovb/model/link_share.hpp"
#include "ovb/model/timeline.hpp"

namespace ovb::model {

struct CompiledSchedule {
  // One word per step: its kind in the top two bits, an index below. compute: into compute_us;
  // dep: a collective id the next issue starts after; issue: into collectives (the collective's
  // id is its rank among the issues); wait: a collective id.
  enum Kind : std::uint32_t { compute = 0, dep = 1, issue = 2, wait = 3 };
  static constexpr int kKindShift = 30;
  static constexpr std::uint32_t kIndexMask = (1u << kKindShift) - 1;

  struct Collective {
    CollOp op;  // the first issue of this (group, kind, count, dtype, group size) on this stream
    StreamId stream = StreamId::tp;
  };

  std::vector<std::uint32_t> steps;
  std::vector<double> compute_us;       // distinct compute costs, in order of first use
  std::vector<Collective> collectives;  // distinct collectives, in order of first issue
};

// gpt_schedule(m, o) compiled with ct's compute costs (pc: the collective table KernelCosts is
// built with; the collectives are priced by price_collectives()). nullopt when it has more than
// max_steps steps kept: the caller replays with simulate() instead (a compiled schedule holds
// 4 bytes per step).
std::optional<CompiledSchedule> compile_schedule(
    const GptShape& m, const ComputeTerms& ct, const PlanComm& pc, const GptPlanOptions& o,
    const Machine& mc, std::size_t max_steps = std::numeric_limits<std::size_t>::max());

// The cost and link use of each of cs.collectives on o.grid, pc costed on o.grid: what simulate()
// charges (KernelCosts::collective()).
std::vector<LinkUse> price_collectives(const CompiledSchedule& cs, const GptShape& m,
                                       const ComputeTerms& ct, const PlanComm& pc,
                                       const GptPlanOptions& o, const Machine& mc);

// The replay of cs with its collectives at collective_use (price_collectives()); give_up_at_us as
// simulate()'s. Defined in timeline.cpp, with the replay's timing rules.
Timeline replay_compiled(const CompiledSchedule& cs, const std::vector<LinkUse>& collective_use,
                         const Machine& mc,
                         double give_up_at_us = std::numeric_limits<double>::infinity());

}  // namespace ovb::model
