// cuBLASLt GEMM (see ovb/gemm.hpp). Minimal version: heuristic algorithm 0, fp32 compute.
#include <cublasLt.h>

#include <vector>

#include "ovb/cuda/check.hpp"
#include "ovb/error.hpp"
#include "ovb/gemm.hpp"

namespace ovb::cuda {

namespace {
cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

class CublasLtGemm final : public Gemm {
 public:
  explicit CublasLtGemm(Backend& backend) : workspace_(backend.allocate(kWorkspace)) {
    OVB_CHECK_CUBLAS(cublasLtCreate(&handle_));
  }
  ~CublasLtGemm() override { cublasLtDestroy(handle_); }
  bool supports(DType) const override { return true; }

  void run(Stream& s, const GemmShape& sh, DType t, const void* a, const void* b, void* c,
           float alpha, float beta) override {
    // Row-major C[m,n] = op(A) op(B) is column-major C^T[n,m] = op(B)^T op(A)^T: pass B first.
    const cudaDataType_t ct = cuda_type(t);
    cublasLtMatmulDesc_t op = nullptr;
    const cublasComputeType_t compute = t == DType::f32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    OVB_CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F));
    const cublasOperation_t opb = sh.tb == Trans::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t opa = sh.ta == Trans::n ? CUBLAS_OP_N : CUBLAS_OP_T;
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof(opb)));
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof(opa)));
    // Column-major views: B^T is [n, k] (ld n) when tb == n, else stored [k, n] (ld k).
    cublasLtMatrixLayout_t lb = nullptr, la = nullptr, lc = nullptr;
    OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, ct, sh.tb == Trans::n ? sh.n : sh.k,
                                                sh.tb == Trans::n ? sh.k : sh.n,
                                                sh.tb == Trans::n ? sh.n : sh.k));
    OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, ct, sh.ta == Trans::n ? sh.k : sh.m,
                                                sh.ta == Trans::n ? sh.m : sh.k,
                                                sh.ta == Trans::n ? sh.k : sh.m));
    OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, ct, sh.n, sh.m, sh.n));
    cublasLtMatmulPreference_t pref = nullptr;
    OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    const std::size_t ws = kWorkspace;
    OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    OVB_CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, op, lb, la, lc, lc, pref, 1, &heur, &found));
    if (found == 0) throw Error("cuBLASLt found no algorithm for this GEMM");
    OVB_CHECK_CUBLAS(cublasLtMatmul(handle_, op, &alpha, b, lb, a, la, &beta, c, lc, c, lc,
                                    &heur.algo, workspace_.data(), ws,
                                    static_cast<cudaStream_t>(s.native())));
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatmulDescDestroy(op);
  }
  std::string description() const override { return "cublasLt heuristic 0"; }

 private:
  static constexpr std::size_t kWorkspace = 32u << 20;
  cublasLtHandle_t handle_ = nullptr;
  Buffer workspace_;
};
}  // namespace

std::unique_ptr<Gemm> make_cublaslt_gemm(Backend& backend) {
  return std::make_unique<CublasLtGemm>(backend);
}

}  // namespace ovb::cuda
