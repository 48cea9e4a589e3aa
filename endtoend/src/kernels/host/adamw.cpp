// Host kernels: gradient-norm sum of squares and the fused AdamW update (kernels.hpp).
#include <cmath>

#include "kernels/host/host_kernels.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt {

void HostKernels::sumsq(Stream&, const float* x, std::int64_t n, float* acc) {
  double s = 0;  // double: the sum of many squares should not depend on the split into shards
  for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  *acc += static_cast<float>(s);
}

void HostKernels::adamw(Stream&, float* p, const float* g, float* m, float* v, void* work,
                        std::int64_t n, const AdamWArgs& a, const float* norm_sumsq) {
  const float scale = clip_scale(a.clip, *norm_sumsq);
  const float bc1 = 1.0f - std::pow(a.beta1, static_cast<float>(a.step));
  const float bc2 = 1.0f - std::pow(a.beta2, static_cast<float>(a.step));
  auto* w = static_cast<float*>(work);
  for (std::int64_t i = 0; i < n; ++i) {
    p[i] = adamw_update(p[i], g[i] * scale, m[i], v[i], a.lr, a.beta1, a.beta2, a.eps,
                        a.weight_decay, bc1, bc2);
    if (w && w != p) w[i] = p[i];
  }
}

}  // namespace ovb::gpt
