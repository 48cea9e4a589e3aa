// CUDA kernels: the three GEMMs of a linear layer through cuBLASLt (row-major W[N,K] seen as
// column-major, see the derivations below), the CudaKernels object itself and its factory.
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/cuda/lt_matmul.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {
std::unique_ptr<Kernels> make_cuda_kernels(Backend& backend, DType act, TrackedMemory* mem) {
  return std::make_unique<cuda::CudaKernels>(backend, act, mem);
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

CudaKernels::CudaKernels(Backend& backend, DType act, TrackedMemory* mem)
    : act_(act), lt_(std::make_unique<LtMatmul>(backend, mem)) {
  if (act != DType::bf16 && act != DType::f32)
    throw UsageError("gpt4d's CUDA kernels run bf16 or fp32, not " + std::string(name_of(act)));
}

CudaKernels::~CudaKernels() = default;

std::string CudaKernels::description() const {
  return std::string("cuda ") + std::string(name_of(act_)) +
         " (fp32 statistics, gradients and AdamW), " + lt_->description() +
         ", flash-style attention (CUDA cores)";
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

// dx[T,K] = dy[T,N] W[N,K] is column-major dx^T[K,T] = (W as [K,N]) dy^T[N,T].
void CudaKernels::linear_backward_input(Stream& s, const void* dy, const void* w, void* dx,
                                        std::int64_t T, std::int64_t N, std::int64_t K) {
  const LtOp op = gemm(K, T, N, false, false, K, N, K, act_, act_);
  lt_->run(s, op, w, dy, dx);
}

// dw[N,K] = dy^T x is column-major dw^T[K,N] = (x as [K,T]) op_T(dy as [N,T]), fp32 output.
void CudaKernels::linear_backward_weight(Stream& s, const void* dy, const void* x, float* dw,
                                         std::int64_t T, std::int64_t N, std::int64_t K) {
  const LtOp op = gemm(K, N, T, false, true, K, N, K, act_, DType::f32);
  lt_->run(s, op, x, dy, dw);
}

}  // namespace ovb::gpt::cuda
