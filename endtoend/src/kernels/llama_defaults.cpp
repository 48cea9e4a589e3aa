// The Kernels defaults of the Llama kernels, for a backend that lacks them: each refuses by name
// (grouped-query attention with as many K/V as query heads is plain attention).
#include "kernels/kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt {

namespace {
[[noreturn]] void missing(const Kernels& k, const char* kernel) {
  throw UsageError(std::string(kernel) + ": the Llama kernels are not implemented in " +
                   k.description());
}
}  // namespace

void Kernels::rms_partial(Stream&, const void*, float*, std::int64_t, std::int64_t) {
  missing(*this, "rms_partial");
}
void Kernels::add_rms_partial(Stream&, const void*, const void*, void*, float*, std::int64_t,
                              std::int64_t) {
  missing(*this, "add_rms_partial");
}
void Kernels::rms_forward(Stream&, const void*, const float*, const void*, void*, float*,
                          std::int64_t, std::int64_t, std::int64_t) {
  missing(*this, "rms_forward");
}
void Kernels::rms_backward_partial(Stream&, const void*, const void*, const float*, const void*,
                                   float*, std::int64_t, std::int64_t) {
  missing(*this, "rms_backward_partial");
}
void Kernels::rms_backward(Stream&, const void*, const void*, const float*, const void*,
                           const float*, void*, float*, std::int64_t, std::int64_t, std::int64_t) {
  missing(*this, "rms_backward");
}
void Kernels::swiglu_forward(Stream&, const void*, void*, std::int64_t, std::int64_t) {
  missing(*this, "swiglu_forward");
}
void Kernels::swiglu_backward(Stream&, const void*, const void*, void*, std::int64_t,
                              std::int64_t) {
  missing(*this, "swiglu_backward");
}
void Kernels::rope(Stream&, void*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                   std::int64_t, float, bool) {
  missing(*this, "rope");
}
void Kernels::gqa_attention_forward(Stream& s, const void* qkv, void* out, float* lse,
                                    std::int64_t B, std::int64_t S, std::int64_t H,
                                    std::int64_t Hkv, std::int64_t D) {
  if (Hkv != H) missing(*this, "gqa_attention_forward");
  attention_forward(s, qkv, out, lse, B, S, H, D);
}
void Kernels::gqa_attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                                     const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                     std::int64_t S, std::int64_t H, std::int64_t Hkv,
                                     std::int64_t D) {
  if (Hkv != H) missing(*this, "gqa_attention_backward");
  attention_backward(s, qkv, out, dout, lse, dqkv, scratch, B, S, H, D);
}

}  // namespace ovb::gpt
