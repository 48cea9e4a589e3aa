// CUDA kernels: token (+ position, when there is a table) embedding forward, and backward into fp32
// gradients (token rows with atomics, since tokens repeat; position rows summed over the local
// sequences directly).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"

namespace ovb::gpt::cuda {

namespace {

template <class T>
__global__ void embed_fwd_kernel(const std::int32_t* tok, const T* wte, const T* wpe, T* out,
                                 std::int64_t T_, std::int64_t S, std::int64_t C) {
  const std::int64_t n = T_ * C;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / C, c = i % C;
    const float pos = wpe ? to_f(wpe[(t % S) * C + c]) : 0.0f;  // Llama: no position table
    out[i] = from_f<T>(to_f(wte[std::int64_t(tok[t]) * C + c]) + pos);
  }
}

template <class T>
__global__ void embed_bwd_tokens_kernel(const std::int32_t* tok, const T* dout, float* dwte,
                                        std::int64_t T_, std::int64_t C) {
  const std::int64_t n = T_ * C;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / C, c = i % C;
    atomicAdd(&dwte[std::int64_t(tok[t]) * C + c], to_f(dout[i]));
  }
}

template <class T>
__global__ void embed_bwd_positions_kernel(const T* dout, float* dwpe, std::int64_t T_,
                                           std::int64_t S, std::int64_t C) {
  const std::int64_t n = S * C;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    float s = 0;
    for (std::int64_t t = i / C; t < T_; t += S) s += to_f(dout[t * C + i % C]);
    dwpe[i] += s;
  }
}

}  // namespace

void CudaKernels::embedding_forward(Stream& st, const std::int32_t* tok, const void* wte,
                                    const void* wpe, void* out, std::int64_t T, std::int64_t S,
                                    std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    embed_fwd_kernel<E><<<grid_for(T * C, 256), 256, 0, s>>>(
        tok, static_cast<const E*>(wte), static_cast<const E*>(wpe), static_cast<E*>(out), T, S, C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::embedding_backward(Stream& st, const std::int32_t* tok, const void* dout,
                                     float* dwte, float* dwpe, std::int64_t T, std::int64_t S,
                                     std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    embed_bwd_tokens_kernel<E>
        <<<grid_for(T * C, 256), 256, 0, s>>>(tok, static_cast<const E*>(dout), dwte, T, C);
    if (dwpe)
      embed_bwd_positions_kernel<E>
          <<<grid_for(S * C, 256), 256, 0, s>>>(static_cast<const E*>(dout), dwpe, T, S, C);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
