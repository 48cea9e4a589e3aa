// The CUDA tracer's export on hand-made records (no GPU needed): kernels joined to the ranges
// they were launched in - an NCCL kernel takes kind, group, bytes and ranks from its enclosing
// collective range - GPU spans of ranges (gpu_user_annotation), one track per stream, and the
// analyzer reading it all back as communication of that kind and group.
#include <cupti.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "analyze/analysis.hpp"
#include "cuda/activity_export.hpp"
#include "test_util.hpp"

using namespace ovb::trace;
using namespace ovb::trace::cuda;

namespace {

RangeRec range(const char* name, const char* category, std::int64_t b, std::int64_t e,
               std::uint64_t parent) {
  RangeRec r;
  r.info = ovb::RangeInfo{name, category, "", "", -1, -1};
  r.begin = b;
  r.end = e;
  r.parent = parent;
  r.thread = 77;
  return r;
}

}  // namespace

TEST(CudaExport, JoinsKernelsToTheirRangesAndCollectives) {
  ActivityStore s;
  // CPU side: forward [0,1000] > layer0 [10,900] > all_reduce x [500,510] (collective).
  s.ranges[1] = range("forward", "phase", 0, 1000, 0);
  s.ranges[2] = range("layer0", "layer", 10, 900, 1);
  s.ranges[3] = range("all_reduce x fwd", "collective", 500, 510, 2);
  s.ranges[3].info.coll_kind = "all_reduce";
  s.ranges[3].info.group = "x";
  s.ranges[3].info.bytes = 4096;
  s.ranges[3].info.ranks = 2;
  s.ranges[4] = range("never closed", "phase", 950, -1, 0);
  // GPU: a GEMM launched in layer0 (correlation 11) on stream 7 [100,400]; the NCCL kernel
  // launched in the collective range (correlation 12) on stream 20 [300,700]; a kernel launched
  // outside any range (correlation 13); a copy in layer0 (correlation 14).
  const std::uint32_t gemm = s.intern("sm90_gemm"),
                      nccl = s.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  s.kernels.push_back({100, 400, 0, 7, 11, gemm, {1, 2, 3}, {128, 1, 1}});
  s.kernels.push_back({300, 700, 0, 20, 12, nccl, {2, 1, 1}, {512, 1, 1}});
  s.kernels.push_back({800, 850, 0, 7, 13, gemm, {1, 1, 1}, {32, 1, 1}});
  s.copies.push_back({400, 450, 1 << 20, 0, 7, 14, 8, false});
  s.syncs.push_back({600, 700, 3, 7, 15});
  s.syncs.push_back({650, 660, 1, 20, 16});  // overlaps the first: a second lane
  s.range_of_launch = {{11, 2}, {12, 3}, {14, 2}};
  EXPECT_EQ(earliest_record(s, 5), 0);

  ovb::trace::testing::TempDir dir;
  const std::string path = dir.file("rank-00000.trace.json");
  TraceHeader h;
  h.base_ns = 1'000'000;  // epoch offset below moves CUPTI time 0 to 1 ms
  TraceWriter w(path, h);
  write_activity(s, 1'000'000, 2000, w);
  w.finish();

  const auto j = nlohmann::json::parse(ovb::trace::testing::read_file(path));
  std::map<std::string, nlohmann::json> gpu_spans;
  nlohmann::json nccl_event, outside_event, open_range;
  int sync_lanes = 0, kernels_on_7 = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name" && e["args"]["name"] == "CUDA synchronization") ++sync_lanes;
      continue;
    }
    if (e["cat"] == "kernel" && e["args"]["correlation"] == 12) nccl_event = e;
    if (e["cat"] == "kernel" && e["args"]["correlation"] == 13) outside_event = e;
    if (e["cat"] == "kernel" && e["tid"] == 7) ++kernels_on_7;
    if (e["cat"] == "gpu_user_annotation") gpu_spans[e["name"]] = e;
    if (e["cat"] == "user_annotation" && e["name"] == "never closed") open_range = e;
  }
  // The NCCL kernel: its own stream track, the collective metadata of its range.
  EXPECT_EQ(nccl_event["pid"], 0);
  EXPECT_EQ(nccl_event["tid"], 20);
  EXPECT_EQ(nccl_event["args"]["collective"], "all_reduce");
  EXPECT_EQ(nccl_event["args"]["group"], "x");
  EXPECT_EQ(nccl_event["args"]["bytes"], 4096);
  EXPECT_EQ(nccl_event["args"]["ranks"], 2);
  EXPECT_EQ(nccl_event["args"]["range"], "all_reduce x fwd");
  EXPECT_EQ(nccl_event["args"]["External id"], 3);
  EXPECT_DOUBLE_EQ(nccl_event["ts"].get<double>(), 0.3);
  EXPECT_EQ(outside_event["args"].count("range"), 0u);
  EXPECT_EQ(kernels_on_7, 2);
  // GPU spans: each range covers the GPU work launched in it and in the ranges inside it.
  ASSERT_EQ(gpu_spans.size(), 3u);
  EXPECT_DOUBLE_EQ(gpu_spans["all_reduce x fwd"]["ts"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(gpu_spans["all_reduce x fwd"]["dur"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(gpu_spans["layer0"]["ts"].get<double>(), 0.1);  // GEMM, copy, NCCL
  EXPECT_DOUBLE_EQ(gpu_spans["layer0"]["dur"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(gpu_spans["forward"]["dur"].get<double>(), 0.6);
  EXPECT_EQ(gpu_spans["all_reduce x fwd"]["args"]["collective"], "all_reduce");
  // Nested spans on one device go to separate lanes: no partial overlap on a track.
  std::set<std::int64_t> lanes;
  for (const auto& [n, e] : gpu_spans) lanes.insert(e["tid"].get<std::int64_t>());
  EXPECT_EQ(lanes.size(), 3u);
  EXPECT_EQ(sync_lanes, 2);
  EXPECT_DOUBLE_EQ(open_range["dur"].get<double>(), 1.05);  // 950 .. now (2000)

  // Read back: the NCCL kernel is communication of (all_reduce, x) with its bytes.
  const auto r = analyze_traces({path});
  ASSERT_EQ(r[0].collectives.size(), 1u);
  EXPECT_EQ(r[0].collectives[0].kind, "all_reduce");
  EXPECT_EQ(r[0].collectives[0].group, "x");
  EXPECT_DOUBLE_EQ(*r[0].collectives[0].bytes, 4096);
  EXPECT_NEAR(r[0].overlap.comm, 0.4, 1e-12);
  EXPECT_NEAR(r[0].overlap.overlapped_comm, 0.1, 1e-12);  // GEMM [100,400] vs NCCL [300,700]
  EXPECT_TRUE(r[0].gpu_ranges);
}

TEST(CudaExport, CopiesCarryWhatTheCommunicationRuleNeeds) {
  ActivityStore s;
  s.ranges[1] = range("all_gather y", "collective", 0, 50, 0);
  s.ranges[1].info.coll_kind = "all_gather";
  s.ranges[1].info.group = "y";
  s.ranges[1].info.bytes = 1 << 20;
  s.ranges[2] = range("", "", 60, 90, 0);  // NCCL's NVTX range (a registered-string message)
  s.ranges[2].domain = "NCCL";
  // A peer copy (MEMCPY2, device 0 -> 1) [100,200]; a DtoD copy launched in the collective range
  // [200,250]; one launched in NCCL's range [300,350]; a DtoD on the compute stream [400,420].
  s.copies.push_back({100, 200, 1 << 20, 0, 30, 21, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, false, 0, 1});
  s.copies.push_back({200, 250, 1 << 16, 0, 31, 22, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, false});
  s.copies.push_back({300, 350, 1 << 16, 0, 32, 23, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, false});
  s.copies.push_back({400, 420, 1 << 16, 0, 7, 24, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, false});
  s.range_of_launch = {{22, 1}, {23, 2}};

  ovb::trace::testing::TempDir dir;
  const std::string path = dir.file("rank-00000.trace.json");
  TraceHeader h;
  TraceWriter w(path, h);
  write_activity(s, 0, 500, w);
  w.finish();

  std::map<int, nlohmann::json> by_corr;
  const auto trace = nlohmann::json::parse(ovb::trace::testing::read_file(path));
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "gpu_memcpy")
      by_corr[e["args"]["correlation"].get<int>()] = e;
  EXPECT_EQ(by_corr[21]["name"], "Memcpy PtoP");
  EXPECT_EQ(by_corr[21]["args"]["fromDevice"], 0);
  EXPECT_EQ(by_corr[21]["args"]["toDevice"], 1);
  EXPECT_EQ(by_corr[22]["args"]["collective"], "all_gather");
  EXPECT_EQ(by_corr[22]["args"]["group"], "y");
  EXPECT_EQ(by_corr[22]["args"]["bytes"], 1 << 16);  // the copy's own bytes, not the collective's
  EXPECT_EQ(by_corr[23]["args"]["range_domain"], "NCCL");
  EXPECT_EQ(by_corr[24]["args"].count("range"), 0u);
  EXPECT_EQ(by_corr[24]["args"].count("fromDevice"), 0u);
  // Stream 31 ran a copy launched in a collective range: a communication stream. Stream 32 (NCCL's
  // range is not one of the suite's collectives) and stream 7 keep their plain names.
  std::map<std::int64_t, std::string> track_names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0)
      track_names[e["tid"].get<std::int64_t>()] = e["args"]["name"];
  EXPECT_EQ(track_names[31], "stream 31 (communication)");
  EXPECT_EQ(track_names[32], "stream 32");
  EXPECT_EQ(track_names[7], "stream 7");

  // Read back: the first three are communication (100 + 50 + 50 ns), the last memory (20 ns).
  const auto r = analyze_traces({path});
  EXPECT_NEAR(r[0].overlap.comm, (100 + 50 + 50) / 1e3, 1e-12);
  EXPECT_NEAR(r[0].overlap.memory, 20 / 1e3, 1e-12);
}
