// `ovb-trace merge`: ranks become processes with their own pids and names, times move onto one
// base, flow ids stay unique, and the merged file is again a trace the analyzer reads. A
// predicted trace beside measured ones: its own processes, its iteration moved onto the measured
// run's median steady-state iteration (worked out in the test from the inputs), and two traces of
// one rank from one source refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analyze/merge.hpp"
#include "analyze/trace_reader.hpp"
#include "ovb/error.hpp"
#include "test_util.hpp"

using namespace ovb::trace;
using ovb::trace::testing::TempDir;
using ovb::trace::testing::write_file;

namespace {

std::string rank_trace(int rank, long long base_ns) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
         R"(, "world_size": 2}, "baseTimeNanoseconds": )" + std::to_string(base_ns) +
         R"(, "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1.000, "dur": 2.000},
    {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 77, "tid": 77, "ts": 0.500, "dur": 0.100},
    {"ph": "s", "id": 5, "cat": "ac2g", "name": "ac2g", "pid": 77, "tid": 77, "ts": 0.5}
  ]})";
}

}  // namespace

TEST(Merge, RanksBecomeProcessesOnOneTimeBase) {
  TempDir dir;
  write_file(dir.file("b.json"), rank_trace(1, 1'500'000));
  write_file(dir.file("a.json"), rank_trace(0, 1'000'000));
  const std::string out = dir.file("merged/all.json");
  const auto s = merge_traces({dir.file("b.json"), dir.file("a.json")}, out);
  EXPECT_EQ(s.ranks, 2);

  std::vector<RawEvent> events;
  const auto info = read_trace(out, [&](RawEvent& e) { events.push_back(e); });
  EXPECT_EQ(info.top["baseTimeNanoseconds"], 1'000'000);
  EXPECT_EQ(info.top["distributedInfo"]["world_size"], 2);
  EXPECT_EQ(info.top["mergedFrom"][0]["rank"], 0);
  std::map<std::string, std::int64_t> gemm_ts;
  std::set<std::int64_t> flow_ids;
  std::map<std::int64_t, std::string> process_names;
  for (const RawEvent& e : events) {
    const auto& j = e.json;
    if (j["name"] == "gemm") gemm_ts[std::to_string(j["pid"].get<int>())] = *e.ts_ns;
    if (j["ph"] == "s") flow_ids.insert(j["id"].get<std::int64_t>());
    if (j["name"] == "process_name") process_names[j["pid"]] = j["args"]["name"];
  }
  // Rank 0's GPU is pid 1000, rank 1's 2000; rank 1's times are 500 us later on the common base.
  ASSERT_EQ(gemm_ts.size(), 2u);
  EXPECT_EQ(gemm_ts["1000"], 1000);
  EXPECT_EQ(gemm_ts["2000"], 501000);
  EXPECT_EQ(flow_ids.size(), 2u);
  EXPECT_EQ(process_names[1000], "rank 0: GPU 0");
  EXPECT_EQ(process_names[2000], "rank 1: GPU 0");
  EXPECT_EQ(process_names[1001], "rank 0: pid 77");
}

TEST(Merge, RefusesTwoTracesOfOneRankAndBadInput) {
  TempDir dir;
  write_file(dir.file("a.json"), rank_trace(0, 0));
  write_file(dir.file("bad.json"), R"({"traceEvents": [)");
  EXPECT_THROW(merge_traces({dir.file("a.json"), dir.file("a.json")}, dir.file("o.json")),
               ovb::UsageError);
  EXPECT_THROW(merge_traces({dir.file("bad.json")}, dir.file("o.json")), ovb::UsageError);
  EXPECT_THROW(merge_traces({}, dir.file("o.json")), ovb::UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.json")));
}

namespace {

// A measured rank with one iteration range per duration (us, back to back from 0 on its CPU
// process, pid 77) and a 10 us GEMM at each iteration's start (GPU, pid 0).
std::string measured_trace(int rank, long long base_ns, const std::vector<int>& durations_us) {
  std::string ev = R"({"ph": "M", "name": "process_name", "pid": 0, "tid": 0,)"
                   R"( "args": {"name": "GPU 0"}})";
  int t = 0;
  for (const int d : durations_us) {
    ev += R"(, {"ph": "X", "cat": "user_annotation", "name": "iteration", "pid": 77, "tid": 77,)"
          R"( "ts": )" +
          std::to_string(t) + R"(, "dur": )" + std::to_string(d) +
          R"(, "args": {"category": "iteration"}})";
    ev += R"(, {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": )" +
          std::to_string(t) + R"(, "dur": 10})";
    t += d;
  }
  return R"({"distributedInfo": {"backend": "mpi", "rank": )" + std::to_string(rank) +
         R"(, "world_size": 2}, "baseTimeNanoseconds": )" + std::to_string(base_ns) +
         R"(, "ovbTracer": {"tracer": "host timeline", "mode": "linked"}, "traceEvents": [)" + ev +
         "]}";
}

// ovb-model explain --timeline's shape: rank 0 on base 0, one iteration [0, 100) us, a compute
// span and a collective on two streams.
std::string predicted_trace() {
  return R"({"distributedInfo": {"backend": "model", "rank": 0, "world_size": 2},
    "baseTimeNanoseconds": 0, "ovbTracer": {"tracer": "model", "mode": "predicted"},
    "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "predicted rank"}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "iteration", "pid": 0, "tid": 1000000,
     "ts": 0.000, "dur": 100.000, "args": {"category": "iteration"}},
    {"ph": "X", "cat": "kernel", "name": "gemm qkv.fwd", "pid": 0, "tid": 0, "ts": 0.000,
     "dur": 60.500},
    {"ph": "X", "cat": "kernel", "name": "qkv all_reduce x", "pid": 0, "tid": 1, "ts": 60.500,
     "dur": 39.500, "args": {"collective": "all_reduce", "group": "x"}}
  ]})";
}

using Span = std::tuple<std::string, std::int64_t, std::int64_t>;  // name, ts, dur (ns)
using Spans = std::map<std::int64_t, std::vector<Span>>;           // by pid

// The X events of a trace file by pid, each time plus `shift_ns`, sorted.
Spans spans_of(const std::string& path, std::int64_t shift_ns,
               const std::map<std::int64_t, std::int64_t>& pid_map = {}) {
  Spans out;
  read_trace(path, [&](RawEvent& e) {
    if (e.json["ph"] != "X") return;
    std::int64_t pid = e.json["pid"];
    if (const auto it = pid_map.find(pid); it != pid_map.end()) pid = it->second;
    out[pid].emplace_back(e.json["name"], *e.ts_ns + shift_ns, *e.dur_ns);
  });
  for (auto& [pid, v] : out) std::sort(v.begin(), v.end());
  return out;
}

}  // namespace

TEST(Merge, PredictedBesideMeasuredAlignedAtTheMedianSteadyStateIteration) {
  TempDir dir;
  const std::vector<int> d0 = {500, 300, 300, 100, 140, 300, 130, 110};
  const long long base0 = 1'000'000, base1 = 1'200'000;
  write_file(dir.file("m0.json"), measured_trace(0, base0, d0));
  // Rank 1's iterations all last as long: were it the reference, the first kept one would win.
  write_file(dir.file("m1.json"), measured_trace(1, base1, std::vector<int>(8, 200)));
  write_file(dir.file("p.json"), predicted_trace());
  const std::string out = dir.file("side.json");
  const auto s = merge_traces({dir.file("p.json"), dir.file("m1.json"), dir.file("m0.json")}, out);

  // The chosen iteration, worked out here: the warm-up rule leaves out max(3, ceil(8/10)) = 3;
  // of the 5 kept (100 140 300 130 110) the median is 130 us, iteration 6, starting at the sum
  // of the 6 before it.
  const int warmup = 3;
  std::vector<int> kept(d0.begin() + warmup, d0.end());
  std::vector<int> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  const int median = sorted[sorted.size() / 2];
  const int chosen =
      warmup + static_cast<int>(std::find(kept.begin(), kept.end(), median) - kept.begin());
  ASSERT_EQ(chosen, 6);
  std::int64_t start_ns = 0;
  for (int i = 0; i < chosen; ++i) start_ns += d0[static_cast<std::size_t>(i)] * 1000LL;

  ASSERT_TRUE(s.alignment);
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.predicted, 1);
  EXPECT_EQ(s.alignment->rank, 0);
  EXPECT_EQ(s.alignment->iteration, chosen);
  EXPECT_EQ(s.alignment->iterations, 8);
  EXPECT_EQ(s.alignment->warmup, warmup);
  EXPECT_EQ(s.alignment->begin_ns, start_ns);  // on the merged base, rank 0's
  EXPECT_EQ(s.alignment->measured_ns, median * 1000LL);
  EXPECT_EQ(s.alignment->predicted_ns, 100'000);

  std::vector<RawEvent> events;
  const auto info = read_trace(out, [&](RawEvent& e) { events.push_back(e); });
  EXPECT_EQ(info.top["baseTimeNanoseconds"], base0);
  EXPECT_EQ(info.top["alignment"]["iteration"], chosen);
  EXPECT_EQ(info.top["alignment"]["rule"], "median steady-state iteration");
  std::map<std::string, std::string> sources;  // file -> source
  for (const auto& m : info.top["mergedFrom"]) sources[m["file"]] = m["source"];
  EXPECT_EQ(sources[dir.file("p.json")], "predicted");
  EXPECT_EQ(sources[dir.file("m0.json")], "measured");

  // Every input event on its process: rank 0 measured GPU/CPU -> 1000/1001, predicted rank 0 ->
  // 1500, rank 1 -> 2000/2001; measured times on rank 0's base, the predicted iteration from the
  // chosen one's start.
  Spans want = spans_of(dir.file("m0.json"), 0, {{0, 1000}, {77, 1001}});
  want.merge(spans_of(dir.file("m1.json"), base1 - base0, {{0, 2000}, {77, 2001}}));
  want.merge(spans_of(dir.file("p.json"), start_ns, {{0, 1500}}));
  EXPECT_EQ(spans_of(out, 0), want);
  EXPECT_EQ(want.size(), 5u);

  std::map<std::int64_t, std::string> names;
  for (const RawEvent& e : events)
    if (e.json["name"] == "process_name") names[e.json["pid"]] = e.json["args"]["name"];
  EXPECT_EQ(names[1000], "measured rank 0: GPU 0");
  EXPECT_EQ(names[1001], "measured rank 0: pid 77");
  EXPECT_EQ(names[1500], "predicted rank 0: predicted rank");
  EXPECT_EQ(names[2000], "measured rank 1: GPU 0");
}

TEST(Merge, UnmarkedMeasuredTraceAlignsAtItsStart) {
  TempDir dir;
  // The golden Kineto trace marks no iteration: the predicted one starts at its first activity.
  const std::string kineto = std::string(OVB_GOLDEN_DIR) + "/kineto_two_streams.json";
  write_file(dir.file("p.json"), predicted_trace());
  const auto s = merge_traces({kineto, dir.file("p.json")}, dir.file("o.json"));
  ASSERT_TRUE(s.alignment);
  EXPECT_EQ(s.alignment->rule, "trace start (no iteration marks)");
  EXPECT_EQ(s.alignment->iteration, -1);
  // Its first activity the analyzer reads is the GEMM at 100 us (the kernels at 5 us lack a
  // duration or a name and are skipped); it has no baseTimeNanoseconds, so the base stays 0.
  const std::int64_t want = 100'000;
  EXPECT_EQ(s.alignment->begin_ns, want);
  // The predicted process's first event (the iteration range) starts there on the merged base.
  std::int64_t pred_first = std::numeric_limits<std::int64_t>::max();
  read_trace(dir.file("o.json"), [&](RawEvent& e) {
    if (e.json["ph"] == "X" && e.json["pid"].get<std::int64_t>() >= 1500 &&
        e.json["pid"].get<std::int64_t>() < 2000)
      pred_first = std::min(pred_first, *e.ts_ns);
  });
  EXPECT_EQ(pred_first, want);
}

TEST(Merge, RefusesTwoTracesOfOneRankFromOneSource) {
  TempDir dir;
  write_file(dir.file("p.json"), predicted_trace());
  write_file(dir.file("q.json"), predicted_trace());
  write_file(dir.file("m.json"), measured_trace(0, 0, {100}));
  write_file(dir.file("n.json"), measured_trace(0, 0, {100}));
  const auto message = [&](const std::vector<std::string>& in) -> std::string {
    try {
      merge_traces(in, dir.file("o.json"));
    } catch (const ovb::UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({dir.file("m.json"), dir.file("p.json"), dir.file("q.json")}),
            "traces '" + dir.file("p.json") + "' and '" + dir.file("q.json") +
                "' are both predicted traces of rank 0");
  EXPECT_EQ(message({dir.file("p.json"), dir.file("m.json"), dir.file("n.json")}),
            "traces '" + dir.file("m.json") + "' and '" + dir.file("n.json") +
                "' are both measured traces of rank 0");
  EXPECT_FALSE(std::filesystem::exists(dir.file("o.json")));
}
