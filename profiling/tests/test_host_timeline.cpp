// The host timeline on a scripted sequence with a fake clock: compute regions minus waits,
// collectives on one track per communicator x stream (lanes when two are in flight), groups
// taken from the enclosing collective range, and the written trace analyzed back exactly.
#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "host_timeline.hpp"
#include "test_util.hpp"

using namespace ovb;
using namespace ovb::trace;

namespace {

std::int64_t g_now = 0;

RangeInfo plain(const char* name, const char* category) {
  return RangeInfo{name, category, "", "", -1, -1};
}
std::int64_t fake_clock() {
  return g_now;
}

HostCollective coll(CollKind kind, const char* comm, const void* comm_id, const void* stream,
                    std::int64_t issued) {
  HostCollective c;
  c.kind = kind;
  c.comm = comm;
  c.comm_id = comm_id;
  c.stream_id = stream;
  c.ranks = 2;
  c.count = 256;
  c.bytes = 1024;
  c.issued_ns = issued;
  return c;
}

}  // namespace

TEST(HostTimeline, ScriptedIterationWritesAndAnalyzesExactly) {
  int comm_x = 0, comm_zag = 0, stream1 = 0, stream2 = 0;  // identities only
  HostTimeline tl(&fake_clock);
  g_now = 500;
  tl.begin(plain("before start", "phase"));  // not recording yet: ignored
  EXPECT_EQ(range_recorder(), nullptr);
  g_now = 1000;
  tl.start();
  EXPECT_EQ(range_recorder(), &tl);
  EXPECT_EQ(host_timeline_sink(), &tl);
  tl.begin(plain("forward", "phase"));
  tl.begin(plain("layer0", "layer"));
  g_now = 1100;
  tl.begin(plain("gemm", "compute"));
  g_now = 1200;
  tl.begin(RangeInfo{"all_reduce x", "collective", "all_reduce", "x", 1024, 2});
  const auto c1 = tl.issued(coll(CollKind::all_reduce, "x", &comm_x, &stream1, 1200));
  g_now = 1210;
  tl.end();
  g_now = 1250;
  tl.begin(RangeInfo{"all_gather z", "collective", "all_gather", "z", 1024, 2});
  const auto c2 = tl.issued(coll(CollKind::all_gather, "z-allgather", &comm_zag, &stream2, 1250));
  tl.end();
  const auto c3 = tl.issued(coll(CollKind::all_reduce, "x", &comm_x, &stream1, 1260));
  g_now = 1300;
  tl.end();  // gemm
  tl.waited(1300, 1400);
  tl.completed(c1, 1400);
  tl.completed(c2, 1450);
  g_now = 1500;
  tl.end();  // layer0
  tl.completed(c3, 1600);
  g_now = 1600;
  tl.begin(plain("layer1", "layer"));
  g_now = 1700;
  tl.end();
  g_now = 1800;
  tl.end();  // forward
  g_now = 1900;
  tl.stop();
  EXPECT_EQ(range_recorder(), nullptr);
  EXPECT_EQ(host_timeline_sink(), nullptr);
  tl.begin(plain("after stop", "phase"));  // ignored

  ovb::trace::testing::TempDir dir;
  const std::string path = dir.file("rank-00000.trace.json");
  TraceHeader h;
  h.base_ns = tl.first_ns();
  TraceWriter w(path, h);
  tl.write(w);
  w.finish();

  const auto j = nlohmann::json::parse(ovb::trace::testing::read_file(path));
  std::vector<nlohmann::json> compute, colls, ranges, waits;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "kernel" && e["args"].contains("collective"))
      colls.push_back(e);
    else if (e["cat"] == "kernel")
      compute.push_back(e);
    else if (e["cat"] == "user_annotation")
      ranges.push_back(e);
    else if (e["name"] == "MPI_Wait")
      waits.push_back(e);
  }
  // layer0 [1000,1500] minus the wait [1300,1400]; layer1 whole; gemm is nested: no own event.
  ASSERT_EQ(compute.size(), 3u);
  EXPECT_EQ(compute[0]["name"], "layer0");
  EXPECT_DOUBLE_EQ(compute[0]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(compute[0]["dur"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(compute[1]["ts"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(compute[1]["dur"].get<double>(), 0.1);
  EXPECT_EQ(compute[2]["name"], "layer1");
  EXPECT_EQ(compute[0]["args"]["stream"], 1000);  // a numeric stream: HTA's GPU timeline needs it
  // Issue order: c1 (x, stream 1), c2 (z-allgather, stream 2), c3 (x, stream 1, while c1 is in
  // flight: a second lane).
  ASSERT_EQ(colls.size(), 3u);
  std::sort(colls.begin(), colls.end(),
            [](const auto& a, const auto& b) { return a["ts"] < b["ts"]; });
  EXPECT_EQ(colls[0]["name"], "MPI all_reduce x");
  EXPECT_EQ(colls[0]["tid"], 100);
  EXPECT_EQ(colls[0]["args"]["bytes"], 1024);
  EXPECT_EQ(colls[0]["args"]["range"], "all_reduce x");
  EXPECT_EQ(colls[1]["name"], "MPI all_gather z");  // group from its range, not "z-allgather"
  EXPECT_EQ(colls[1]["args"]["comm"], "z-allgather");
  EXPECT_EQ(colls[1]["args"]["group"], "z");
  EXPECT_EQ(colls[1]["tid"], 101);
  EXPECT_EQ(colls[2]["args"]["group"], "x");  // no enclosing collective range: the comm's name
  EXPECT_EQ(colls[2]["tid"], 102);
  EXPECT_DOUBLE_EQ(colls[2]["dur"].get<double>(), 0.34);
  EXPECT_EQ(ranges.size(), 6u);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_DOUBLE_EQ(waits[0]["ts"].get<double>(), 0.3);

  // Analyzed back: compute 0.5 us, comm U = [1200,1600] 0.4, overlapped [1200,1300]+[1400,1500].
  const auto r = analyze_traces({path});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NEAR(r[0].overlap.compute, 0.5, 1e-12);
  EXPECT_NEAR(r[0].overlap.comm, 0.4, 1e-12);
  EXPECT_NEAR(r[0].overlap.overlapped_comm, 0.2, 1e-12);
  EXPECT_NEAR(r[0].overlap.exposed_comm, 0.2, 1e-12);
  EXPECT_NEAR(r[0].overlap.span, 0.7, 1e-12);
  ASSERT_EQ(r[0].collectives.size(), 2u);
  EXPECT_EQ(r[0].collectives[1].kind, "all_reduce");
  EXPECT_EQ(r[0].collectives[1].count, 2);
  EXPECT_EQ(r[0].collectives[0].group, "z");
}

TEST(HostTimeline, UnfinishedWorkEndsWithTheTrace) {
  int comm = 0, stream = 0;
  HostTimeline tl(&fake_clock);
  g_now = 100;
  tl.start();
  tl.begin(plain("open range", "compute"));
  tl.issued(coll(CollKind::all_reduce, "data", &comm, &stream, 150));
  g_now = 300;
  tl.stop();
  ovb::trace::testing::TempDir dir;
  const std::string path = dir.file("t.json");
  TraceWriter w(path, TraceHeader{});
  tl.write(w);
  w.finish();
  const auto j = nlohmann::json::parse(ovb::trace::testing::read_file(path));
  int checked = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double end_us = e["ts"].get<double>() + e["dur"].get<double>();
    EXPECT_NEAR(end_us, 0.3, 1e-9);  // base 0: absolute ns / 1000
    if (e["args"].contains("collective")) {
      EXPECT_EQ(e["args"]["completed"], false);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1);
}

// Host GEMMs (reported by the host GEMM through the sink) are "cblas_sgemm" kernels cut out of
// the compute region around them, so the analyzer's kernel breakdown counts them as gemm. Expected
// values worked out by hand from the script below (microseconds).
TEST(HostTimeline, GemmsAreGemmKernelsCutOutOfTheirRegion) {
  HostTimeline tl(&fake_clock);
  auto gemm = [&](std::int64_t begin, std::int64_t end) {
    g_now = end;
    tl.computed(HostGemmCall{64, 32, 16, DType::f32, begin, end});
  };
  gemm(10, 20);  // not recording yet: ignored
  g_now = 1000;
  tl.start();
  tl.begin(plain("layer0", "layer"));
  g_now = 1100;
  tl.begin(plain("qkv forward", "compute"));
  gemm(1100, 1250);
  g_now = 1300;
  tl.end();          // qkv forward
  gemm(1300, 1350);  // straight in layer0
  tl.waited(1400, 1450);
  g_now = 1500;
  tl.end();  // layer0
  g_now = 1600;
  tl.begin(plain("measure", "measure"));  // not a compute region: the GEMM alone is compute
  gemm(1600, 1700);
  tl.end();
  g_now = 1800;
  tl.stop();
  gemm(1850, 1900);  // stopped: ignored

  ovb::trace::testing::TempDir dir;
  const std::string path = dir.file("rank-00000.trace.json");
  TraceHeader h;
  h.base_ns = tl.first_ns();
  TraceWriter w(path, h);
  tl.write(w);
  w.finish();
  const auto j = nlohmann::json::parse(ovb::trace::testing::read_file(path));
  std::vector<nlohmann::json> kernels;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "kernel") kernels.push_back(e);
  // layer0 [1000,1100], gemm [1100,1250], layer0 [1250,1300], gemm [1300,1350],
  // layer0 [1350,1400], (wait), layer0 [1450,1500], gemm [1600,1700]
  const std::vector<std::pair<std::string, std::pair<double, double>>> want = {
      {"layer0", {0.0, 0.1}},       {"cblas_sgemm", {0.1, 0.15}}, {"layer0", {0.25, 0.05}},
      {"cblas_sgemm", {0.3, 0.05}}, {"layer0", {0.35, 0.05}},     {"layer0", {0.45, 0.05}},
      {"cblas_sgemm", {0.6, 0.1}}};
  ASSERT_EQ(kernels.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(kernels[i]["name"], want[i].first) << i;
    EXPECT_NEAR(kernels[i]["ts"].get<double>(), want[i].second.first, 1e-9) << i;
    EXPECT_NEAR(kernels[i]["dur"].get<double>(), want[i].second.second, 1e-9) << i;
    EXPECT_EQ(kernels[i]["tid"], 0) << i;  // one compute track: events never overlap on it
    EXPECT_EQ(kernels[i]["args"]["stream"], 1000) << i;
  }
  EXPECT_EQ(kernels[1]["args"]["range"], "qkv forward");  // the innermost enclosing range
  EXPECT_EQ(kernels[3]["args"]["range"], "layer0");
  EXPECT_EQ(kernels[6]["args"]["range"], "measure");
  EXPECT_EQ(kernels[1]["args"]["m"], 64);
  EXPECT_EQ(kernels[1]["args"]["n"], 32);
  EXPECT_EQ(kernels[1]["args"]["k"], 16);
  EXPECT_EQ(kernels[1]["args"]["dtype"], "fp32");

  const auto r = analyze_traces({path});
  ASSERT_EQ(r.size(), 1u);
  const auto& gemms = r[0].kernels[static_cast<std::size_t>(KernelCategory::gemm)];
  const auto& other = r[0].kernels[static_cast<std::size_t>(KernelCategory::elementwise)];
  EXPECT_EQ(gemms.count, 3);
  EXPECT_NEAR(gemms.total_us, 0.15 + 0.05 + 0.1, 1e-9);
  EXPECT_EQ(other.count, 4);
  EXPECT_NEAR(other.total_us, 0.1 + 0.05 + 0.05 + 0.05, 1e-9);
  EXPECT_NEAR(r[0].overlap.compute, 0.55, 1e-9);
}
