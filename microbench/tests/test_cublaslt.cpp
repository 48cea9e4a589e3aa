// GPU test of the cuBLASLt GEMM plans (core/src/cuda/gemm_cublaslt.cpp): every precision and
// transpose combination, every kept heuristic algorithm, checked against the exact reference;
// fp8 outside cuBLASLt's "TN" layout and on pre-sm_89 GPUs must be refused with a reason; the
// cached run() path must agree. Run: ctest -R mb.cublaslt (label gpu; Skipped without a GPU).
#include <gtest/gtest.h>

#include <memory>

#include "harness/gemm_workload.hpp"
#include "ovb/error.hpp"
#include "ovb/test_main.hpp"
#include "test_backend.hpp"

namespace ovb::mb {
namespace {

std::unique_ptr<Backend> cuda() { return test_backend("cuda"); }

TEST(CublasLt, EveryTypeTransposeAndAlgorithmIsExact) {
  auto backend = cuda();
  auto gemm = make_gemm(*backend);
  auto stream = backend->create_stream();
  for (GemmType t :
       {GemmType::fp32, GemmType::tf32, GemmType::fp16, GemmType::bf16, GemmType::fp8}) {
    if (!gemm->unsupported(t).empty()) {
      EXPECT_EQ(t, GemmType::fp8) << gemm->unsupported(t);
      continue;
    }
    for (Trans ta : {Trans::n, Trans::t})
      for (Trans tb : {Trans::n, Trans::t}) {
        const GemmShape s{256, 128, 96, ta, tb};
        const bool fp8_layout = ta == Trans::n && tb == Trans::t;
        std::unique_ptr<GemmWorkload> w;
        try {
          w = std::make_unique<GemmWorkload>(*backend, *gemm, s, t, 8, 1u << 30);
        } catch (const UsageError& e) {
          EXPECT_TRUE(t == GemmType::fp8 && !fp8_layout) << name_of(t) << ": " << e.what();
          continue;
        }
        ASSERT_GE(w->plan().algo_count(), 1);
        for (int a = 0; a < w->plan().algo_count(); ++a) {
          w->plan().set_algo(a);
          w->run(*stream);
          stream->synchronize();
          EXPECT_EQ(w->check(false), 0) << w->plan().description();
        }
        EXPECT_EQ(w->check(true), 1);
        EXPECT_THROW(w->plan().set_algo(w->plan().algo_count()), Error);
      }
  }
}

TEST(CublasLt, CachedRunAgreesWithThePlan) {
  auto backend = cuda();
  auto gemm = make_gemm(*backend);
  auto stream = backend->create_stream();
  const GemmShape s{64, 32, 48, Trans::n, Trans::t};
  GemmWorkload w(*backend, *gemm, s, GemmType::bf16, 1, 1u << 30);
  w.run(*stream);
  stream->synchronize();
  ASSERT_EQ(w.check(false), 0);
  // The convenience path on other buffers: C = A * B^T with A = ones, B = twos -> 2 * k.
  const std::size_t m = 64, n = 32, k = 48;
  Buffer a = backend->allocate(m * k * 2), b = backend->allocate(n * k * 2),
         c = backend->allocate(m * n * 2);
  fill(*backend, a, Storage::bf16, 0, m * k, [](std::size_t) { return 1.0f; });
  fill(*backend, b, Storage::bf16, 0, n * k, [](std::size_t) { return 2.0f; });
  for (int rep = 0; rep < 2; ++rep) {  // the second call uses the cached plan
    gemm->run(*stream, s, DType::bf16, a.data(), b.data(), c.data());
    stream->synchronize();
    const std::vector<float> out = read(*backend, c, Storage::bf16, 0, m * n);
    for (float v : out) ASSERT_EQ(v, 96.0f);
  }
  EXPECT_NE(gemm->description().find("cublasLt bf16"), std::string::npos) << gemm->description();
}

}  // namespace
}  // namespace ovb::mb
