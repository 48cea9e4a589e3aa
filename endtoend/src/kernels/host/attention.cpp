// Host kernels: causal multi-head and grouped-query attention with a saved log-sum-exp per row;
// backward recomputes the probabilities from it (the same contract as the CUDA flash-style
// kernels). Multi-head attention is the grouped case with one query head per K/V head.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/host/host_kernels.hpp"
#include "kernels/host/llama_ops.hpp"

namespace ovb::gpt {

namespace {
// qkv rows hold Hkv groups of [q of r = H/Hkv query heads | k | v], D each (r = 1: q|k|v per head).
struct Geometry {
  std::int64_t S, H, D, Hkv;
  std::int64_t r() const { return H / Hkv; }
  std::int64_t row() const { return Hkv * (r() + 2) * D; }  // qkv row stride
  std::int64_t base(std::int64_t b, std::int64_t t, std::int64_t h) const {
    return (b * S + t) * row() + h / r() * (r() + 2) * D;  // first element of head h's group
  }
  // Offsets of q, k, v of head h for token t of sequence b, and of the output.
  std::int64_t q(std::int64_t b, std::int64_t t, std::int64_t h) const {
    return base(b, t, h) + h % r() * D;
  }
  std::int64_t k(std::int64_t b, std::int64_t t, std::int64_t h) const {
    return base(b, t, h) + r() * D;
  }
  std::int64_t v(std::int64_t b, std::int64_t t, std::int64_t h) const { return k(b, t, h) + D; }
  std::int64_t o(std::int64_t b, std::int64_t t, std::int64_t h) const {
    return (b * S + t) * H * D + h * D;
  }
};

float dot(const float* a, const float* b, std::int64_t n) {
  float s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
}  // namespace

void HostKernels::attention_forward(Stream&, const void* qkv, void* out, float* lse, std::int64_t B,
                                    std::int64_t S, std::int64_t H, std::int64_t D) {
  host_attention_forward(qkv, out, lse, B, S, H, H, D);
}

void HostKernels::attention_backward(Stream&, const void* qkv, const void* out, const void* dout,
                                     const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                     std::int64_t S, std::int64_t H, std::int64_t D) {
  host_attention_backward(qkv, out, dout, lse, dqkv, scratch, B, S, H, H, D);
}

void host_attention_forward(const void* qkv, void* out, float* lse, std::int64_t B, std::int64_t S,
                            std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  const auto* X = static_cast<const float*>(qkv);
  auto* O = static_cast<float*>(out);
  const Geometry g{S, H, D, Hkv};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::vector<float> p(static_cast<std::size_t>(S));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < S; ++i) {
        const float* q = X + g.q(b, i, h);
        float mx = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {
          p[j] = scale * dot(q, X + g.k(b, j, h), D);
          mx = std::max(mx, p[j]);
        }
        float sum = 0;
        for (std::int64_t j = 0; j <= i; ++j) sum += (p[j] = std::exp(p[j] - mx));
        float* o = O + g.o(b, i, h);
        std::fill(o, o + D, 0.0f);
        for (std::int64_t j = 0; j <= i; ++j) {
          const float* v = X + g.v(b, j, h);
          const float w = p[j] / sum;
          for (std::int64_t d = 0; d < D; ++d) o[d] += w * v[d];
        }
        lse[(b * H + h) * S + i] = mx + std::log(sum);
      }
}

void host_attention_backward(const void* qkv, const void* out, const void* dout, const float* lse,
                             void* dqkv, float* scratch, std::int64_t B, std::int64_t S,
                             std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  const auto* X = static_cast<const float*>(qkv);
  const auto* O = static_cast<const float*>(out);
  const auto* dO = static_cast<const float*>(dout);
  auto* dX = static_cast<float*>(dqkv);
  const Geometry g{S, H, D, Hkv};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::memset(dX, 0, static_cast<std::size_t>(B * S * g.row()) * sizeof(float));
  // scratch[(b*H + h)*S + i] = dO_i . O_i (the softmax backward's row term).
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < S; ++i)
        scratch[(b * H + h) * S + i] = dot(dO + g.o(b, i, h), O + g.o(b, i, h), D);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < S; ++i) {
        const float* q = X + g.q(b, i, h);
        const float* doi = dO + g.o(b, i, h);
        const float l = lse[(b * H + h) * S + i];
        const float di = scratch[(b * H + h) * S + i];
        float* dq = dX + g.q(b, i, h);
        for (std::int64_t j = 0; j <= i; ++j) {
          const float* k = X + g.k(b, j, h);
          const float* v = X + g.v(b, j, h);
          float* dk = dX + g.k(b, j, h);  // shared by the group's query heads: accumulated
          float* dv = dX + g.v(b, j, h);
          const float p = std::exp(scale * dot(q, k, D) - l);
          const float ds = p * (dot(doi, v, D) - di);
          for (std::int64_t d = 0; d < D; ++d) {
            dv[d] += p * doi[d];
            dq[d] += scale * ds * k[d];
            dk[d] += scale * ds * q[d];
          }
        }
      }
}

}  // namespace ovb::gpt
