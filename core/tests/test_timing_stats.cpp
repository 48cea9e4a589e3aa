// The warm-up rule and percentiles of timed figures against hand-computed values (docs/metrics.md,
// "Timed figures"); analysis/tests/test_metrics_parity.py pins the Python twin to the same ones.
#include <gtest/gtest.h>

#include <vector>

#include "ovb/error.hpp"
#include "ovb/timing_stats.hpp"

namespace s = ovb::stats;

TEST(TimingStats, WarmupRule) {
  // max(3, ceil(n/10)), leaving at least one timed run; nothing to leave out of 0 or 1 run.
  EXPECT_EQ(s::default_warmup(0), 0);
  EXPECT_EQ(s::default_warmup(1), 0);
  EXPECT_EQ(s::default_warmup(2), 1);
  EXPECT_EQ(s::default_warmup(3), 2);
  EXPECT_EQ(s::default_warmup(4), 3);
  EXPECT_EQ(s::default_warmup(23), 3);
  EXPECT_EQ(s::default_warmup(30), 3);
  EXPECT_EQ(s::default_warmup(31), 4);
  EXPECT_EQ(s::default_warmup(100), 10);
  EXPECT_EQ(s::default_warmup(101), 11);
  EXPECT_EQ(s::default_runs(), 23);  // 23 - 3 = 20 = kMinTimedSamples
  EXPECT_EQ(s::kMinTimedSamples, 20);
}

TEST(TimingStats, PercentilesInterpolateBetweenOrderStatistics) {
  // 1..10 in scrambled order; position (n-1)q/100: p10 at 0.9 -> 1.9, p50 at 4.5 -> 5.5,
  // p90 at 8.1 -> 9.1.
  const std::vector<double> v{7, 3, 10, 1, 5, 9, 2, 8, 6, 4};
  EXPECT_DOUBLE_EQ(s::percentile(v, 10), 1.9);
  EXPECT_DOUBLE_EQ(s::percentile(v, 50), 5.5);
  EXPECT_DOUBLE_EQ(s::percentile(v, 90), 9.1);
  EXPECT_DOUBLE_EQ(s::percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(s::percentile(v, 100), 10);
  EXPECT_DOUBLE_EQ(s::percentile({4.25}, 90), 4.25);
  EXPECT_THROW(s::percentile({}, 50), ovb::Error);
  EXPECT_THROW(s::percentile(v, 101), ovb::Error);
  EXPECT_THROW(s::percentile(v, -1), ovb::Error);
}

TEST(TimingStats, SummaryLeavesOutTheWarmup) {
  // 23 runs: three slow warm-up runs, then 1..20 ms. Default warm-up 3 leaves 1..20:
  // p10 at 1.9 -> 2.9, p50 at 9.5 -> 10.5, p90 at 17.1 -> 18.1.
  std::vector<double> t{325, 50, 40};
  for (int i = 1; i <= 20; ++i) t.push_back(i);
  const s::TimingSummary d = s::summarize_ms(t);
  EXPECT_EQ(d.warmup, 3);
  EXPECT_EQ(d.iterations_timed, 20);
  EXPECT_DOUBLE_EQ(d.p10_ms, 2.9);
  EXPECT_DOUBLE_EQ(d.p50_ms, 10.5);
  EXPECT_DOUBLE_EQ(d.p90_ms, 18.1);
  const nlohmann::json j = s::to_json(d);
  EXPECT_EQ(j["iterations_timed"], 20);
  EXPECT_EQ(j["enough_samples"], true);
  EXPECT_DOUBLE_EQ(j["p50_ms"].get<double>(), 10.5);

  // An explicit warm-up of 1 keeps two slow runs (50, 40): of 22 values the median is at
  // position 10.5, between 11 and 12 -> 11.5, and p90 at 18.9 -> 19.9.
  const s::TimingSummary e = s::summarize_ms(t, 1);
  EXPECT_EQ(e.warmup, 1);
  EXPECT_EQ(e.iterations_timed, 22);
  EXPECT_EQ(s::to_json(e)["enough_samples"], true);
  EXPECT_DOUBLE_EQ(e.p50_ms, 11.5);
  EXPECT_DOUBLE_EQ(e.p90_ms, 19.9);

  // Too few samples are reported as such, not hidden.
  EXPECT_EQ(s::to_json(s::summarize_ms({5, 1, 2, 3}))["enough_samples"], false);
  EXPECT_THROW(s::summarize_ms({1, 2}, 2), ovb::Error);
  EXPECT_THROW(s::summarize_ms({}), ovb::Error);
}
