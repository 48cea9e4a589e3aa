// Tests of the workloads on the host backend, under mpirun with any rank count: collective hooks
// against hand-computed expectations, GEMM references against a naive product of the actual
// buffers, clean checks after real runs, and injected wrong results caught (harness/collective.hpp,
// harness/gemm_workload.hpp). Run: ctest -R mb.workloads.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "harness/collective.hpp"
#include "harness/env.hpp"
#include "harness/gemm_workload.hpp"
#include "harness/ranks.hpp"
#include "ovb/test_main.hpp"
#include "test_backend.hpp"

namespace ovb::mb {
namespace {

std::unique_ptr<Backend> host() { return test_backend("host"); }

TEST(CollDefs, SizesOffsetsAndExpectedValuesForFourRanks) {
  CollInput in;
  in.n = 4;
  in.levels = 4;
  const CollDef& ar = all_reduce_def();
  EXPECT_EQ(ar.parts(4), 1);
  EXPECT_EQ(ar.send_elems(10, 4), 10u);
  EXPECT_EQ(ar.recv_elems(10, 4), 10u);
  EXPECT_EQ(ar.expected(7, 10, 2, in), in(0, 7) + in(1, 7) + in(2, 7) + in(3, 7));

  const CollDef& rs = reduce_scatter_def();
  EXPECT_EQ(rs.parts(4), 4);
  EXPECT_EQ(rs.send_elems(10, 4), 40u);
  EXPECT_EQ(rs.recv_elems(10, 4), 10u);
  EXPECT_EQ(rs.recv_offset(10, 3), 30u);  // in place: recv = send + rank * count
  EXPECT_EQ(rs.expected(1, 10, 2, in), in(0, 21) + in(1, 21) + in(2, 21) + in(3, 21));

  const CollDef& ag = all_gather_def();
  EXPECT_EQ(ag.send_elems(10, 4), 10u);
  EXPECT_EQ(ag.recv_elems(10, 4), 40u);
  EXPECT_EQ(ag.send_offset(10, 3), 30u);  // in place: send = recv + rank * count
  EXPECT_EQ(ag.expected(25, 10, 0, in), in(2, 5));
  EXPECT_EQ(&coll_def(CollKind::all_gather), &ag);
  EXPECT_EQ(coll_defs().size(), 3u);
}

TEST(CollDefs, InputsKeepSumsExact) {
  // bf16 holds integers up to 256: (levels - 1) * n must not exceed it.
  EXPECT_EQ(CollInput::make(8, DType::bf16).levels, 4);
  EXPECT_EQ(CollInput::make(100, DType::bf16).levels, 3);
  EXPECT_EQ(CollInput::make(200, DType::bf16).levels, 2);
  const CollInput many = CollInput::make(1000, DType::bf16);
  EXPECT_TRUE(many.one_contributor);
  float sum = 0;
  for (int q = 0; q < 1000; ++q) sum += many(q, 12345);
  EXPECT_EQ(sum, 1.0f);
  EXPECT_EQ(CollInput::make(1000, DType::f32).levels, 4);
}

TEST(CollWorkload, EveryKindChecksCleanAndCatchesAnInjectedError) {
  auto backend = host();
  const int world = ovb::testing::launch().world;
  CommConfig cfg;
  auto comm = backend->create_communicator(MPI_COMM_WORLD, cfg);
  auto stream = backend->create_stream();
  for (const CollDef* def : coll_defs())
    for (bool in_place : {false, true}) {
      const std::size_t bytes = 4u * 24 * static_cast<std::size_t>(world);
      CollWorkload w(*backend, *comm, *def, DType::f32, bytes, in_place, 1u << 30);
      EXPECT_EQ(w.bytes(), bytes);
      w.run(*stream);
      stream->synchronize();
      EXPECT_EQ(sum_over_ranks(w.check(false)), 0) << name_of(def->kind) << " " << in_place;
      // Injection corrupts one element on the last rank: the total must see it.
      EXPECT_EQ(sum_over_ranks(w.check(true)), 1) << name_of(def->kind) << " " << in_place;
    }
}

TEST(CollWorkload, RejectsWhatDoesNotFit) {
  auto backend = host();
  const int world = ovb::testing::launch().world;
  auto comm = backend->create_communicator(MPI_COMM_WORLD, CommConfig{});
  EXPECT_THROW(CollWorkload(*backend, *comm, all_reduce_def(), DType::bf16, 1024, false, 1u << 30),
               UsageError);  // no bf16 on the host backend
  EXPECT_THROW(CollWorkload(*backend, *comm, all_reduce_def(), DType::f32, 6, false, 1u << 30),
               UsageError);  // not whole elements
  if (world > 1) {
    EXPECT_THROW(CollWorkload(*backend, *comm, all_gather_def(), DType::f32,
                              4u * static_cast<std::size_t>(world) + 4, false, 1u << 30),
                 UsageError);  // not whole elements per rank
  }
  EXPECT_THROW(CollWorkload(*backend, *comm, all_reduce_def(), DType::f32, 1u << 20, false, 1000),
               UsageError);  // over the memory budget
}

// check() compares every entry of a small C (computed by OpenBLAS from the buffers) with the
// reference (computed from the fill formula and the index mapping): agreement for all four
// transpose combinations validates both mappings.
TEST(GemmWorkload, OpenBlasAgreesWithTheReferenceForAllTransposes) {
  auto backend = host();
  auto gemm = make_gemm(*backend);
  auto stream = backend->create_stream();
  for (Trans ta : {Trans::n, Trans::t})
    for (Trans tb : {Trans::n, Trans::t}) {
      const GemmShape s{13, 7, 29, ta, tb};
      GemmWorkload w(*backend, *gemm, s, GemmType::fp32, 1, 1u << 30);
      w.run(*stream);
      EXPECT_EQ(w.check(false), 0);
      EXPECT_EQ(w.check(true), 1);  // C[0,0] corrupted
      EXPECT_EQ(w.plan().algo(), -1);
      // A reference of mostly zeros would prove little.
      std::int64_t nonzero = 0;
      for (std::int64_t i = 0; i < s.m; ++i)
        for (std::int64_t j = 0; j < s.n; ++j) nonzero += GemmWorkload::reference(s, i, j) != 0;
      EXPECT_GT(nonzero, s.m * s.n / 2);
    }
}

// Random inputs: OpenBLAS's C against the double reference within fp32 accumulation's bound, for
// all transposes and a long k (whose partial sums exceed fp32's integers), and a corruption of
// C[0,0] caught.
TEST(GemmWorkload, RandomInputsAgreeWithinTheAccumulationBound) {
  auto backend = host();
  auto gemm = make_gemm(*backend);
  auto stream = backend->create_stream();
  for (Trans ta : {Trans::n, Trans::t})
    for (Trans tb : {Trans::n, Trans::t})
      for (std::int64_t k : {29, 3000}) {
        const GemmShape s{13, 7, k, ta, tb};
        GemmWorkload w(*backend, *gemm, s, GemmType::fp32, 1, 1u << 30, 0, GemmInputs::random);
        w.run(*stream);
        EXPECT_EQ(w.check(false), 0) << k;
        EXPECT_EQ(w.check(true), 1) << k;
      }
}

TEST(GemmInputs, ValuesAreExactInTheirStorageAndTolerancesByHand) {
  // Every value survives its storage (encode throws where it would round) and the values span
  // the range, with both signs and fractions: more than a few bits switch.
  for (Storage st : {Storage::f32, Storage::f16, Storage::bf16, Storage::e4m3}) {
    std::vector<unsigned char> buf(4);
    float lo = 0, hi = 0;
    bool fraction = false;
    for (std::uint64_t i = 0; i < 4096; ++i) {
      const float v = gemm_random_value(i, 11, st);
      ASSERT_NO_THROW(encode(st, v, buf.data(), 0)) << v;
      EXPECT_EQ(decode(st, buf.data(), 0), v);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      fraction = fraction || v != std::floor(v);
    }
    EXPECT_LT(lo, -1.5f);
    EXPECT_GT(hi, 1.5f);
    EXPECT_TRUE(fraction);
  }
  // The tolerance: k u / (1 - k u) of the absolute sum, plus the output's rounding of |C| and
  // that bound; exact inputs only the output's rounding.
  const GemmReference r{10.0, 1000.0};
  const double ku = 4096 * std::ldexp(1.0, -24);
  const double acc = ku / (1 - ku) * 1000.0;
  EXPECT_DOUBLE_EQ(gemm_check_tolerance(r, 4096, GemmInputs::random, Storage::f32), acc);
  EXPECT_DOUBLE_EQ(gemm_check_tolerance(r, 4096, GemmInputs::random, Storage::bf16),
                   acc + std::ldexp(1.0, -6) * (10.0 + acc));
  EXPECT_DOUBLE_EQ(gemm_check_tolerance(r, 4096, GemmInputs::exact, Storage::bf16),
                   std::ldexp(1.0, -6) * 10.0);
  EXPECT_EQ(parse_gemm_inputs("random"), GemmInputs::random);
  EXPECT_EQ(name_of(parse_gemm_inputs("exact")), "exact");
  EXPECT_THROW(parse_gemm_inputs("zeros"), UsageError);
}

TEST(GemmWorkload, UnsupportedTypesAndBudgetsAreUsageErrors) {
  auto backend = host();
  auto gemm = make_gemm(*backend);
  EXPECT_THROW(GemmWorkload(*backend, *gemm, GemmShape{8, 8, 8}, GemmType::bf16, 1, 1u << 30),
               UsageError);
  EXPECT_THROW(GemmWorkload(*backend, *gemm, GemmShape{1024, 1024, 1024}, GemmType::fp32, 1, 1000),
               UsageError);
  EXPECT_THROW(GemmWorkload(*backend, *gemm, GemmShape{0, 8, 8}, GemmType::fp32, 1, 1u << 30),
               UsageError);
}

// The rank agreements that keep every rank issuing the same collectives.
TEST(Ranks, SkipReasonsAndIterationCountsAreAgreed) {
  const LaunchContext& ctx = ovb::testing::launch();
  EXPECT_EQ(agree_on_skip(""), "");
  const std::string last = ctx.rank == ctx.world - 1 ? "too big" : "";
  const std::string want =
      ctx.world == 1 ? "too big" : "rank " + std::to_string(ctx.world - 1) + ": too big";
  EXPECT_EQ(agree_on_skip(last), want);
  EXPECT_EQ(agree_on_skip(ctx.rank == 0 ? "first" : "other"), "first");
  EXPECT_NO_THROW(require_same_on_all_ranks(42, "x"));
  if (ctx.world > 1) {
    EXPECT_THROW(require_same_on_all_ranks(ctx.rank, "the rank"), Error);
  }
  const MeanMax mm = mean_max_over_ranks(static_cast<double>(ctx.rank));
  EXPECT_DOUBLE_EQ(mm.max, ctx.world - 1);
  EXPECT_DOUBLE_EQ(mm.mean, (ctx.world - 1) / 2.0);
}

}  // namespace
}  // namespace ovb::mb
