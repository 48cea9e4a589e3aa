// Copy-engine communication and the "streams serialized" finding, on hand-written traces
// (golden/copy_engine.json, golden/serialized_streams.json, golden/overlapped_streams.json; their
// events are listed in golden/README.md). The expected numbers are worked out here from the
// events' intervals, independently of the analyzer's interval algebra.
#include <gtest/gtest.h>

#include <string>

#include "analyze/analysis_report.hpp"
#include "analyze/classify.hpp"

namespace {

using nlohmann::json;
using ovb::trace::CopyFacts;

json analyse(const std::string& name) {
  const std::string path = std::string(OVB_GOLDEN_DIR) + "/" + name;
  return ovb::trace::report_json(ovb::trace::analyze_traces({path}), {path});
}

const json* find_collective(const json& colls, const std::string& kind, const std::string& group) {
  for (const json& c : colls)
    if (c["kind"] == kind && c["group"] == group) return &c;
  return nullptr;
}

TEST(CopyRule, EachConditionAloneMakesACopyCommunication) {
  EXPECT_FALSE(ovb::trace::copy_is_communication(CopyFacts{}));
  EXPECT_TRUE(ovb::trace::copy_is_communication(CopyFacts{true, false, false}));
  EXPECT_TRUE(ovb::trace::copy_is_communication(CopyFacts{false, true, false}));
  EXPECT_TRUE(ovb::trace::copy_is_communication(CopyFacts{false, false, true}));
  EXPECT_TRUE(ovb::trace::is_peer_copy_name("Memcpy PtoP (Device -> Device)"));
  EXPECT_FALSE(ovb::trace::is_peer_copy_name("Memcpy DtoD (Device -> Device)"));
  EXPECT_TRUE(ovb::trace::is_nccl_range_name("ncclGroupEnd"));
  EXPECT_FALSE(ovb::trace::is_nccl_range_name("x all_reduce"));
  EXPECT_TRUE(ovb::trace::is_comm_track_name("comm x / stream 1"));
  EXPECT_TRUE(ovb::trace::is_comm_track_name("stream 23 (communication)"));
  EXPECT_FALSE(ovb::trace::is_comm_track_name("stream 7"));
  EXPECT_FALSE(ovb::trace::is_comm_track_name("compute (thread 0)"));
}

TEST(CopyEngine, PeerAndCollectiveCopiesAreCommunicationAndLocalCopiesMemory) {
  const json r = analyse("copy_engine.json")["ranks"][0];
  // Compute: the two GEMMs on stream 7.
  const double compute = (300 - 100) + (600 - 430);
  // Communication: PtoP [150,250] (peer by kind), NCCL kernel [320,420] and the DtoD on its
  // stream [420,440] (a communication stream), DtoD in ncclGroupEnd [460,480], DtoD on a stream
  // named communication [610,620], DtoD from device 0 to 1 [630,640], DtoD in a collective range
  // [650,660]. [320,420] and [420,440] touch: one piece [320,440].
  const double comm =
      (250 - 150) + (440 - 320) + (480 - 460) + (620 - 610) + (640 - 630) + (660 - 650);
  // Hidden behind the GEMMs [100,300] and [430,600]: all of the PtoP copy, [430,440] of the
  // NCCL stream's copy, all of the ncclGroupEnd copy.
  const double overlapped = (250 - 150) + (440 - 430) + (480 - 460);
  // Memory: the DtoD on the compute stream [300,340], the DtoD within device 0 [700,720], and
  // the memset on the communication stream [720,730] (memsets are never communication).
  const double memory = (340 - 300) + (730 - 700);
  const double span = 730 - 100;
  // Busy: [100,600] is covered without a gap, then [610,620], [630,640], [650,660], [700,730].
  const double busy = (600 - 100) + 10 + 10 + 10 + 30;
  EXPECT_DOUBLE_EQ(r["compute_us"].get<double>(), compute);
  EXPECT_DOUBLE_EQ(r["comm_us"].get<double>(), comm);
  EXPECT_DOUBLE_EQ(r["overlapped_comm_us"].get<double>(), overlapped);
  EXPECT_DOUBLE_EQ(r["exposed_comm_us"].get<double>(), comm - overlapped);
  EXPECT_NEAR(r["overlap_pct"].get<double>(), 100.0 * overlapped / comm, 1e-12);
  EXPECT_DOUBLE_EQ(r["memory_us"].get<double>(), memory);
  EXPECT_DOUBLE_EQ(r["span_us"].get<double>(), span);
  EXPECT_DOUBLE_EQ(r["idle_us"].get<double>(), span - busy);

  const json& k = r["kernel_breakdown"];
  EXPECT_EQ(k["communication"]["count"], 7);  // one kernel, six copies
  EXPECT_DOUBLE_EQ(k["communication"]["total_us"].get<double>(),
                   100 + 100 + 20 + 20 + 10 + 10 + 10);
  EXPECT_EQ(k["memory"]["count"], 3);  // the two local copies and the memset
  EXPECT_DOUBLE_EQ(k["memory"]["total_us"].get<double>(), 40 + 20 + 10);
  EXPECT_EQ(k["gemm"]["count"], 2);

  // Copies keep the collective their range names; the others are "memcpy", group unknown.
  const json& colls = r["collectives"];
  ASSERT_EQ(colls.size(), 3u) << colls.dump();
  const json* ag = find_collective(colls, "all_gather", "y");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ((*ag)["count"], 1);
  EXPECT_TRUE((*ag)["bytes"].is_null());  // a copy does not carry the collective's S
  const json* ar = find_collective(colls, "all_reduce", "x");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ((*ar)["bytes"], 4194304);
  const json* mc = find_collective(colls, "memcpy", "unknown");
  ASSERT_NE(mc, nullptr);
  EXPECT_EQ((*mc)["count"], 5);
  EXPECT_DOUBLE_EQ((*mc)["total_us"].get<double>(), 100 + 20 + 20 + 10 + 10);
}

TEST(StreamsSerialized, CommunicationLaunchedBeforeAGemmThatNeverOverlapsIsFound) {
  const json a = analyse("serialized_streams.json");
  const json& s = a["ranks"][0]["serialization"];
  // Four NCCL kernels: two in flight beside a GEMM (launched at 12 and 312, before the GEMMs
  // started at 100 and 500, which were launched at 5 and 322, before the NCCL kernels ended at
  // 400 and 500) that ran wholly after / before it; one without a launch call; one launched when
  // no GEMM was left to start.
  EXPECT_EQ(s, (json{{"comm_kernels", 4},
                     {"with_launch", 3},
                     {"in_flight_with_compute", 2},
                     {"overlapped", 0},
                     {"serialized", 2},
                     {"streams_serialized", true}}));
  ASSERT_EQ(a["findings"].size(), 1u);
  EXPECT_EQ(a["findings"][0]["finding"], "streams serialized");
  EXPECT_EQ(a["findings"][0]["serialized"], 2);
  EXPECT_NE(a["findings"][0]["message"].get<std::string>().find("CUDA_DEVICE_MAX_CONNECTIONS=1"),
            std::string::npos);
}

TEST(StreamsSerialized, OverlappedStreamsAreNotAFinding) {
  const json a = analyse("overlapped_streams.json");
  const json& s = a["ranks"][0]["serialization"];
  // The same launches as the serialized trace; both in-flight NCCL kernels now run under a GEMM.
  EXPECT_EQ(s, (json{{"comm_kernels", 4},
                     {"with_launch", 3},
                     {"in_flight_with_compute", 2},
                     {"overlapped", 2},
                     {"serialized", 0},
                     {"streams_serialized", false}}));
  EXPECT_TRUE(a["findings"].empty());
  // Both NCCL kernels lie under the GEMMs: [150,250] in [100,300], [520,600] in [500,700].
  EXPECT_DOUBLE_EQ(a["ranks"][0]["overlapped_comm_us"].get<double>(), (250 - 150) + (600 - 520));
}

TEST(StreamsSerialized, TraceWithoutLaunchCallsCannotTell) {
  const json a = analyse("kineto_two_streams.json");
  EXPECT_EQ(a["ranks"][0]["serialization"]["with_launch"], 0);
  EXPECT_TRUE(a["ranks"][0]["serialization"]["streams_serialized"].is_null());
  EXPECT_TRUE(a["findings"].empty());
}

}  // namespace
