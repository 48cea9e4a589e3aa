// Host kernels: the SwiGLU activation of interleaved gate/up rows (see llama_ops.hpp).
#include "kernels/host/llama_ops.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt {

void host_swiglu_forward(const float* gu, float* y, std::int64_t T, std::int64_t F) {
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < F; ++j) {
      const float* p = gu + t * 2 * F + 2 * j;
      y[t * F + j] = silu(p[0]) * p[1];
    }
}

void host_swiglu_backward(const float* gu, const float* dy, float* dgu, std::int64_t T,
                          std::int64_t F) {
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < F; ++j) {
      const float* p = gu + t * 2 * F + 2 * j;
      float* d = dgu + t * 2 * F + 2 * j;
      const float dyv = dy[t * F + j];
      d[0] = dyv * p[1] * silu_grad(p[0]);
      d[1] = dyv * silu(p[0]);
    }
}

}  // namespace ovb::gpt
