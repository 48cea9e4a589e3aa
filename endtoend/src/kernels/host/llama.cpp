// The host backend's Llama kernels: HostKernels' entries onto the fp32 functions of
// llama_ops.hpp.
#include "kernels/host/host_kernels.hpp"
#include "kernels/host/llama_ops.hpp"

namespace ovb::gpt {

namespace {
const float* f(const void* p) {
  return static_cast<const float*>(p);
}
float* f(void* p) {
  return static_cast<float*>(p);
}
}  // namespace

// ---- Host
void HostKernels::rms_partial(Stream&, const void* x, float* stats, std::int64_t T,
                              std::int64_t C) {
  host_rms_partial(f(x), stats, T, C);
}
void HostKernels::add_rms_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                                  std::int64_t T, std::int64_t C) {
  add(s, a, b, out, T * C);
  host_rms_partial(f(out), stats, T, C);
}
void HostKernels::rms_forward(Stream&, const void* x, const float* stats, const void* g, void* out,
                              float* mr, std::int64_t T, std::int64_t C, std::int64_t C_total) {
  host_rms_forward(f(x), stats, f(g), f(out), mr, T, C, C_total);
}
void HostKernels::rms_backward_partial(Stream&, const void* dy, const void* x, const float* mr,
                                       const void* g, float* sums, std::int64_t T, std::int64_t C) {
  host_rms_backward_partial(f(dy), f(x), mr, f(g), sums, T, C);
}
void HostKernels::rms_backward(Stream&, const void* dy, const void* x, const float* mr,
                               const void* g, const float* sums, void* dx, float* dg,
                               std::int64_t T, std::int64_t C, std::int64_t C_total) {
  host_rms_backward(f(dy), f(x), mr, f(g), sums, f(dx), dg, T, C, C_total);
}
void HostKernels::swiglu_forward(Stream&, const void* gu, void* y, std::int64_t T, std::int64_t F) {
  host_swiglu_forward(f(gu), f(y), T, F);
}
void HostKernels::swiglu_backward(Stream&, const void* gu, const void* dy, void* dgu,
                                  std::int64_t T, std::int64_t F) {
  host_swiglu_backward(f(gu), f(dy), f(dgu), T, F);
}
void HostKernels::rope(Stream&, void* qkv, std::int64_t B, std::int64_t S, std::int64_t G,
                       std::int64_t r, std::int64_t D, float theta, bool backward) {
  host_rope(f(qkv), B, S, G, r, D, theta, backward);
}
void HostKernels::gqa_attention_forward(Stream&, const void* qkv, void* out, float* lse,
                                        std::int64_t B, std::int64_t S, std::int64_t H,
                                        std::int64_t Hkv, std::int64_t D) {
  host_attention_forward(qkv, out, lse, B, S, H, Hkv, D);
}
void HostKernels::gqa_attention_backward(Stream&, const void* qkv, const void* out,
                                         const void* dout, const float* lse, void* dqkv,
                                         float* scratch, std::int64_t B, std::int64_t S,
                                         std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  host_attention_backward(qkv, out, dout, lse, dqkv, scratch, B, S, H, Hkv, D);
}

}  // namespace ovb::gpt
