// Cutting a trace to its steady-state iterations (see steady_state.hpp).
#include "steady_state.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "ovb/error.hpp"
#include "ovb/timing_stats.hpp"

namespace ovb::trace {

std::vector<RangeEvent> iteration_ranges(const RankTrace& t) {
  const auto& ranges = t.gpu_ranges.empty() ? t.cpu_ranges : t.gpu_ranges;
  std::vector<RangeEvent> iters;
  for (const RangeEvent& e : ranges)
    if (t.range_categories[e.name] == kIterationCategory) iters.push_back(e);
  std::stable_sort(iters.begin(), iters.end(), [](const RangeEvent& a, const RangeEvent& b) {
    return a.begin_ns < b.begin_ns;
  });
  return iters;
}

SteadyState find_steady_state(const RankTrace& t, int warmup) {
  const std::vector<RangeEvent> iters = iteration_ranges(t);
  SteadyState s;
  s.iterations = static_cast<int>(iters.size());
  if (iters.empty()) return s;
  s.warmup = warmup < 0 ? stats::default_warmup(s.iterations) : warmup;
  if (s.warmup >= s.iterations)
    throw UsageError(t.path + ": --warmup " + std::to_string(s.warmup) + " leaves none of its " +
                     std::to_string(s.iterations) + " iterations to analyse");
  s.begin_ns = iters[static_cast<std::size_t>(s.warmup)].begin_ns;
  for (std::size_t i = static_cast<std::size_t>(s.warmup); i < iters.size(); ++i)
    s.end_ns = std::max(s.end_ns, iters[i].end_ns);
  return s;
}

std::optional<ChosenIteration> median_iteration(const RankTrace& t) {
  const std::vector<RangeEvent> iters = iteration_ranges(t);
  if (iters.empty()) return std::nullopt;
  ChosenIteration c;
  c.window = find_steady_state(t);
  const auto kept = std::span(iters).subspan(static_cast<std::size_t>(c.window.warmup));
  std::vector<std::int64_t> durations;
  for (const RangeEvent& e : kept) durations.push_back(e.end_ns - e.begin_ns);
  // Twice the median, in integers: with an even count the two middle iterations are equally near
  // the median, and only exact arithmetic makes the earlier one win every time.
  std::vector<std::int64_t> sorted = durations;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const std::int64_t median2 = n % 2 ? 2 * sorted[n / 2] : sorted[n / 2 - 1] + sorted[n / 2];
  c.median_ns = static_cast<double>(median2) / 2;
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (const std::int64_t d = std::abs(2 * durations[i] - median2); d < best) {
      best = d;
      c.index = c.window.warmup + static_cast<int>(i);
      c.begin_ns = kept[i].begin_ns;
      c.end_ns = kept[i].end_ns;
    }
  return c;
}

RankTrace restrict_to(RankTrace t, const SteadyState& s) {
  if (s.iterations == 0) return t;
  auto inside = [&](std::int64_t b) { return b >= s.begin_ns && b < s.end_ns; };
  std::erase_if(t.activity, [&](const ActivityEvent& a) { return !inside(a.begin_ns); });
  std::erase_if(t.cpu_ranges, [&](const RangeEvent& e) { return !inside(e.begin_ns); });
  std::erase_if(t.gpu_ranges, [&](const RangeEvent& e) { return !inside(e.begin_ns); });
  return t;
}

}  // namespace ovb::trace
