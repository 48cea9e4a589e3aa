// Breakdowns from steady-state iterations only: a synthetic trace whose first (warm-up) iteration
// is long and mostly idle, analysed with the warm-up rule, with an explicit warm-up, and without
// iteration marks; the median steady-state iteration. Expected numbers are worked out by hand in
// the comments.
#include <gtest/gtest.h>

#include <fstream>

#include "analyze/analysis.hpp"
#include "analyze/analysis_report.hpp"
#include "analyze/steady_state.hpp"
#include "ovb/error.hpp"
#include "test_util.hpp"

namespace {

// Five iterations: iteration 0 spans [0, 1000) us with one 100 us GEMM and 900 us idle (module
// loading, allocation); iteration k >= 1 spans [1000 + 100(k-1), +100) with an 80 us GEMM at its
// start. With `marks` false the iteration ranges are left out.
std::string write_trace(const ovb::trace::testing::TempDir& dir, bool marks) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  auto kernel = [&](double ts, double dur) {
    add(R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16", "pid": 0, "tid": 7, "ts": )" +
        std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + "}");
  };
  auto iteration = [&](double ts, double dur) {
    if (marks)
      add(R"({"ph": "X", "cat": "user_annotation", "name": "iteration", "pid": 0, "tid": 1, "ts": )" +
          std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
          R"(, "args": {"category": "iteration"}})");
  };
  iteration(0, 1000);
  kernel(0, 100);
  for (int k = 1; k <= 4; ++k) {
    const double b = 1000 + 100.0 * (k - 1);
    iteration(b, 100);
    kernel(b, 80);
  }
  const std::string path = dir.file(marks ? "marked.trace.json" : "unmarked.trace.json");
  std::ofstream(path) << R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1},)"
                      << R"( "traceEvents": [)" << ev << "]}";
  return path;
}

}  // namespace

TEST(SteadyState, WarmupRuleLeavesOutTheLongFirstIterations) {
  ovb::trace::testing::TempDir dir;
  const auto r = ovb::trace::analyze_traces({write_trace(dir, true)});
  ASSERT_EQ(r.size(), 1u);
  // 5 iterations: warm-up max(3, ceil(0.5)) = 3, so iterations 3 and 4, [1200, 1400), remain:
  // GEMMs [1200, 1280) and [1300, 1380): busy 160, span 1380 - 1200 = 180, idle 20.
  EXPECT_EQ(r[0].steady.iterations, 5);
  EXPECT_EQ(r[0].steady.warmup, 3);
  EXPECT_NEAR(r[0].overlap.busy, 160, 1e-9);
  EXPECT_NEAR(r[0].overlap.span, 180, 1e-9);
  EXPECT_NEAR(r[0].overlap.idle, 20, 1e-9);
  const auto j = ovb::trace::report_json(r, {"marked.trace.json"});
  EXPECT_EQ(j["summary"]["steady_state"]["iterations_analyzed"], 2);
  EXPECT_EQ(j["ranks"][0]["steady_state"]["warmup_excluded"], 3);
}

TEST(SteadyState, ExplicitWarmupAndUnmarkedTraces) {
  ovb::trace::testing::TempDir dir;
  // --warmup 1: iterations 1..4, [1000, 1400): busy 4 x 80 = 320, span 1380 - 1000 = 380.
  const auto one = ovb::trace::analyze_traces({write_trace(dir, true)}, nullptr, 1);
  EXPECT_NEAR(one[0].overlap.busy, 320, 1e-9);
  EXPECT_NEAR(one[0].overlap.idle, 60, 1e-9);
  // No marks: the whole trace, warm-up included: busy 100 + 320, span 1380, idle 960.
  const auto all = ovb::trace::analyze_traces({write_trace(dir, false)});
  EXPECT_EQ(all[0].steady.iterations, 0);
  EXPECT_NEAR(all[0].overlap.busy, 420, 1e-9);
  EXPECT_NEAR(all[0].overlap.idle, 960, 1e-9);
  EXPECT_TRUE(ovb::trace::report_json(all, {"x"})["summary"]["steady_state"]["iterations_analyzed"]
                  .is_null());
  // A warm-up that leaves nothing is an error naming the file, not an empty analysis.
  EXPECT_THROW(ovb::trace::analyze_traces({write_trace(dir, true)}, nullptr, 5), ovb::UsageError);
}

// median_iteration: 7 iterations, the warm-up rule leaves out 3, the kept ones last 300, 130, 110,
// 100 us (median 120: 130 and 110 equally near, the earlier, 130 at index 4, wins); unmarked: none.
TEST(SteadyState, MedianIterationTakesTheEarlierOfTwoEquallyNear) {
  ovb::trace::testing::TempDir dir;
  const std::vector<int> d = {500, 400, 400, 300, 130, 110, 100};
  std::string ev;
  int t = 0;
  for (const int us : d) {
    ev += std::string(ev.empty() ? "" : ",") +
          R"({"ph": "X", "cat": "user_annotation", "name": "iteration", "pid": 0, "tid": 1,)" +
          R"( "ts": )" + std::to_string(t) + R"(, "dur": )" + std::to_string(us) +
          R"(, "args": {"category": "iteration"}})";
    t += us;
  }
  const std::string path = dir.file("ties.trace.json");
  std::ofstream(path) << R"({"traceEvents": [)" << ev << "]}";
  const auto c = ovb::trace::median_iteration(ovb::trace::load_rank_trace(path));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 4);
  EXPECT_EQ(c->begin_ns, (500 + 400 + 400 + 300) * 1000);
  EXPECT_EQ(c->end_ns - c->begin_ns, 130'000);
  EXPECT_EQ(c->median_ns, 120'000);
  EXPECT_EQ(c->window.warmup, 3);
  EXPECT_FALSE(
      ovb::trace::median_iteration(ovb::trace::load_rank_trace(write_trace(dir, /*marks=*/false))));
}
