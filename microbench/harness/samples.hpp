// The timed loop of every microbenchmark and its timed-figure counters: one Google Benchmark
// iteration is one timed sample, and the run Google Benchmark reports is topped up to at least
// stats::kMinTimedSamples samples (an op slower than --min-time / 20 would otherwise be reported
// from a handful), so every result carries iterations_timed, p10_ms, p50_ms and p90_ms over at
// least 20 samples (ovb/timing_stats.hpp; warm-up: the --warmup untimed runs before the loop).
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

#include "harness/env.hpp"
#include "ovb/timing_stats.hpp"

namespace ovb::mb {

class Samples {
 public:
  void add(double seconds) {
    s_.push_back(seconds);
    sum_ += seconds;
  }
  std::size_t size() const { return s_.size(); }
  double sum() const { return sum_; }
  // Counters iterations_timed, p10_ms, p50_ms, p90_ms (nothing when there is no sample).
  void report(benchmark::State& state) const;

 private:
  std::vector<double> s_;
  double sum_ = 0;
};

// Whether this call of a benchmark is the one Google Benchmark reports: fixed --iterations, or
// the measured (manual) time reached the minimum time, as Google Benchmark decides it, or a
// repetition after a reported call (run with that call's iteration count and always reported).
bool is_reported_run(const benchmark::State& state, BenchEnv& env, double timed_s);

// Runs Google Benchmark's loop with sample(true) (one timed sample, in seconds, the same value
// on every rank, e.g. the max over ranks) as each iteration's manual time, then tops the reported
// run up to kMinTimedSamples samples with sample(false). Returns every sample. The argument says
// whether the sample is one of Google Benchmark's iterations: means that must equal its
// real_time (time_us, t_overlap_us, ...) take only those.
template <class F>
Samples timed_loop(benchmark::State& state, BenchEnv& env, F&& sample) {
  Samples out;
  for (auto _ : state) {
    const double t = sample(true);
    state.SetIterationTime(t);
    out.add(t);
  }
  // Every rank decides alike: the samples are agreed values and the options are the same.
  if (!state.error_occurred() && is_reported_run(state, env, out.sum()))
    while (out.size() < static_cast<std::size_t>(stats::kMinTimedSamples)) out.add(sample(false));
  return out;
}

}  // namespace ovb::mb
