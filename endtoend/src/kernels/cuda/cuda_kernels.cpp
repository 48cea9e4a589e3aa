// The CudaKernels object: its factory (and whether cuDNN attention is in), construction,
// description, and the three GEMMs of a linear layer through cuBLASLt (row-major W[N,K] seen as
// column-major, see the derivations below). The other methods are defined beside their kernels,
// in the .cu file of their family.
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/lt_matmul.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {
std::unique_ptr<Kernels> make_cuda_kernels(Backend& backend, DType act, TrackedMemory* mem,
                                           AttentionKind attention, int gemm_autotune) {
  return std::make_unique<cuda::CudaKernels>(backend, act, mem, attention, gemm_autotune);
}

bool cudnn_attention_built() {
#ifdef OVB_HAVE_CUDNN
  return true;
#else
  return false;
#endif
}
}  // namespace ovb::gpt

namespace ovb::gpt::cuda {

namespace {
// A column-major cuBLASLt GEMM D[m,n] = op(A)[m,k] op(B)[k,n] with leading dimensions.
LtOp gemm(std::int64_t m, std::int64_t n, std::int64_t k, bool ta, bool tb, std::int64_t lda,
          std::int64_t ldb, std::int64_t ldd, DType ab, DType d) {
  LtOp op;
  op.m = m;
  op.n = n;
  op.k = k;
  op.ta = ta;
  op.tb = tb;
  op.lda = lda;
  op.ldb = ldb;
  op.ldd = ldd;
  op.a = op.b = ab;
  op.d = d;
  return op;
}
}  // namespace

CudaKernels::CudaKernels(Backend& backend, DType act, TrackedMemory* mem, AttentionKind attention,
                         int gemm_autotune)
    : act_(act),
      lt_(std::make_unique<LtMatmul>(backend, mem, gemm_autotune)),
      attention_(attention) {
  if (act != DType::bf16 && act != DType::f32)
    throw UsageError("gpt4d's CUDA kernels run bf16 or fp32, not " + std::string(name_of(act)));
#ifdef OVB_HAVE_CUDNN
  if (attention != AttentionKind::simt) cudnn_ = std::make_shared<CudnnAttention>(backend, mem);
#else
  if (attention == AttentionKind::cudnn)
    throw UsageError("--attention cudnn: this gpt4d was built without cuDNN (OVB_ENABLE_CUDNN)");
  attention_note_ = "this build has no cuDNN";
#endif
}

CudaKernels::~CudaKernels() = default;

std::string CudaKernels::description() const {
  bool cudnn = false;
  for (const auto& [shape, use] : use_cudnn_) cudnn = cudnn || use;
  std::string attention;
#ifdef OVB_HAVE_CUDNN
  if (cudnn) attention = "cuDNN fused flash attention (" + CudnnAttention::versions() + ")";
#endif
  if (!cudnn)
    attention = "flash-style attention on CUDA cores (simt" +
                (attention_note_.empty() ? std::string() : "; " + attention_note_) + ")";
  return std::string("cuda ") + std::string(name_of(act_)) +
         " (fp32 statistics, gradients and AdamW), " + lt_->description() + ", " + attention;
}

// y[T,N] = x[T,K] W^T is column-major y^T[N,T] = op_T(W as [K,N] col-major) x^T[K,T].
void CudaKernels::linear_forward(Stream& s, const void* x, const void* w, const void* bias, void* y,
                                 void* gelu_out, std::int64_t T, std::int64_t N, std::int64_t K) {
  LtOp op = gemm(N, T, K, true, false, K, K, N, act_, act_);
  op.bias = bias;
  // The GELU epilogue writes gelu(y) to D and keeps y (pre-activation) in aux; its leading
  // dimension must be a multiple of 8, else GELU runs as its own kernel.
  if (gelu_out && N % 8 == 0) {
    LtOp fused = op;
    fused.aux = y;
    if (lt_->try_run(s, fused, w, x, gelu_out)) return;
  }
  lt_->run(s, op, w, x, y);
  if (gelu_out) gelu_forward(s, y, gelu_out, T * N);
}

// dx[T,K] = dy[T,N] W[N,K] is column-major dx^T[K,T] = (W as [K,N]) dy^T[N,T]. The GELU
// backward (gelu_in: [T,K] row-major = column-major [K,T], ld K, as the forward's aux) runs in
// the DGELU epilogue where cuBLASLt offers it (ld a multiple of 8), else as its own kernel.
void CudaKernels::linear_backward_input(Stream& s, const void* dy, const void* w, void* dx,
                                        std::int64_t T, std::int64_t N, std::int64_t K,
                                        const void* gelu_in) {
  const LtOp op = gemm(K, T, N, false, false, K, N, K, act_, act_);
  if (gelu_in && K % 8 == 0) {
    LtOp fused = op;
    fused.gelu_in = gelu_in;
    if (lt_->try_run(s, fused, w, dy, dx)) return;
  }
  lt_->run(s, op, w, dy, dx);
  if (gelu_in) gelu_backward(s, gelu_in, dx, dx, T * K);
}

// dw[N,K] = dy^T x is column-major dw^T[K,N] = (x as [K,T]) op_T(dy as [N,T]), fp32 output. The
// bias gradient sum_t dy[t,n] is the BGRADB epilogue's reduction of op(B) = dy over k = T, in
// the output type (fp32); where cuBLASLt has no algorithm for it, bias_grad runs after the GEMM.
void CudaKernels::linear_backward_weight(Stream& s, const void* dy, const void* x, float* dw,
                                         std::int64_t T, std::int64_t N, std::int64_t K,
                                         float* dbias) {
  const LtOp op = gemm(K, N, T, false, true, K, N, K, act_, DType::f32);
  if (dbias) {
    LtOp fused = op;
    fused.bias_grad = dbias;
    if (lt_->try_run(s, fused, x, dy, dw)) return;
  }
  lt_->run(s, op, x, dy, dw);
  if (dbias) {
    zero(s, dbias, static_cast<std::size_t>(N) * sizeof(float));
    bias_grad(s, dy, dbias, T, N);
  }
}

}  // namespace ovb::gpt::cuda
