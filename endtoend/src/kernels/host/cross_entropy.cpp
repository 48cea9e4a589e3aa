// Host kernels: vocab-parallel cross-entropy - per-slice statistics, their combination after the
// all-gather over Y, and the logits gradient (kernels.hpp).
#include <algorithm>
#include <cmath>

#include "kernels/host/host_kernels.hpp"

namespace ovb::gpt {

void HostKernels::ce_partial(Stream&, const void* logits, const std::int32_t* targets, float* stats,
                             std::int64_t T, std::int64_t V, std::int64_t v0) {
  const auto* L = static_cast<const float*>(logits);
  for (std::int64_t t = 0; t < T; ++t) {
    const float* row = L + t * V;
    const float mx = *std::max_element(row, row + V);
    float sum = 0;
    for (std::int64_t v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
    const std::int64_t tv = targets[t] - v0;
    stats[t] = mx;
    stats[T + t] = sum;
    stats[2 * T + t] = (tv >= 0 && tv < V) ? row[tv] : 0.0f;
  }
}

void HostKernels::ce_combine(Stream&, const float* parts, int n, float* lse, float* loss_sum,
                             std::int64_t T) {
  float total = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    float mx = -INFINITY;
    for (int i = 0; i < n; ++i) mx = std::max(mx, parts[i * 3 * T + t]);
    float sum = 0, target = 0;
    for (int i = 0; i < n; ++i) {
      sum += parts[i * 3 * T + T + t] * std::exp(parts[i * 3 * T + t] - mx);
      target += parts[i * 3 * T + 2 * T + t];
    }
    lse[t] = mx + std::log(sum);
    total += lse[t] - target;
  }
  if (loss_sum) *loss_sum += total;
}

void HostKernels::ce_backward(Stream&, void* logits, const std::int32_t* targets, const float* lse,
                              float scale, std::int64_t T, std::int64_t V, std::int64_t v0) {
  auto* L = static_cast<float*>(logits);
  for (std::int64_t t = 0; t < T; ++t) {
    float* row = L + t * V;
    for (std::int64_t v = 0; v < V; ++v) row[v] = scale * std::exp(row[v] - lse[t]);
    const std::int64_t tv = targets[t] - v0;
    if (tv >= 0 && tv < V) row[tv] -= scale;
  }
}

}  // namespace ovb::gpt
