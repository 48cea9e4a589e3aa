// Host kernels: rotary position embeddings on the q and k heads of the QKV rows (see
// llama_ops.hpp).
#include <cmath>

#include "kernels/host/llama_ops.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt {

void host_rope(float* qkv, std::int64_t B, std::int64_t S, std::int64_t G, std::int64_t r,
               std::int64_t D, float theta, bool backward) {
  const std::int64_t row = G * (r + 2) * D;
  const float sign = backward ? -1.0f : 1.0f;  // the rotation's transpose turns back
  for (std::int64_t t = 0; t < B * S; ++t) {
    const std::int64_t pos = t % S;
    for (std::int64_t grp = 0; grp < G; ++grp)
      for (std::int64_t h = 0; h < r + 1; ++h) {  // r query heads, then k; v is not rotated
        float* x = qkv + t * row + (grp * (r + 2) + h) * D;
        for (std::int64_t i = 0; i < D / 2; ++i) {
          const float a = rope_angle(pos, i, D, theta);
          const float c = std::cos(a), s = sign * std::sin(a);
          const float x0 = x[2 * i], x1 = x[2 * i + 1];
          x[2 * i] = x0 * c - x1 * s;
          x[2 * i + 1] = x0 * s + x1 * c;
        }
      }
  }
}

}  // namespace ovb::gpt
