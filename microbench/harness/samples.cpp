// Timed-figure counters of the microbenchmarks (see samples.hpp).
#include "harness/samples.hpp"

namespace ovb::mb {

// Google Benchmark's default --benchmark_min_time (seconds), used when --min-time is not given.
constexpr double kGbenchDefaultMinTime = 0.5;
// Google Benchmark stops growing the iteration count here and reports whatever it has.
constexpr benchmark::IterationCount kGbenchMaxIterations = 1000000000;

void Samples::report(benchmark::State& state) const {
  if (s_.empty()) return;
  std::vector<double> ms;
  for (double v : s_) ms.push_back(v * 1e3);
  const stats::TimingSummary t = stats::summarize_ms(ms, 0);  // warm-up ran before the loop
  state.counters["iterations_timed"] = t.iterations_timed;
  state.counters["p10_ms"] = t.p10_ms;
  state.counters["p50_ms"] = t.p50_ms;
  state.counters["p90_ms"] = t.p90_ms;
}

bool is_reported_run(const benchmark::State& state, BenchEnv& env, double timed_s) {
  const CommonOptions& o = env.opts();
  const double min_time = o.min_time > 0 ? o.min_time : kGbenchDefaultMinTime;
  const bool reported = o.iterations > 0 || timed_s >= min_time ||
                        state.max_iterations >= kGbenchMaxIterations || env.prepared().reported();
  if (reported) env.prepared().set_reported();
  return reported;
}

}  // namespace ovb::mb
