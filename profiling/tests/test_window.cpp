// Capture windows (which records the tracer keeps), their configuration from the environment, and
// the per-rank trace names (launcher_rank itself: core/tests/test_launch.cpp).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "capture_window.hpp"
#include "ovb/error.hpp"
#include "ovb/fake_env.hpp"
#include "rank_env.hpp"

using namespace ovb::trace;

namespace {

// A fake environment for the *_from_env functions.
using Env = ovb::test::FakeEnv;

}  // namespace

TEST(CaptureWindow, TimeWindowFromInitialisation) {
  WindowConfig c;
  c.start_s = 1e-6;  // 1000 ns
  c.duration_s = 2e-6;
  const CaptureWindow w(c, 10'000);
  EXPECT_FALSE(w.keeps(0, 10'999));
  EXPECT_TRUE(w.keeps(10'500, 11'000));  // touching the start counts
  EXPECT_TRUE(w.keeps(12'000, 12'500));
  EXPECT_TRUE(w.keeps(0, 100'000));  // spans the window
  EXPECT_FALSE(w.keeps(13'001, 14'000));
  WindowConfig open;
  const CaptureWindow to_exit(open, 5);
  EXPECT_TRUE(to_exit.keeps(5, 6));
  EXPECT_TRUE(to_exit.keeps(1'000'000'000'000, 1'000'000'000'001));
  EXPECT_FALSE(to_exit.keeps(0, 4));
}

TEST(CaptureWindow, ExplicitStartStop) {
  WindowConfig c;
  c.mode = WindowConfig::Mode::explicit_calls;
  CaptureWindow w(c, 0);
  EXPECT_FALSE(w.keeps(0, 100));  // nothing before start()
  w.open(100);
  EXPECT_TRUE(w.keeps(150, 160));
  EXPECT_TRUE(w.keeps(50, 150));  // a kernel running across the start
  w.close(200);
  EXPECT_FALSE(w.keeps(201, 300));
  w.profiler_start(300);  // other triggers do nothing in this mode
  EXPECT_FALSE(w.keeps(301, 400));
  ASSERT_EQ(w.windows().size(), 1u);
  EXPECT_EQ(w.windows()[0], std::make_pair(std::int64_t{100}, std::int64_t{200}));
}

TEST(CaptureWindow, ProfilerApiWindows) {
  WindowConfig c;
  c.mode = WindowConfig::Mode::profiler_api;
  CaptureWindow w(c, 0);
  w.profiler_start(10);
  w.profiler_stop(20);
  w.profiler_start(30);
  EXPECT_TRUE(w.keeps(12, 13));
  EXPECT_FALSE(w.keeps(21, 29));
  EXPECT_TRUE(w.keeps(1000, 2000));  // the second window is still open
  EXPECT_EQ(w.windows().size(), 2u);
}

TEST(CaptureWindow, IterationsOfAnNvtxRange) {
  WindowConfig c;
  c.mode = WindowConfig::Mode::range;
  c.range = "step";
  c.start_iter = 1;
  c.iters = 2;
  CaptureWindow w(c, 0);
  // Iterations at [0,10], [10,20], [20,30], [30,40]; other ranges nested inside do not count.
  for (int i = 0; i < 4; ++i) {
    w.range_push("step", i * 10);
    w.range_push("layer", i * 10 + 1);
    w.range_pop("layer", i * 10 + 2);
    w.range_pop("step", i * 10 + 10);
  }
  EXPECT_FALSE(w.keeps(5, 6));
  EXPECT_TRUE(w.keeps(12, 13));
  EXPECT_TRUE(w.keeps(25, 26));
  EXPECT_FALSE(w.keeps(31, 39));
  ASSERT_EQ(w.windows().size(), 1u);
  EXPECT_EQ(w.windows()[0], std::make_pair(std::int64_t{10}, std::int64_t{30}));
}

TEST(WindowConfig, FromEnvironment) {
  Env e;
  EXPECT_EQ(WindowConfig::from_env(e.fn()).mode, WindowConfig::Mode::time);
  e.vars = {{"OVB_TRACE_START_S", "2.5"}, {"OVB_TRACE_DURATION_S", "10"}};
  auto c = WindowConfig::from_env(e.fn());
  EXPECT_DOUBLE_EQ(c.start_s, 2.5);
  EXPECT_DOUBLE_EQ(c.duration_s, 10);
  e.vars = {
      {"OVB_TRACE_RANGE", "ProfilerStep"}, {"OVB_TRACE_START_ITER", "3"}, {"OVB_TRACE_ITERS", "2"}};
  c = WindowConfig::from_env(e.fn());
  EXPECT_EQ(c.mode, WindowConfig::Mode::range);
  EXPECT_EQ(c.start_iter, 3);
  EXPECT_EQ(c.iters, 2);
  e.vars = {{"OVB_TRACE_CAPTURE", "profiler_api"}};
  EXPECT_EQ(WindowConfig::from_env(e.fn()).mode, WindowConfig::Mode::profiler_api);

  auto message = [&](std::map<std::string, std::string> vars) {
    e.vars = std::move(vars);
    try {
      WindowConfig::from_env(e.fn());
    } catch (const ovb::Error& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  EXPECT_NE(message({{"OVB_TRACE_START_S", "soon"}}).find("OVB_TRACE_START_S='soon'"),
            std::string::npos);
  EXPECT_NE(message({{"OVB_TRACE_DURATION_S", "-1"}}).find("non-negative"), std::string::npos);
  EXPECT_NE(message({{"OVB_TRACE_ITERS", "2x"}}).find("OVB_TRACE_ITERS"), std::string::npos);
  EXPECT_NE(message({{"OVB_TRACE_CAPTURE", "always"}}).find("not one of"), std::string::npos);
  EXPECT_NE(message({{"OVB_TRACE_CAPTURE", "range"}}).find("needs OVB_TRACE_RANGE"),
            std::string::npos);
}

TEST(LauncherRank, OneFileNamePerRank) {
  EXPECT_EQ(rank_trace_path("out", 3), "out/rank-00003.trace.json");
  EXPECT_EQ(rank_trace_path("", 12), "./rank-00012.trace.json");
}

// mpirun (its hwloc probes the GPUs) and a GPU probe initialise CUDA under the injected tracer with
// no launcher rank; exiting after the ranks, they must not replace rank 0's trace with an empty
// one.
TEST(LauncherRank, OnlyARankOrAProcessThatRanSomethingWritesATrace) {
  EXPECT_TRUE(ovb::trace::writes_trace(/*rank_from_launcher=*/true, /*device_activity=*/false));
  EXPECT_TRUE(ovb::trace::writes_trace(true, true));
  EXPECT_TRUE(ovb::trace::writes_trace(false, true));  // a program run alone: rank-00000
  EXPECT_FALSE(ovb::trace::writes_trace(false, false));
}
