// The scalar formulas of the element-wise kernels that the trainer (gpt4d's host loops and CUDA
// kernels) and ovb-membw (its stand-alone kernels of the same classes) both run: defined once, so
// that the microbenchmark times the trainer's arithmetic.
#pragma once

#include <cmath>
#include <cstdint>

#include "ovb/host_device.hpp"

namespace ovb {

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

}  // namespace ovb
