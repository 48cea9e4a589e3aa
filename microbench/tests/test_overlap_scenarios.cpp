// Unit tests: the overlap scenario registry (overlap/scenario.hpp) and the benchmark names it
// leads to: the GEMM + collective scenario is registered and keeps the names result files use;
// any other scenario's names carry it after "overlap/"; the dependent decomposition scenario
// names its chunks and split and refuses chunks that do not divide the split dimension; the ring
// scenario has one chunk per rank and refuses a ring of one rank or of all_reduce; a transport
// mismatch warns, or fails under --require-transport.
// Run: ctest -R mb.unit (or ovb-microbench-tests --gtest_filter='OverlapScenarios*').
#include <gtest/gtest.h>

#include "overlap/overlap_bench.hpp"
#include "overlap/scenario.hpp"
#include "overlap/transport.hpp"
#include "ovb/error.hpp"
#include "ovb/metrics.hpp"

namespace ovb::mb {
namespace {

OverlapPoint point(const OverlapScenario& s) {
  OverlapPoint p;
  p.scenario = &s;
  p.gcase = {"", {4096, 4096, 4096, Trans::n, Trans::n}};
  p.gemm_type = GemmType::bf16;
  p.kind = CollKind::all_reduce;
  p.bytes = 16u << 20;
  return p;
}

TEST(OverlapScenarios, GemmCollIsRegisteredAndKeepsItsNames) {
  const OverlapScenario* found = nullptr;
  for (const OverlapScenario& s : overlap_scenarios())
    if (s.name == kDefaultScenario) found = &s;
  ASSERT_NE(found, nullptr);
  EXPECT_NE(found->make, nullptr);
  EXPECT_EQ(overlap_benchmark_name(point(*found)),
            "overlap/all_reduce/world/16777216/bf16/4096x4096x4096/nn/equal/comm_first");
}

TEST(OverlapScenarios, OtherScenariosAreNamedInTheBenchmarkName) {
  const OverlapScenario other{"coll_chain", "an example", nullptr};
  OverlapPoint p = point(other);
  p.prio = PrioMode::comm_high;
  p.comm_first = false;
  p.cfg.max_ctas = 8;
  EXPECT_EQ(overlap_benchmark_name(p),
            "overlap/coll_chain/all_reduce/world/16777216/bf16/4096x4096x4096/nn/comm_high/"
            "gemm_first/cta=default,8,default");
}

// A dependent scenario: no launch order (the pipeline fixes it), its chunks and split at the end.
TEST(OverlapScenarios, DecompositionIsDependentAndNamesItsChunks) {
  const OverlapScenario* found = nullptr;
  for (const OverlapScenario& s : overlap_scenarios())
    if (s.name == metrics::kDecompositionScenario) found = &s;
  ASSERT_NE(found, nullptr);
  EXPECT_TRUE(found->dependent);
  ASSERT_NE(found->problem, nullptr);
  OverlapPoint p = point(*found);
  p.chunks = 4;
  p.split = SplitAxis::n;
  EXPECT_EQ(overlap_benchmark_name(p),
            "overlap/decomposition/all_reduce/world/16777216/bf16/4096x4096x4096/nn/equal/"
            "pipeline/chunks=4/split=n");
  EXPECT_EQ(found->problem(p, 8), "");
  p.chunks = 3;
  EXPECT_EQ(found->problem(p, 8),
            "--scenarios decomposition: --chunks 3 does not divide N = 4096 of GEMM "
            "4096x4096x4096:nn");
  p.chunks = 2;
  EXPECT_EQ(found->bytes(p), 4096u * 4096u * 2u);  // C in bf16
  p.kind = CollKind::all_gather;  // AG+GEMM: each rank's M/8 rows in 2 chunks
  p.gcase.shape.k = 1024;
  EXPECT_EQ(found->bytes(p), 4096u * 1024u * 2u);  // A in bf16
  p.split = SplitAxis::m;
  EXPECT_EQ(found->problem(p, 8), "");
  EXPECT_NE(found->problem(p, 3).find("ranks x --chunks = 3 x 2 does not divide M = 4096"),
            std::string::npos);
  p.gcase.shape.ta = Trans::t;
  EXPECT_NE(found->problem(p, 8).find("nn layout"), std::string::npos);
}

// The ring scenario: one chunk per rank, named like any dependent one, plus its SM axes.
TEST(OverlapScenarios, RingIsOneChunkPerRankAndRefusesWhatHasNoRing) {
  const OverlapScenario* found = nullptr;
  for (const OverlapScenario& s : overlap_scenarios())
    if (s.name == "ring") found = &s;
  ASSERT_NE(found, nullptr);
  EXPECT_TRUE(found->dependent);
  EXPECT_TRUE(found->chunk_per_rank);
  OverlapPoint p = point(*found);
  p.kind = CollKind::reduce_scatter;
  p.chunks = 8;
  p.gemm_sms = 100;
  p.exchange = Exchange::copy_engine;
  EXPECT_EQ(overlap_benchmark_name(p),
            "overlap/ring/reduce_scatter/world/16777216/bf16/4096x4096x4096/nn/equal/"
            "pipeline/chunks=8/split=m/gemm_sms=100/exchange=copy_engine");
  EXPECT_EQ(found->problem(p, 8), "");
  EXPECT_EQ(found->bytes(p), 4096u * 4096u * 2u);  // C in bf16
  EXPECT_NE(found->problem(p, 1).find("a ring needs at least 2 ranks"), std::string::npos);
  EXPECT_NE(found->problem(p, 3).find("3 ranks do not divide M = 4096"), std::string::npos);
  p.kind = CollKind::all_reduce;
  EXPECT_NE(found->problem(p, 8).find("all_reduce has no ring form"), std::string::npos);
  // The default exchange and SM budget leave the name as the other dependent scenarios'.
  p.kind = CollKind::all_gather;
  p.gemm_sms = -1;
  p.exchange = Exchange::send_recv;
  EXPECT_EQ(overlap_benchmark_name(p),
            "overlap/ring/all_gather/world/16777216/bf16/4096x4096x4096/nn/equal/"
            "pipeline/chunks=8/split=m");
}

// A requested transport not observed: a warning, or with --require-transport an error naming both.
TEST(OverlapScenarios, TransportMismatchIsAWarningOrARequiredError) {
  EXPECT_NO_THROW(settle_transport("b", true, "mpi", "mpi"));
  EXPECT_NO_THROW(settle_transport("b", false, "nccl-ce", "nccl-sm"));
  try {
    settle_transport("b", true, "nccl-ce", "nccl-sm");
    FAIL() << "a required transport that was not observed did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "b: transport nccl-ce requested, nccl-sm observed (the library fell back) "
              "(--require-transport)");
  }
  EXPECT_THROW(settle_transport("b", true, "nccl-ce", "unknown"), Error);
}

TEST(OverlapScenarios, TheRegistryIsSortedByName) {
  const auto& all = overlap_scenarios();
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].name, all[i].name);
}

}  // namespace
}  // namespace ovb::mb
