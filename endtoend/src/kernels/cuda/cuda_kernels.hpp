// The CUDA implementation of the kernel layer: activations and weights in bf16 (or fp32 with
// --dtype fp32), statistics, parameter gradients and optimizer state in fp32; GEMMs through
// cuBLASLt with fused bias / GELU epilogues (lt_matmul.hpp); everything asynchronous on the given
// stream. One .cu file per kernel family defines its methods beside its kernels: embedding.cu,
// layernorm.cu, llama.cu (RMSNorm, SwiGLU, RoPE), elementwise.cu, attention.cu, cross_entropy.cu,
// adamw.cu; cuda_kernels.cpp
// the linear layers (cuBLASLt). A new kernel is its method here and its code in one .cu file.
// Attention: cuDNN's fused flash attention (cudnn_attention.hpp) where it is built and runs the
// shape, else the CUDA-core kernels of attention.cu ("simt"); --attention picks (kernels.hpp).
// This header is plain C++ (no CUDA types) so host code can include it.
#pragma once

#include <map>
#include <memory>

#include "kernels/cuda/cudnn_attention.hpp"  // AttnShape (plain C++)
#include "kernels/kernels.hpp"

namespace ovb::gpt::cuda {

class LtMatmul;

class CudaKernels final : public Kernels {
 public:
  CudaKernels(Backend& backend, DType act, TrackedMemory* mem, AttentionKind attention,
              int gemm_autotune = 0);
  ~CudaKernels() override;
  DType act() const override { return act_; }
  std::string description() const override;

  void zero(Stream& s, void* p, std::size_t bytes) override;
  void init_tensor(Stream& s, float* params, const TensorDesc& t, std::uint64_t seed) override;
  void to_act(Stream& s, const float* src, void* dst, std::int64_t n) override;
  void to_f32(Stream& s, const void* src, float* dst, std::int64_t n) override;

  void embedding_forward(Stream& s, const std::int32_t* tok, const void* wte, const void* wpe,
                         void* out, std::int64_t T, std::int64_t S, std::int64_t C) override;
  void embedding_backward(Stream& s, const std::int32_t* tok, const void* dout, float* dwte,
                          float* dwpe, std::int64_t T, std::int64_t S, std::int64_t C) override;

  void ln_partial(Stream& s, const void* x, float* stats, std::int64_t T, std::int64_t C) override;
  void add_ln_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                      std::int64_t T, std::int64_t C) override;
  void ln_forward(Stream& s, const void* x, const float* stats, const void* g, const void* b,
                  void* out, float* mr, std::int64_t T, std::int64_t C,
                  std::int64_t C_total) override;
  void ln_backward_partial(Stream& s, const void* dy, const void* x, const float* mr, const void* g,
                           float* sums, std::int64_t T, std::int64_t C) override;
  void ln_backward(Stream& s, const void* dy, const void* x, const float* mr, const void* g,
                   const float* sums, void* dx, float* dg, float* db, std::int64_t T,
                   std::int64_t C, std::int64_t C_total) override;

  void rms_partial(Stream& s, const void* x, float* stats, std::int64_t T, std::int64_t C) override;
  void add_rms_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                       std::int64_t T, std::int64_t C) override;
  void rms_forward(Stream& s, const void* x, const float* stats, const void* g, void* out,
                   float* mr, std::int64_t T, std::int64_t C, std::int64_t C_total) override;
  void rms_backward_partial(Stream& s, const void* dy, const void* x, const float* mr,
                            const void* g, float* sums, std::int64_t T, std::int64_t C) override;
  void rms_backward(Stream& s, const void* dy, const void* x, const float* mr, const void* g,
                    const float* sums, void* dx, float* dg, std::int64_t T, std::int64_t C,
                    std::int64_t C_total) override;
  void swiglu_forward(Stream& s, const void* gu, void* y, std::int64_t T, std::int64_t F) override;
  void swiglu_backward(Stream& s, const void* gu, const void* dy, void* dgu, std::int64_t T,
                       std::int64_t F) override;
  void rope(Stream& s, void* qkv, std::int64_t B, std::int64_t S, std::int64_t G, std::int64_t r,
            std::int64_t D, float theta, bool backward) override;

  void add(Stream& s, const void* a, const void* b, void* out, std::int64_t n) override;
  void accumulate(Stream& s, const float* x, float* y, std::int64_t n) override;
  void gelu_forward(Stream& s, const void* x, void* y, std::int64_t n) override;
  void gelu_backward(Stream& s, const void* x, const void* dy, void* dx, std::int64_t n) override;
  void bias_grad(Stream& s, const void* dy, float* db, std::int64_t T, std::int64_t C) override;

  void linear_forward(Stream& s, const void* x, const void* w, const void* bias, void* y,
                      void* gelu_out, std::int64_t T, std::int64_t N, std::int64_t K) override;
  void linear_backward_input(Stream& s, const void* dy, const void* w, void* dx, std::int64_t T,
                             std::int64_t N, std::int64_t K, const void* gelu_in) override;
  void linear_backward_weight(Stream& s, const void* dy, const void* x, float* dw, std::int64_t T,
                              std::int64_t N, std::int64_t K, float* dbias) override;

  std::string prepare_attention(std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t Hkv,
                                std::int64_t D) override;
  void attention_forward(Stream& s, const void* qkv, void* out, float* lse, std::int64_t B,
                         std::int64_t S, std::int64_t H, std::int64_t D) override;
  void attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                          const float* lse, void* dqkv, float* scratch, std::int64_t B,
                          std::int64_t S, std::int64_t H, std::int64_t D) override;
  void gqa_attention_forward(Stream& s, const void* qkv, void* out, float* lse, std::int64_t B,
                             std::int64_t S, std::int64_t H, std::int64_t Hkv,
                             std::int64_t D) override;
  void gqa_attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                              const float* lse, void* dqkv, float* scratch, std::int64_t B,
                              std::int64_t S, std::int64_t H, std::int64_t Hkv,
                              std::int64_t D) override;

  void ce_partial(Stream& s, const void* logits, const std::int32_t* targets, float* stats,
                  std::int64_t T, std::int64_t V, std::int64_t v0) override;
  void ce_combine(Stream& s, const float* parts, int n, float* lse, float* loss_sum,
                  std::int64_t T) override;
  void ce_backward(Stream& s, void* logits, const std::int32_t* targets, const float* lse,
                   float scale, std::int64_t T, std::int64_t V, std::int64_t v0) override;

  void sumsq(Stream& s, const float* x, std::int64_t n, float* acc) override;
  void adamw(Stream& s, float* p, const float* g, float* m, float* v, void* work, std::int64_t n,
             const AdamWArgs& a, const float* norm_sumsq) override;

 private:
  // Whether cuDNN runs attention of this shape (decided once per shape, see prepare_attention).
  bool uses_cudnn(const AttnShape& a);

  DType act_;
  std::unique_ptr<LtMatmul> lt_;
  AttentionKind attention_;
  // Only in builds with cuDNN (shared_ptr: no reference to its destructor elsewhere).
  std::shared_ptr<CudnnAttention> cudnn_;
  std::map<AttnShape, bool> use_cudnn_;
  std::string attention_note_;  // why cuDNN is not used (auto), for description()
};

}  // namespace ovb::gpt::cuda
