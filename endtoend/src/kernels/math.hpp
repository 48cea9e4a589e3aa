// Scalar formulas shared by the host loops and the CUDA kernels, so both compute the same thing
// (the activations and RoPE's angle, which ovb-membw runs too, are core's: ovb/kernel_math.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "ovb/host_device.hpp"
#include "ovb/kernel_math.hpp"  // gelu, silu, rope_angle (found from ovb::gpt)

namespace ovb::gpt {

inline constexpr float kLnEps = 1e-5f;  // layer-norm epsilon

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
