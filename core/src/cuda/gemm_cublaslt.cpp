// cuBLASLt GEMM (see ovb/gemm.hpp): a plan holds the matmul descriptor, the three layouts and the
// top-k heuristic algorithms, created once, so each call is exactly one cublasLtMatmul. Types:
// fp32, tf32 (fp32 storage, CUBLAS_COMPUTE_32F_FAST_TF32), fp16, bf16, fp8 e4m3 inputs with bf16
// output (sm_89+ only; cuBLASLt requires its "TN" layout, i.e. here ta=n, tb=t).
#include <cublasLt.h>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "cuda/cuda_backend.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/error.hpp"
#include "ovb/gemm.hpp"

namespace ovb::cuda {

namespace {
struct LtTypes {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
};

LtTypes lt_types(GemmType t) {
  switch (t) {
    case GemmType::fp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case GemmType::tf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmType::fp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case GemmType::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmType::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
}

std::string shape_text(const GemmShape& s, GemmType t) {
  return std::string(name_of(t)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k) + " ta=" + (s.ta == Trans::n ? "n" : "t") +
         " tb=" + (s.tb == Trans::n ? "n" : "t");
}

// Owning handles for the descriptor objects (destroyed in reverse order of creation).
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using OpDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, DescDeleter>;
using Pref = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, DescDeleter>;

Layout make_layout(cudaDataType_t t, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&l, t, static_cast<std::uint64_t>(rows),
                                              static_cast<std::uint64_t>(cols), ld));
  return Layout(l);
}

int algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  int v = -1;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return v;
}

class LtPlan final : public GemmPlan {
 public:
  LtPlan(cublasLtHandle_t handle, void* workspace, std::size_t workspace_bytes, const GemmShape& sh,
         GemmType t, int max_algos, int sm_target)
      : handle_(handle),
        workspace_(workspace),
        workspace_bytes_(workspace_bytes),
        type_(t),
        sm_target_(sm_target) {
    const LtTypes ty = lt_types(t);
    cublasLtMatmulDesc_t op = nullptr;
    OVB_CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, ty.compute, CUDA_R_32F));
    op_.reset(op);
    if (sm_target > 0) {
      const std::int32_t sms = sm_target;  // set before the heuristic, which plans for it
      OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                                                      &sms, sizeof(sms)));
    }
    // Row-major C[m,n] = op(A) op(B) is column-major C^T[n,m] = op(B)^T op(A)^T: B comes first.
    const cublasOperation_t opb = sh.tb == Trans::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opa = sh.ta == Trans::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    OVB_CHECK_CUBLAS(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof(opb)));
    OVB_CHECK_CUBLAS(
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof(opa)));
    // Column-major views: B^T is [n, k] (ld n) when tb == n, else stored [k, n] (ld k).
    const bool bn = sh.tb == Trans::n, an = sh.ta == Trans::n;
    lb_ = make_layout(ty.ab, bn ? sh.n : sh.k, bn ? sh.k : sh.n, bn ? sh.n : sh.k);
    la_ = make_layout(ty.ab, an ? sh.k : sh.m, an ? sh.m : sh.k, an ? sh.k : sh.m);
    lc_ = make_layout(ty.c, sh.n, sh.m, sh.n);

    cublasLtMatmulPreference_t pref = nullptr;
    OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    Pref pref_owner(pref);
    OVB_CHECK_CUBLAS(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes_, sizeof(workspace_bytes_)));
    heuristics_.resize(static_cast<std::size_t>(std::max(1, max_algos)));
    int found = 0;
    // Not a checked call: "no algorithm" is an answer about this shape, reported as such.
    const cublasStatus_t rc = cublasLtMatmulAlgoGetHeuristic(
        handle_, op, lb_.get(), la_.get(), lc_.get(), lc_.get(), pref,
        static_cast<int>(heuristics_.size()), heuristics_.data(), &found);
    if (rc != CUBLAS_STATUS_SUCCESS || found == 0)
      throw UsageError(
          "cuBLASLt has no algorithm for GEMM " + shape_text(sh, t) +
          (t == GemmType::fp8 ? " (fp8 needs ta=n tb=t and sizes divisible by 16)" : "") +
          (rc != CUBLAS_STATUS_SUCCESS ? ": " + cublas_message(rc) : std::string()));
    heuristics_.resize(static_cast<std::size_t>(found));
  }

  void run(Stream& s, const void* a, const void* b, void* c, float alpha, float beta) override {
    const cublasLtMatmulHeuristicResult_t& h = heuristics_[static_cast<std::size_t>(algo_)];
    OVB_CHECK_CUBLAS(cublasLtMatmul(handle_, op_.get(), &alpha, b, lb_.get(), a, la_.get(), &beta,
                                    c, lc_.get(), c, lc_.get(), &h.algo, workspace_,
                                    workspace_bytes_, static_cast<cudaStream_t>(s.native())));
  }
  int algo_count() const override { return static_cast<int>(heuristics_.size()); }
  int algo() const override { return algo_; }
  void set_algo(int index) override {
    if (index < 0 || index >= algo_count())
      throw Error("cuBLASLt algorithm index " + std::to_string(index) + " out of range (have " +
                  std::to_string(algo_count()) + ")");
    algo_ = index;
  }
  std::string description() const override {
    const cublasLtMatmulAlgo_t& a = heuristics_[static_cast<std::size_t>(algo_)].algo;
    return "cublasLt " + std::string(name_of(type_)) + " algo " + std::to_string(algo_) + " of " +
           std::to_string(algo_count()) + " (id " +
           std::to_string(algo_attr(a, CUBLASLT_ALGO_CONFIG_ID)) + ", tile " +
           std::to_string(algo_attr(a, CUBLASLT_ALGO_CONFIG_TILE_ID)) + ", stages " +
           std::to_string(algo_attr(a, CUBLASLT_ALGO_CONFIG_STAGES_ID)) + ", split-k " +
           std::to_string(algo_attr(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)) + ")" +
           (sm_target_ > 0 ? " for " + std::to_string(sm_target_) + " SMs" : "");
  }

 private:
  cublasLtHandle_t handle_;
  void* workspace_;
  std::size_t workspace_bytes_;
  GemmType type_;
  int sm_target_ = 0;
  OpDesc op_;
  Layout la_, lb_, lc_;
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics_;
  int algo_ = 0;
};

GemmType gemm_type_of(DType t) {
  switch (t) {
    case DType::f32: return GemmType::tf32;  // the behaviour run() has always had on CUDA
    case DType::f16: return GemmType::fp16;
    case DType::bf16: return GemmType::bf16;
  }
  return GemmType::tf32;
}

class CublasLtGemm final : public Gemm {
 public:
  explicit CublasLtGemm(Backend& backend) : workspace_(backend.allocate(kWorkspace)) {
    OVB_CHECK_CUBLAS(cublasLtCreate(&handle_));
    int dev = 0;
    OVB_CHECK_CUDA(cudaGetDevice(&dev));
    OVB_CHECK_CUDA(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, dev));
    OVB_CHECK_CUDA(cudaDeviceGetAttribute(&cc_minor_, cudaDevAttrComputeCapabilityMinor, dev));
    OVB_CHECK_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  }
  ~CublasLtGemm() override {
    cache_.clear();  // plans reference the handle
    cublasLtDestroy(handle_);
  }
  bool supports(DType) const override { return true; }
  std::string unsupported(GemmType t) const override {
    if (t == GemmType::fp8 && cc_major_ * 10 + cc_minor_ < 89)
      return "fp8 GEMMs need compute capability 8.9 or newer; this GPU is " +
             std::to_string(cc_major_) + "." + std::to_string(cc_minor_);
    return "";
  }
  std::unique_ptr<GemmPlan> plan(const GemmShape& shape, GemmType t, int max_algos,
                                 int sm_target) override {
    if (const std::string why = unsupported(t); !why.empty()) throw UsageError(why);
    if (sm_target > sm_count_)
      throw UsageError("an SM budget of " + std::to_string(sm_target) + " SMs for the GEMM " +
                       "exceeds this GPU's " + std::to_string(sm_count_));
    return std::make_unique<LtPlan>(handle_, workspace_.data(), kWorkspace, shape, t, max_algos,
                                    sm_target);
  }
  void run(Stream& s, const GemmShape& sh, DType t, const void* a, const void* b, void* c,
           float alpha, float beta) override {
    const GemmType gt = gemm_type_of(t);
    const Key key{sh.m, sh.n, sh.k, sh.ta, sh.tb, gt};
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, plan(sh, gt, 1, 0)).first;
    it->second->run(s, a, b, c, alpha, beta);
    last_ = it->second.get();
  }
  std::string description() const override {
    return last_ ? last_->description() : "cublasLt (no GEMM run yet)";
  }

 private:
  // 32 MiB: what cuBLAS recommends for Hopper; more than enough for Ampere.
  static constexpr std::size_t kWorkspace = 32u << 20;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, Trans, Trans, GemmType>;
  cublasLtHandle_t handle_ = nullptr;
  Buffer workspace_;
  int cc_major_ = 0, cc_minor_ = 0, sm_count_ = 0;
  std::map<Key, std::unique_ptr<GemmPlan>> cache_;
  const GemmPlan* last_ = nullptr;
};
}  // namespace

std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend) {
  return std::make_unique<CublasLtGemm>(backend);
}

}  // namespace ovb::cuda
