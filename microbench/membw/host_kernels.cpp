// Host implementations of the memory-bound kernel classes (see mem_kernels.hpp): fp32 loops, one
// pass over each row where the arithmetic allows, as the host backend's trainer kernels do.
#include <cmath>
#include <cstdint>
#include <string>

#include "membw/mem_kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {

namespace {
using K = MemConstants;

template <class T>
T* at(const MemArgs& a, int i) {
  return static_cast<T*>(a.buf[static_cast<std::size_t>(i)]);
}

void layernorm(const MemArgs& a, bool rms) {
  const float* x = at<float>(a, 0);
  const float* gamma = at<float>(a, 1);
  const float* beta = rms ? nullptr : at<float>(a, 2);
  float* y = at<float>(a, rms ? 2 : 3);
  float* stats = at<float>(a, rms ? 3 : 4);
  const std::int64_t r = a.row;
  for (std::int64_t i = 0; i < a.n / r; ++i) {
    const float* xr = x + i * r;
    float* yr = y + i * r;
    float sum = 0, sq = 0;
    for (std::int64_t j = 0; j < r; ++j) {
      sum += xr[j];
      sq += xr[j] * xr[j];
    }
    const float mean = rms ? 0.0f : sum / static_cast<float>(r);
    const float var = sq / static_cast<float>(r) - mean * mean;
    const float rstd = 1.0f / std::sqrt(var + K::ln_eps);
    if (rms) {
      for (std::int64_t j = 0; j < r; ++j) yr[j] = xr[j] * rstd * gamma[j];
      stats[i] = rstd;
    } else {
      for (std::int64_t j = 0; j < r; ++j) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
      stats[2 * i] = mean;
      stats[2 * i + 1] = rstd;
    }
  }
}

void softmax_or_ce(const MemArgs& a, bool ce) {
  const float* x = at<float>(a, 0);
  const std::int64_t r = a.row;
  for (std::int64_t i = 0; i < a.n / r; ++i) {
    const float* xr = x + i * r;
    float mx = xr[0];
    for (std::int64_t j = 1; j < r; ++j) mx = std::max(mx, xr[j]);
    float sum = 0;
    for (std::int64_t j = 0; j < r; ++j) sum += std::exp(xr[j] - mx);
    if (ce) {
      const std::int32_t t = at<const std::int32_t>(a, 1)[i];
      at<float>(a, 2)[i] = mx + std::log(sum) - xr[t];
    } else {
      float* yr = at<float>(a, 1) + i * r;
      const float inv = 1.0f / sum;
      for (std::int64_t j = 0; j < r; ++j) yr[j] = std::exp(xr[j] - mx) * inv;
    }
  }
}

void adamw(const MemArgs& a) {
  float* p = at<float>(a, 0);
  float* m = at<float>(a, 1);
  float* v = at<float>(a, 2);
  const float* g = at<float>(a, 3);
  const float c1 = 1.0f / (1.0f - std::pow(K::beta1, static_cast<float>(K::adam_step)));
  const float c2 = 1.0f / (1.0f - std::pow(K::beta2, static_cast<float>(K::adam_step)));
  for (std::int64_t i = 0; i < a.n; ++i) {
    m[i] = K::beta1 * m[i] + (1.0f - K::beta1) * g[i];
    v[i] = K::beta2 * v[i] + (1.0f - K::beta2) * g[i] * g[i];
    p[i] -= K::lr * (m[i] * c1 / (std::sqrt(v[i] * c2) + K::adam_eps) + K::weight_decay * p[i]);
  }
}
}  // namespace

void run_host_mem_kernel(const MemArgs& a) {
  if (a.t != DType::f32)
    throw Error("host memory-bound kernels are fp32 only, not " + std::string(name_of(a.t)));
  const std::int64_t n = a.n;
  switch (a.c) {
    case MemClass::copy: {
      const float* x = at<float>(a, 0);
      float* y = at<float>(a, 1);
      for (std::int64_t i = 0; i < n; ++i) y[i] = x[i];
      return;
    }
    case MemClass::layernorm: return layernorm(a, false);
    case MemClass::rmsnorm: return layernorm(a, true);
    case MemClass::bias_gelu: {
      const float* x = at<float>(a, 0);
      const float* b = at<float>(a, 1);
      float* pre = at<float>(a, 2);
      float* y = at<float>(a, 3);
      for (std::int64_t i = 0; i < n / a.row; ++i)
        for (std::int64_t j = 0; j < a.row; ++j) {
          const float v = x[i * a.row + j] + b[j];
          pre[i * a.row + j] = v;
          y[i * a.row + j] = gelu(v);
        }
      return;
    }
    case MemClass::swiglu: {
      const float* g = at<float>(a, 0);
      const float* u = at<float>(a, 1);
      float* y = at<float>(a, 2);
      for (std::int64_t i = 0; i < n; ++i) y[i] = silu(g[i]) * u[i];
      return;
    }
    case MemClass::rope: {
      float* x = at<float>(a, 0);
      for (std::int64_t r = 0; r < n / a.row; ++r) {
        float* xr = x + r * a.row;
        const std::int64_t pos = r % K::rope_positions;
        for (std::int64_t i = 0; i < a.row / 2; ++i) {
          const float ang = rope_angle(pos, i, a.row, K::rope_theta);
          const float c = std::cos(ang), s = std::sin(ang), x0 = xr[2 * i], x1 = xr[2 * i + 1];
          xr[2 * i] = x0 * c - x1 * s;
          xr[2 * i + 1] = x0 * s + x1 * c;
        }
      }
      return;
    }
    case MemClass::dropout: {
      const float* x = at<float>(a, 0);
      float* y = at<float>(a, 1);
      auto* mask = at<std::uint8_t>(a, 2);
      const float scale = 1.0f / (1.0f - K::dropout_p);
      for (std::int64_t i = 0; i < n; ++i) {
        const bool keep =
            dropout_keep(static_cast<std::uint64_t>(i), K::dropout_seed, K::dropout_p);
        mask[i] = keep ? 1 : 0;
        y[i] = keep ? x[i] * scale : 0.0f;
      }
      return;
    }
    case MemClass::residual: {
      const float* x = at<float>(a, 0);
      const float* r = at<float>(a, 1);
      float* y = at<float>(a, 2);
      for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + r[i];
      return;
    }
    case MemClass::softmax: return softmax_or_ce(a, false);
    case MemClass::cross_entropy: return softmax_or_ce(a, true);
    case MemClass::adamw: return adamw(a);
    case MemClass::grad_accum: {
      float* acc = at<float>(a, 0);
      const float* g = at<float>(a, 1);
      for (std::int64_t i = 0; i < n; ++i) acc[i] += g[i];
      return;
    }
  }
}

}  // namespace ovb::mb
