// `ovb-trace merge`: ranks become processes with their own pids and names, times move onto one
// base, flow ids stay unique, and the merged file is again a trace the analyzer reads.
#include <gtest/gtest.h>

#include <set>

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
