// Launchers of the CUDA kernels, one group per .cu file (kernels and launcher together, as llm.c).
// Plain C++17 with CUDA runtime types only, so that the .cu files compile without the suite's
// C++20 headers; CudaKernels (cuda_kernels.hpp) forwards the Kernels interface to them. The
// contract of each is the Kernels method of the same name (kernels.hpp); `act` is the dtype of
// the void* tensors (fp32 or bf16).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "ovb/dtype.hpp"

namespace ovb::gpt::cuda {

// elementwise.cu
struct InitArgs {  // what the initialiser needs of a TensorDesc (layout.hpp)
  std::int64_t count, cols, row0, col0, block_cols, flat0;
  std::uint64_t seed, id;
  float stddev;
  int init;  // 0 normal, 1 ones, 2 zeros
};
void launch_init(cudaStream_t s, float* p, const InitArgs& a);
void launch_to_act(cudaStream_t s, DType act, const float* src, void* dst, std::int64_t n);
void launch_to_f32(cudaStream_t s, DType act, const void* src, float* dst, std::int64_t n);
void launch_add(cudaStream_t s, DType act, const void* a, const void* b, void* out, std::int64_t n);
void launch_gelu_forward(cudaStream_t s, DType act, const void* x, void* y, std::int64_t n);
void launch_gelu_backward(cudaStream_t s, DType act, const void* x, const void* dy, void* dx,
                          std::int64_t n);
void launch_bias_grad(cudaStream_t s, DType act, const void* dy, float* db, std::int64_t T,
                      std::int64_t C);

// embedding.cu
void launch_embedding_forward(cudaStream_t s, DType act, const std::int32_t* tok, const void* wte,
                              const void* wpe, void* out, std::int64_t T, std::int64_t S,
                              std::int64_t C);
void launch_embedding_backward(cudaStream_t s, DType act, const std::int32_t* tok, const void* dout,
                               float* dwte, float* dwpe, std::int64_t T, std::int64_t S,
                               std::int64_t C);

// layernorm.cu
void launch_ln_partial(cudaStream_t s, DType act, const void* x, float* stats, std::int64_t T,
                       std::int64_t C);
void launch_add_ln_partial(cudaStream_t s, DType act, const void* a, const void* b, void* out,
                           float* stats, std::int64_t T, std::int64_t C);
void launch_ln_forward(cudaStream_t s, DType act, const void* x, const float* stats, const void* g,
                       const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                       std::int64_t C_total);
void launch_ln_backward_partial(cudaStream_t s, DType act, const void* dy, const void* x,
                                const float* mr, const void* g, float* sums, std::int64_t T,
                                std::int64_t C);
void launch_ln_backward(cudaStream_t s, DType act, const void* dy, const void* x, const float* mr,
                        const void* g, const float* sums, void* dx, float* dg, float* db,
                        std::int64_t T, std::int64_t C, std::int64_t C_total);

// attention.cu
void launch_attention_forward(cudaStream_t s, DType act, const void* qkv, void* out, float* lse,
                              std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t D);
void launch_attention_backward(cudaStream_t s, DType act, const void* qkv, const void* out,
                               const void* dout, const float* lse, void* dqkv, float* scratch,
                               std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t D);

// cross_entropy.cu
void launch_ce_partial(cudaStream_t s, DType act, const void* logits, const std::int32_t* targets,
                       float* stats, std::int64_t T, std::int64_t V, std::int64_t v0);
void launch_ce_combine(cudaStream_t s, const float* parts, int n, float* lse, float* loss_sum,
                       std::int64_t T);
void launch_ce_backward(cudaStream_t s, DType act, void* logits, const std::int32_t* targets,
                        const float* lse, float scale, std::int64_t T, std::int64_t V,
                        std::int64_t v0);

// optimizer.cu
struct AdamWParams {
  float lr, beta1, beta2, eps, weight_decay;
  float bc1, bc2;  // 1 - beta^step
  float clip;      // > 0: scale gradients by min(1, clip / norm), norm from the device
};
void launch_sumsq(cudaStream_t s, const float* x, std::int64_t n, float* acc);
void launch_adamw(cudaStream_t s, DType act, float* p, const float* g, float* m, float* v,
                  void* work, std::int64_t n, const AdamWParams& a, const float* norm_sumsq);

}  // namespace ovb::gpt::cuda
