// Shared device helpers of the CUDA kernels: element conversion, dtype dispatch, warp and block
// reductions, launch checks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "ovb/cuda/check.hpp"
#include "ovb/dtype.hpp"

namespace ovb::gpt::cuda {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ float to_f(float x) {
  return x;
}
__device__ __forceinline__ float to_f(bf16 x) {
  return __bfloat162float(x);
}
template <class T>
__device__ __forceinline__ T from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float x) {
  return __float2bfloat16(x);  // round to nearest even, as ovb::float_to_bf16_bits
}

// Calls f(T{}) with T the element type of the activation dtype.
template <class F>
void dispatch(DType t, F&& f) {
  if (t == DType::f32)
    f(float{});
  else
    f(bf16{});
}

// Grid for a grid-stride loop over n elements.
inline unsigned grid_for(std::int64_t n, int threads) {
  const std::int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float part[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  const int n = blockDim.x / 32;
  v = lane < n ? part[lane] : 0.0f;
  return warp_sum(v);
}

}  // namespace ovb::gpt::cuda

#define OVB_CHECK_LAUNCH() OVB_CHECK_CUDA(cudaGetLastError())
