// Element conversion in the suite's CUDA kernels (the trainer's in endtoend/, ovb-membw's in
// microbench/): fp32 or bf16 in memory, fp32 arithmetic; bf16 rounds to nearest even, as
// ovb::float_to_bf16_bits does on the host.
#pragma once

#include <cuda_bf16.h>

namespace ovb::cuda {

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
  return __float2bfloat16(x);
}

}  // namespace ovb::cuda
