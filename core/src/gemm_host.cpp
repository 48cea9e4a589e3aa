// Host GEMM through OpenBLAS (cblas_sgemm, row-major), fp32 only (see ovb/gemm.hpp). Each call
// is reported to the host timeline sink when one is installed, so host traces show GEMM time as
// CUDA traces show cuBLAS kernels. make_gemm() picks this one or cuBLASLt
// (cuda/gemm_cublaslt.cpp) by backend.
#include <cblas.h>

#include "cuda_entry.hpp"
#include "ovb/error.hpp"
#include "ovb/gemm.hpp"
#include "ovb/host_timeline_sink.hpp"

namespace ovb {

namespace {
void sgemm(const GemmShape& s, const void* a, const void* b, void* c, float alpha, float beta) {
  HostTimelineSink* const sink = host_timeline_sink();
  const std::int64_t begin = sink ? timeline_now_ns() : 0;
  const auto lda = static_cast<blasint>(s.ta == Trans::n ? s.k : s.m);
  const auto ldb = static_cast<blasint>(s.tb == Trans::n ? s.n : s.k);
  cblas_sgemm(CblasRowMajor, s.ta == Trans::n ? CblasNoTrans : CblasTrans,
              s.tb == Trans::n ? CblasNoTrans : CblasTrans, static_cast<blasint>(s.m),
              static_cast<blasint>(s.n), static_cast<blasint>(s.k), alpha,
              static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, beta,
              static_cast<float*>(c), static_cast<blasint>(s.n));
  if (sink && sink == host_timeline_sink())
    sink->computed(HostGemmCall{s.m, s.n, s.k, DType::f32, begin, timeline_now_ns()});
}

class HostGemmPlan final : public GemmPlan {
 public:
  explicit HostGemmPlan(const GemmShape& s) : shape_(s) {}
  void run(Stream&, const void* a, const void* b, void* c, float alpha, float beta) override {
    sgemm(shape_, a, b, c, alpha, beta);
  }
  int algo_count() const override { return 1; }
  int algo() const override { return -1; }
  void set_algo(int index) override {
    if (index != 0 && index != -1)
      throw Error("the host GEMM has one algorithm; index " + std::to_string(index) + " requested");
  }
  std::string description() const override { return "openblas sgemm"; }

 private:
  GemmShape shape_;
};

class HostGemm final : public Gemm {
 public:
  bool supports(DType t) const override { return t == DType::f32; }
  std::string unsupported(GemmType t) const override {
    if (t == GemmType::fp32) return "";
    return "the host backend's GEMM supports fp32 only, not " + std::string(name_of(t));
  }
  std::unique_ptr<GemmPlan> plan(const GemmShape& shape, GemmType t, int, int sm_target) override {
    if (const std::string why = unsupported(t); !why.empty()) throw UsageError(why);
    if (sm_target > 0)
      throw UsageError("an SM budget for the GEMM (" + std::to_string(sm_target) +
                       " SMs) has no meaning on the host backend");
    return std::make_unique<HostGemmPlan>(shape);
  }
  void run(Stream&, const GemmShape& s, DType t, const void* a, const void* b, void* c, float alpha,
           float beta) override {
    if (t != DType::f32)
      throw UsageError("the host backend's GEMM supports fp32 only, not " +
                       std::string(name_of(t)));
    sgemm(s, a, b, c, alpha, beta);
  }
  std::string description() const override { return "openblas sgemm"; }
};
}  // namespace

std::unique_ptr<Gemm> make_gemm(Backend& backend) {
  if (backend.name() == "host") return std::make_unique<HostGemm>();
  if (backend.name() == "cuda") return cuda_entry::make_cublaslt_gemm(backend);
  throw Error("no GEMM for backend '" + std::string(backend.name()) + "'");
}

}  // namespace ovb
