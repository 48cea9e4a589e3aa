// Host kernels: memory, initialisation, casts, residual add, fp32 accumulation, GELU, bias
// gradient (kernels.hpp).
#include <cstring>

#include "kernels/host/host_kernels.hpp"
#include "kernels/math.hpp"
#include "model/rng.hpp"

namespace ovb::gpt {

void HostKernels::zero(Stream&, void* p, std::size_t bytes) {
  std::memset(p, 0, bytes);
}

void HostKernels::init_tensor(Stream&, float* params, const TensorDesc& t, std::uint64_t seed) {
  float* p = params + t.offset;
  for (std::int64_t e = 0; e < t.count; ++e) {
    switch (t.init) {
      case Init::normal:
        p[e] = t.stddev * normal_at(seed, t.id, static_cast<std::uint64_t>(t.global_index(e)));
        break;
      case Init::ones: p[e] = 1.0f; break;
      case Init::zeros: p[e] = 0.0f; break;
    }
  }
}

void HostKernels::to_act(Stream&, const float* src, void* dst, std::int64_t n) {
  if (dst != src) std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
}

void HostKernels::to_f32(Stream&, const void* src, float* dst, std::int64_t n) {
  if (dst != src) std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
}

void HostKernels::add(Stream&, const void* a, const void* b, void* out, std::int64_t n) {
  const auto* A = static_cast<const float*>(a);
  const auto* B = static_cast<const float*>(b);
  auto* O = static_cast<float*>(out);
  for (std::int64_t i = 0; i < n; ++i) O[i] = A[i] + B[i];
}

void HostKernels::accumulate(Stream&, const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void HostKernels::gelu_forward(Stream&, const void* x, void* y, std::int64_t n) {
  const auto* X = static_cast<const float*>(x);
  auto* Y = static_cast<float*>(y);
  for (std::int64_t i = 0; i < n; ++i) Y[i] = gelu(X[i]);
}

void HostKernels::gelu_backward(Stream&, const void* x, const void* dy, void* dx, std::int64_t n) {
  const auto* X = static_cast<const float*>(x);
  const auto* DY = static_cast<const float*>(dy);
  auto* DX = static_cast<float*>(dx);
  for (std::int64_t i = 0; i < n; ++i) DX[i] = gelu_grad(X[i]) * DY[i];
}

void HostKernels::bias_grad(Stream&, const void* dy, float* db, std::int64_t T, std::int64_t C) {
  const auto* DY = static_cast<const float*>(dy);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t c = 0; c < C; ++c) db[c] += DY[t * C + c];
}

}  // namespace ovb::gpt
