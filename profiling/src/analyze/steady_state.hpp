// Breakdowns from steady-state iterations only: a trace whose iterations are marked (ranges of
// category "iteration", which gpt4d writes around each training iteration) is cut to the
// iterations left after the warm-up rule of ovb/timing_stats.hpp, so that a first iteration of
// module loading and allocation (hundreds of ms on a GPU) does not pass for idle time or cost of
// the steady state. A trace without marks is analysed whole, and the report says so.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rank_trace.hpp"

namespace ovb::trace {

inline constexpr const char* kIterationCategory = "iteration";

struct SteadyState {
  int iterations = 0;                     // iteration ranges found (0: the trace marks none)
  int warmup = 0;                         // left out at the start
  std::int64_t begin_ns = 0, end_ns = 0;  // from the first kept iteration's start to the last's end
  int analyzed() const { return iterations - warmup; }
};

// The iteration ranges of t (GPU spans when it has them, else CPU ranges), in time order.
std::vector<RangeEvent> iteration_ranges(const RankTrace& t);

// The iteration ranges of t and the window after `warmup` of them (warmup < 0:
// stats::default_warmup(iterations)). Throws UsageError when warmup leaves no iteration.
SteadyState find_steady_state(const RankTrace& t, int warmup = -1);

// One steady-state iteration to stand for the run: of the iterations the warm-up rule keeps, the
// one whose duration is nearest their median (the middle duration, or the mean of the two middle
// ones), compared exactly in nanoseconds, the earliest in time of equally near ones (of an even
// count the two middle ones are always equally near). `ovb-trace merge` aligns a predicted
// iteration with it, and `ovb-analysis timeline` (plots/timeline.py) draws the same one. nullopt
// when t marks no iteration.
struct ChosenIteration {
  int index = 0;       // among all marked iterations, in time order, from 0
  SteadyState window;  // the iterations, the warm-up left out and the kept window
  std::int64_t begin_ns = 0, end_ns = 0;
  double median_ns = 0;  // median duration of the kept iterations
};
std::optional<ChosenIteration> median_iteration(const RankTrace& t);

// t restricted to events that begin inside the window (unchanged when no iterations are marked).
RankTrace restrict_to(RankTrace t, const SteadyState& s);

}  // namespace ovb::trace
