// Host kernels: RMSNorm with the sum of squares reduced over the ranks holding a row's features
// (see llama_ops.hpp).
#include <cmath>

#include "kernels/host/llama_ops.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt {

void host_rms_partial(const float* x, float* stats, std::int64_t T, std::int64_t C) {
  for (std::int64_t t = 0; t < T; ++t) {
    float ss = 0;
    for (std::int64_t c = 0; c < C; ++c) ss += x[t * C + c] * x[t * C + c];
    stats[t] = ss;
  }
}

void host_rms_forward(const float* x, const float* stats, const float* g, float* out, float* mr,
                      std::int64_t T, std::int64_t C, std::int64_t C_total) {
  const float inv_n = 1.0f / static_cast<float>(C_total);
  for (std::int64_t t = 0; t < T; ++t) {
    const float rstd = 1.0f / std::sqrt(stats[t] * inv_n + kLnEps);
    mr[2 * t] = 0;
    mr[2 * t + 1] = rstd;
    for (std::int64_t c = 0; c < C; ++c) out[t * C + c] = x[t * C + c] * rstd * g[c];
  }
}

void host_rms_backward_partial(const float* dy, const float* x, const float* mr, const float* g,
                               float* sums, std::int64_t T, std::int64_t C) {
  for (std::int64_t t = 0; t < T; ++t) {
    float s = 0;
    for (std::int64_t c = 0; c < C; ++c) s += dy[t * C + c] * g[c] * x[t * C + c] * mr[2 * t + 1];
    sums[t] = s;
  }
}

void host_rms_backward(const float* dy, const float* x, const float* mr, const float* g,
                       const float* sums, float* dx, float* dg, std::int64_t T, std::int64_t C,
                       std::int64_t C_total) {
  const float inv_n = 1.0f / static_cast<float>(C_total);
  for (std::int64_t t = 0; t < T; ++t) {
    const float rstd = mr[2 * t + 1], m1 = sums[t] * inv_n;
    for (std::int64_t c = 0; c < C; ++c) {
      const float xhat = x[t * C + c] * rstd;
      const float d = dy[t * C + c];
      dx[t * C + c] += rstd * (d * g[c] - xhat * m1);
      dg[c] += d * xhat;
    }
  }
}

}  // namespace ovb::gpt
