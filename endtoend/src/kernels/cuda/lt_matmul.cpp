// cuBLASLt front end (see lt_matmul.hpp).
#include "kernels/cuda/lt_matmul.hpp"

#include <cublasLt.h>

#include <bit>
#include <limits>
#include <vector>

#include "ovb/cuda/check.hpp"
#include "ovb/error.hpp"
#include "ovb/gpt_plan.hpp"

namespace ovb::gpt::cuda {

namespace {
cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

// Largest power of two <= 256 that divides every pointer's address.
int alignment(std::initializer_list<const void*> ptrs) {
  std::uintptr_t bits = 256;
  for (const void* p : ptrs)
    if (p) bits |= reinterpret_cast<std::uintptr_t>(p);
  return static_cast<int>(bits & (~bits + 1));
}

// Epilogue flags of a plan's key; the combinations in use map to cuBLASLt's epilogues.
enum Epilogue { kDefault = 0, kBias = 1, kGelu = 2, kGeluBias = 3, kDGelu = 4, kBGradB = 8 };

cublasLtEpilogue_t lt_epilogue(int e) {
  switch (e) {
    case kDefault: return CUBLASLT_EPILOGUE_DEFAULT;
    case kBias: return CUBLASLT_EPILOGUE_BIAS;
    case kGelu: return CUBLASLT_EPILOGUE_GELU_AUX;
    case kGeluBias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case kDGelu: return CUBLASLT_EPILOGUE_DGELU;
    case kBGradB: return CUBLASLT_EPILOGUE_BGRADB;
    default: throw Error("cuBLASLt: no epilogue for flag combination " + std::to_string(e));
  }
}
}  // namespace

struct LtMatmul::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristic's, best first (autotuning)
  bool found = false;
  bool tuned = true;  // false until the first call has timed the candidates
  ~Plan() {
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

LtMatmul::LtMatmul(Backend& backend, TrackedMemory* mem, int autotune) : autotune_(autotune) {
  if (autotune < 0)
    throw UsageError("--gemm-autotune must be >= 0, got " + std::to_string(autotune));
  cublasLtHandle_t h = nullptr;
  OVB_CHECK_CUBLAS(cublasLtCreate(&h));
  handle_ = h;
  workspace_ = mem ? mem->allocate(kCudaGemmWorkspace, MemKind::workspace)
                   : backend.allocate(kCudaGemmWorkspace);
}

LtMatmul::~LtMatmul() {
  plans_.clear();
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

std::string LtMatmul::description() const {
  const std::string choice =
      autotune_ > 1 ? "autotuned among the heuristic's first " + std::to_string(autotune_) +
                          " (another algorithm on " + std::to_string(retuned_) + " shapes)"
                    : "heuristic";
  return "cuBLASLt (" + choice + ", fused bias/GELU/dGELU/bias-gradient epilogues, " +
         std::to_string(plans_.size()) + " GEMM shapes)";
}

LtMatmul::Plan* LtMatmul::plan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second->found ? it->second.get() : nullptr;
  auto p = std::make_unique<Plan>();
  const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;  // fp32 accumulation, no TF32
  OVB_CHECK_CUBLAS(cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F));
  const cublasOperation_t ta = key.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = key.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  OVB_CHECK_CUBLAS(
      cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  OVB_CHECK_CUBLAS(
      cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const cublasLtEpilogue_t epi = lt_epilogue(key.epilogue);
  OVB_CHECK_CUBLAS(
      cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (key.epilogue & (kGelu | kDGelu)) {
    const std::int64_t ld_aux = key.ldd;
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                                    &ld_aux, sizeof ld_aux));
  }
  const auto a = cuda_type(static_cast<DType>(key.a)), b = cuda_type(static_cast<DType>(key.b)),
             d = cuda_type(static_cast<DType>(key.d));
  // Stored shapes: A is [m,k] (or [k,m] when transposed), B [k,n] (or [n,k]), D [m,n].
  OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&p->la, a, key.ta ? key.k : key.m,
                                              key.ta ? key.m : key.k, key.lda));
  OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&p->lb, b, key.tb ? key.n : key.k,
                                              key.tb ? key.k : key.n, key.ldb));
  OVB_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&p->ld, d, key.m, key.n, key.ldd));
  cublasLtMatmulPreference_t pref = nullptr;
  OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = kCudaGemmWorkspace;
  const std::uint32_t al = static_cast<std::uint32_t>(key.align);
  OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    OVB_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, attr, &al, sizeof al));
  std::vector<cublasLtMatmulHeuristicResult_t> heur(
      static_cast<std::size_t>(std::max(1, autotune_)));
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      static_cast<cublasLtHandle_t>(handle_), p->desc, p->la, p->lb, p->ld, p->ld, pref,
      static_cast<int>(heur.size()), heur.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  p->found = st == CUBLAS_STATUS_SUCCESS && found > 0;
  if (p->found) {
    p->algo = heur[0].algo;
    for (int i = 0; i < found; ++i)
      if (heur[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS)
        p->candidates.push_back(heur[static_cast<std::size_t>(i)].algo);
    p->tuned = p->candidates.size() < 2;
  }
  Plan* result = p->found ? p.get() : nullptr;
  plans_.emplace(key, std::move(p));
  return result;
}

void LtMatmul::run(Stream& s, const LtOp& op, const void* A, const void* B, void* D) {
  if (!try_run(s, op, A, B, D))
    throw Error("cuBLASLt has no algorithm for GEMM m=" + std::to_string(op.m) +
                " n=" + std::to_string(op.n) + " k=" + std::to_string(op.k) + " (" +
                std::string(name_of(op.a)) + " x " + std::string(name_of(op.b)) + " -> " +
                std::string(name_of(op.d)) + (op.bias ? ", bias" : "") + (op.aux ? ", GELU" : "") +
                (op.gelu_in ? ", dGELU" : "") + (op.bias_grad ? ", bias gradient" : "") + ")");
}

bool LtMatmul::try_run(Stream& s, const LtOp& op, const void* A, const void* B, void* D) {
  const int epi = (op.bias ? kBias : 0) | (op.aux ? kGelu : 0) | (op.gelu_in ? kDGelu : 0) |
                  (op.bias_grad ? kBGradB : 0);
  const Key key{op.m,
                op.n,
                op.k,
                op.lda,
                op.ldb,
                op.ldd,
                op.ta,
                op.tb,
                static_cast<int>(op.a),
                static_cast<int>(op.b),
                static_cast<int>(op.d),
                epi,
                alignment({A, B, D, op.aux, op.bias, op.gelu_in, op.bias_grad})};
  Plan* p = plan(key);
  if (!p) return false;
  if (op.bias)
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                    &op.bias, sizeof op.bias));
  if (op.bias_grad)
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                    &op.bias_grad, sizeof op.bias_grad));
  if (op.aux)
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(
        p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &op.aux, sizeof op.aux));
  if (op.gelu_in)
    OVB_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(
        p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &op.gelu_in, sizeof op.gelu_in));
  if (!p->tuned) tune(s, *p, A, B, D);
  launch(s, *p, A, B, D);
  return true;
}

void LtMatmul::launch(Stream& s, const Plan& p, const void* A, const void* B, void* D) {
  const float alpha = 1.0f, beta = 0.0f;
  OVB_CHECK_CUBLAS(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, A, p.la,
                                  B, p.lb, &beta, D, p.ld, D, p.ld, &p.algo, workspace_.data(),
                                  kCudaGemmWorkspace, static_cast<cudaStream_t>(s.native())));
}

void LtMatmul::tune(Stream& s, Plan& p, const void* A, const void* B, void* D) {
  const auto stream = static_cast<cudaStream_t>(s.native());
  struct Events {  // destroyed on every way out, a failed check's exception included
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (stop) cudaEventDestroy(stop);
      if (start) cudaEventDestroy(start);
    }
  } ev;
  OVB_CHECK_CUDA(cudaEventCreate(&ev.start));
  OVB_CHECK_CUDA(cudaEventCreate(&ev.stop));
  cudaEvent_t start = ev.start, stop = ev.stop;
  float best_ms = std::numeric_limits<float>::infinity();
  std::size_t best = 0;
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    p.algo = p.candidates[i];
    launch(s, p, A, B, D);  // first call of an algorithm: module loading, not its speed
    OVB_CHECK_CUDA(cudaEventRecord(start, stream));
    for (int r = 0; r < kAutotuneReps; ++r) launch(s, p, A, B, D);
    OVB_CHECK_CUDA(cudaEventRecord(stop, stream));
    OVB_CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    OVB_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best_ms) {
      best_ms = ms;
      best = i;
    }
  }
  p.algo = p.candidates[best];
  p.tuned = true;
  if (best != 0) ++retuned_;
}

}  // namespace ovb::gpt::cuda
