// Host kernels: the three GEMMs of a linear layer through OpenBLAS (ovb::Gemm), bias, GELU (and
// their gradients) as separate loops (kernels.hpp).
#include <algorithm>

#include "kernels/host/host_kernels.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt {

void HostKernels::linear_forward(Stream& s, const void* x, const void* w, const void* bias, void* y,
                                 void* gelu_out, std::int64_t T, std::int64_t N, std::int64_t K) {
  gemm_->run(s, GemmShape{T, N, K, Trans::n, Trans::t}, DType::f32, x, w, y);
  auto* Y = static_cast<float*>(y);
  if (bias) {
    const auto* b = static_cast<const float*>(bias);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t n = 0; n < N; ++n) Y[t * N + n] += b[n];
  }
  if (gelu_out) gelu_forward(s, y, gelu_out, T * N);
}

void HostKernels::linear_backward_input(Stream& s, const void* dy, const void* w, void* dx,
                                        std::int64_t T, std::int64_t N, std::int64_t K,
                                        const void* gelu_in) {
  gemm_->run(s, GemmShape{T, K, N, Trans::n, Trans::n}, DType::f32, dy, w, dx);
  if (gelu_in) gelu_backward(s, gelu_in, dx, dx, T * K);
}

void HostKernels::linear_backward_weight(Stream& s, const void* dy, const void* x, float* dw,
                                         std::int64_t T, std::int64_t N, std::int64_t K,
                                         float* dbias) {
  gemm_->run(s, GemmShape{N, K, T, Trans::t, Trans::n}, DType::f32, dy, x, dw);
  if (dbias) {
    std::fill(dbias, dbias + N, 0.0f);
    bias_grad(s, dy, dbias, T, N);
  }
}

}  // namespace ovb::gpt
