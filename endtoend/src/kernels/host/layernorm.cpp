// Host kernels: layer norm with statistics reduced over the ranks holding a row's features
// (partial sums, then forward; partial gradient sums, then backward). See kernels.hpp.
#include <algorithm>
#include <cmath>

#include "kernels/host/host_kernels.hpp"

namespace ovb::gpt {

void HostKernels::ln_partial(Stream&, const void* x, float* stats, std::int64_t T, std::int64_t C) {
  const auto* X = static_cast<const float*>(x);
  for (std::int64_t t = 0; t < T; ++t) {
    float s = 0, ss = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      const float v = X[t * C + c];
      s += v;
      ss += v * v;
    }
    stats[2 * t] = s;
    stats[2 * t + 1] = ss;
  }
}

void HostKernels::add_ln_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                                 std::int64_t T, std::int64_t C) {
  add(s, a, b, out, T * C);
  ln_partial(s, out, stats, T, C);
}

void HostKernels::ln_forward(Stream&, const void* x, const float* stats, const void* g,
                             const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                             std::int64_t C_total) {
  const auto* X = static_cast<const float*>(x);
  const auto* G = static_cast<const float*>(g);
  const auto* B = static_cast<const float*>(b);
  auto* O = static_cast<float*>(out);
  const float inv_n = 1.0f / static_cast<float>(C_total);
  for (std::int64_t t = 0; t < T; ++t) {
    const float mean = stats[2 * t] * inv_n;
    const float var = std::max(stats[2 * t + 1] * inv_n - mean * mean, 0.0f);
    const float rstd = 1.0f / std::sqrt(var + kLnEps);
    mr[2 * t] = mean;
    mr[2 * t + 1] = rstd;
    for (std::int64_t c = 0; c < C; ++c) O[t * C + c] = (X[t * C + c] - mean) * rstd * G[c] + B[c];
  }
}

void HostKernels::ln_backward_partial(Stream&, const void* dy, const void* x, const float* mr,
                                      const void* g, float* sums, std::int64_t T, std::int64_t C) {
  const auto* DY = static_cast<const float*>(dy);
  const auto* X = static_cast<const float*>(x);
  const auto* G = static_cast<const float*>(g);
  for (std::int64_t t = 0; t < T; ++t) {
    float s0 = 0, s1 = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      const float xhat = (X[t * C + c] - mr[2 * t]) * mr[2 * t + 1];
      const float dxhat = DY[t * C + c] * G[c];
      s0 += dxhat;
      s1 += dxhat * xhat;
    }
    sums[2 * t] = s0;
    sums[2 * t + 1] = s1;
  }
}

void HostKernels::ln_backward(Stream&, const void* dy, const void* x, const float* mr,
                              const void* g, const float* sums, void* dx, float* dg, float* db,
                              std::int64_t T, std::int64_t C, std::int64_t C_total) {
  const auto* DY = static_cast<const float*>(dy);
  const auto* X = static_cast<const float*>(x);
  const auto* G = static_cast<const float*>(g);
  auto* DX = static_cast<float*>(dx);
  const float inv_n = 1.0f / static_cast<float>(C_total);
  for (std::int64_t t = 0; t < T; ++t) {
    const float mean = mr[2 * t], rstd = mr[2 * t + 1];
    const float m0 = sums[2 * t] * inv_n, m1 = sums[2 * t + 1] * inv_n;
    for (std::int64_t c = 0; c < C; ++c) {
      const float xhat = (X[t * C + c] - mean) * rstd;
      const float d = DY[t * C + c];
      DX[t * C + c] += rstd * (d * G[c] - m0 - xhat * m1);
      dg[c] += d * xhat;
      db[c] += d;
    }
  }
}

}  // namespace ovb::gpt
