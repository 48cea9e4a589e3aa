// Timed figures, defined once: which runs are warm-up, how many timed samples a figure needs, and
// its percentiles (p10/p50/p90). Every timed figure of the suite (microbenchmarks, gpt4d, trace
// breakdowns) goes through here; analysis/ovb_analysis/stats.py is the Python twin, pinned to the
// same numbers by analysis/tests/test_metrics_parity.py. See docs/metrics.md ("Timed figures").
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace ovb::stats {

// A figure quoted from fewer timed samples than this is flagged (defaults give at least this many).
inline constexpr int kMinTimedSamples = 20;

// The warm-up rule: of n runs in sequence, the first max(3, ceil(n/10)) are warm-up (lazy module
// loading, allocator growth, clocks ramping), but at least one run is always left timed; n <= 1:
// none. A harness that warms up before its timed loop runs this many untimed runs instead.
int default_warmup(int n);

// Runs to do so that kMinTimedSamples remain after the warm-up rule: the smallest n with
// n - default_warmup(n) >= kMinTimedSamples (23).
int default_runs();

// Percentile q in [0, 100] by linear interpolation between order statistics (numpy's default):
// position (n-1)*q/100 in the sorted values. Throws Error for an empty list or q outside [0, 100].
double percentile(std::vector<double> values, double q);

// The timed part of a sequence of run times, in milliseconds.
struct TimingSummary {
  int warmup = 0;            // runs left out at the start
  int iterations_timed = 0;  // samples the percentiles are over
  double p10_ms = 0, p50_ms = 0, p90_ms = 0;
};

// Leaves out the first `warmup` of times_ms (warmup < 0: default_warmup(n)) and summarises the
// rest. Throws Error when warmup leaves no sample.
TimingSummary summarize_ms(const std::vector<double>& times_ms, int warmup = -1);

// {"warmup", "iterations_timed", "p10_ms", "p50_ms", "p90_ms", "enough_samples"}: the result
// fields; enough_samples is iterations_timed >= kMinTimedSamples.
nlohmann::json to_json(const TimingSummary& s);

}  // namespace ovb::stats
