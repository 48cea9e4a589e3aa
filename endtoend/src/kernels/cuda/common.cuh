// Shared device helpers of the CUDA kernels: element conversion, 16-byte vector access, dtype
// dispatch, warp and block reductions, launch checks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

#include "ovb/backend.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/cuda/element.cuh"
#include "ovb/dtype.hpp"

namespace ovb::gpt::cuda {

using bf16 = ovb::cuda::bf16;

// The CUDA stream behind a Stream of the CUDA backend.
inline cudaStream_t native(Stream& s) {
  return static_cast<cudaStream_t>(s.native());
}

using ovb::cuda::from_f;  // element conversion, shared with the suite's other CUDA kernels
using ovb::cuda::to_f;

// V consecutive elements moved as one access (16 bytes for bf16 x 8 or fp32 x 4): the
// vectorised kernels need 16-byte aligned rows (see vec_width), the scalar fallback has V = 1.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <int V, class T>
__device__ __forceinline__ void load_pack(const T* p, float (&out)[V]) {
  const Pack<T, V> pk = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = to_f(pk.v[i]);
}

template <int V, class T>
__device__ __forceinline__ void store_pack(T* p, const float (&in)[V]) {
  Pack<T, V> pk;
#pragma unroll
  for (int i = 0; i < V; ++i) pk.v[i] = from_f<T>(in[i]);
  *reinterpret_cast<Pack<T, V>*>(p) = pk;
}

// Elements per 16-byte access of T when every pointer is 16-byte aligned and rows of `cols`
// elements keep that alignment; else 1 (the scalar path).
template <class T>
inline int vec_width(std::int64_t cols, std::initializer_list<const void*> ptrs) {
  constexpr int w = static_cast<int>(16 / sizeof(T));
  if (cols % w != 0) return 1;
  for (const void* p : ptrs)
    if (p && reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return 1;
  return w;
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
