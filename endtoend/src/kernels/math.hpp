// Scalar formulas shared by the host loops and the CUDA kernels, so both compute the same thing.
#pragma once

#include <cmath>
#include <cstdint>

#include "model/rng.hpp"  // OVB_HD

namespace ovb::gpt {

inline constexpr float kLnEps = 1e-5f;  // layer-norm epsilon

// GELU, tanh approximation (GPT-2; cuBLASLt's GELU epilogue uses the same).
OVB_HD float gelu(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

OVB_HD float gelu_grad(float x) {
  const float k = 0.7978845608028654f;
  const float t = tanhf(k * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * 0.044715f * x * x);
}

// SiLU (swish) x * sigmoid(x), the gate of Llama's SwiGLU, and its derivative.
OVB_HD float silu(float x) {
  return x / (1.0f + expf(-x));
}

OVB_HD float silu_grad(float x) {
  const float sg = 1.0f / (1.0f + expf(-x));
  return sg * (1.0f + x * (1.0f - sg));
}

// RoPE: the angle by which pair i (features 2i, 2i+1) of a head of size d is rotated at position
// pos: pos * theta^(-2i/d).
OVB_HD float rope_angle(std::int64_t pos, std::int64_t i, std::int64_t d, float theta) {
  return static_cast<float>(pos) *
         powf(theta, -2.0f * static_cast<float>(i) / static_cast<float>(d));
}

// Global-norm clipping factor: min(1, clip / (norm + 1e-6)); 1 when clip <= 0.
OVB_HD float clip_scale(float clip, float norm_sumsq) {
  if (!(clip > 0)) return 1.0f;
  const float norm = sqrtf(norm_sumsq);
  return norm > clip ? clip / (norm + 1e-6f) : 1.0f;
}

// One AdamW update (decoupled weight decay); returns the new weight and updates m, v.
// bc1 = 1 - beta1^step, bc2 = 1 - beta2^step.
OVB_HD float adamw_update(float p, float g, float& m, float& v, float lr, float beta1, float beta2,
                          float eps, float wd, float bc1, float bc2) {
  m = beta1 * m + (1.0f - beta1) * g;
  v = beta2 * v + (1.0f - beta2) * g * g;
  const float mhat = m / bc1, vhat = v / bc2;
  return p - lr * (mhat / (sqrtf(vhat) + eps) + wd * p);
}

}  // namespace ovb::gpt
