// The collective watchdog without MPI traffic: OVB_COMM_TIMEOUT_S parsing, the poll loop (a wait
// that never completes times out after the limit and calls the abort callback; one that completes
// returns), the live-object registry and abort_all. The hang itself under mpirun:
// watchdog_hang.cpp through expect_fail_within.sh. Run: ctest -R core.unit
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/watchdog.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string usage_error_of(const char* value) {
  try {
    ovb::parse_comm_timeout(value);
  } catch (const ovb::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Watchdog, ParsesSecondsAndOff) {
  EXPECT_EQ(ovb::parse_comm_timeout(nullptr), 0);
  EXPECT_EQ(ovb::parse_comm_timeout(""), 0);
  EXPECT_EQ(ovb::parse_comm_timeout("0"), 0);
  EXPECT_EQ(ovb::parse_comm_timeout("2"), 2);
  EXPECT_EQ(ovb::parse_comm_timeout("0.25"), 0.25);
  EXPECT_EQ(ovb::parse_comm_timeout("1e3"), 1000);
}

TEST(Watchdog, MalformedValueIsOneLineNamingTheVariable) {
  for (const char* bad : {"abc", "2s", " 2", "-1", "inf", "nan", "1,5", "+3"}) {
    const std::string msg = usage_error_of(bad);
    EXPECT_EQ(msg, "OVB_COMM_TIMEOUT_S='" + std::string(bad) +
                       "' is not a number of seconds >= 0 (0 or unset: no collective watchdog)")
        << bad;
  }
}

TEST(Watchdog, TimeoutIsRecordedInTheRunContext) {
  EXPECT_TRUE(ovb::is_relevant_env(ovb::kCommTimeoutVar));
  EXPECT_EQ(ovb::relevant_environment({"OVB_COMM_TIMEOUT_S=300", "HOME=/root"}),
            (nlohmann::json{{"OVB_COMM_TIMEOUT_S", "300"}}));
}

TEST(Watchdog, NeverCompletingWaitTimesOutAbortsAndThrows) {
  int polls = 0, aborts = 0;
  std::string aborted_with;
  const auto t0 = Clock::now();
  try {
    ovb::poll_until([&] { return ++polls < 0; }, "all_reduce on communicator 'x'", 0.2,
                    [&](const std::string& m) {
                      ++aborts;
                      aborted_with = m;
                    });
    FAIL() << "poll_until returned without the wait completing";
  } catch (const ovb::Error& e) {
    const std::string expected =
        "collective watchdog: all_reduce on communicator 'x' did not complete within 0.2 s "
        "(OVB_COMM_TIMEOUT_S); communicators aborted";
    EXPECT_EQ(std::string(e.what()), expected);
    EXPECT_EQ(aborted_with, expected);
  }
  const double took = seconds_since(t0);
  EXPECT_EQ(aborts, 1);
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 2.0);
  EXPECT_GT(polls, 10);  // it polled, rather than sleeping through the limit
}

TEST(Watchdog, CompletingWaitReturnsWithoutAbort) {
  int polls = 0, aborts = 0;
  const auto t0 = Clock::now();
  ovb::poll_until([&] { return ++polls == 5; }, "x", 30, [&](const std::string&) { ++aborts; });
  EXPECT_EQ(polls, 5);
  EXPECT_EQ(aborts, 0);
  EXPECT_LT(seconds_since(t0), 1.0);

  // Completing after the spinning phase (10 ms) too, well within the limit.
  const auto t1 = Clock::now();
  ovb::poll_until([&] { return seconds_since(t1) > 0.05; }, "x", 30,
                  [&](const std::string&) { ++aborts; });
  EXPECT_EQ(aborts, 0);
  EXPECT_LT(seconds_since(t1), 1.0);
}

TEST(Watchdog, ErrorFromThePollPropagates) {
  int aborts = 0;
  EXPECT_THROW(ovb::poll_until([]() -> bool { throw ovb::Error("async NCCL error"); }, "x", 30,
                               [&](const std::string&) { ++aborts; }),
               ovb::Error);
  EXPECT_EQ(aborts, 0);
}

namespace {
struct FakeComm {
  ovb::LiveSet<FakeComm>& set;
  int aborted = 0;
  explicit FakeComm(ovb::LiveSet<FakeComm>& s) : set(s) { set.add(this); }
  ~FakeComm() { set.remove(this); }
  void abort() { ++aborted; }
};
}  // namespace

TEST(Watchdog, AbortAllReachesEveryLiveCommunicatorOnly) {
  ovb::LiveSet<FakeComm> comms;
  FakeComm a(comms), b(comms);
  {
    FakeComm gone(comms);
    EXPECT_EQ(comms.snapshot().size(), 3u);
  }
  ASSERT_EQ(comms.snapshot().size(), 2u);
  ovb::abort_all(comms);
  EXPECT_EQ(a.aborted, 1);
  EXPECT_EQ(b.aborted, 1);
}
