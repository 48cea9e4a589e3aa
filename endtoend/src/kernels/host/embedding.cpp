// Host kernels: token (+ position, when there is a table) embedding, forward and backward (see
// kernels.hpp).
#include <cstring>

#include "kernels/host/host_kernels.hpp"

namespace ovb::gpt {

void HostKernels::embedding_forward(Stream&, const std::int32_t* tok, const void* wte,
                                    const void* wpe, void* out, std::int64_t T, std::int64_t S,
                                    std::int64_t C) {
  const auto* e = static_cast<const float*>(wte);
  const auto* p = static_cast<const float*>(wpe);
  auto* o = static_cast<float*>(out);
  for (std::int64_t t = 0; t < T; ++t) {
    const float* er = e + static_cast<std::int64_t>(tok[t]) * C;
    const float* pr = p ? p + (t % S) * C : nullptr;  // Llama: no position table
    for (std::int64_t c = 0; c < C; ++c) o[t * C + c] = er[c] + (pr ? pr[c] : 0.0f);
  }
}

void HostKernels::embedding_backward(Stream&, const std::int32_t* tok, const void* dout,
                                     float* dwte, float* dwpe, std::int64_t T, std::int64_t S,
                                     std::int64_t C) {
  const auto* d = static_cast<const float*>(dout);
  for (std::int64_t t = 0; t < T; ++t) {
    float* er = dwte + static_cast<std::int64_t>(tok[t]) * C;
    for (std::int64_t c = 0; c < C; ++c) er[c] += d[t * C + c];
    if (dwpe)
      for (std::int64_t c = 0; c < C; ++c) dwpe[(t % S) * C + c] += d[t * C + c];
  }
}

}  // namespace ovb::gpt
