// CUDA kernels: vocab-parallel cross-entropy. One block per token row for the slice statistics
// (online max / sum of exp) and for the logits gradient; one thread per token to combine the
// slices' statistics after the all-gather over Y.
#include <cmath>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kThreads = 256;

// (m, s) represents s * exp(m); combining keeps the larger exponent.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
  const float M = fmaxf(m, m2);
  if (M == -INFINITY) return;
  s = (m == -INFINITY ? 0.0f : s * __expf(m - M)) + (m2 == -INFINITY ? 0.0f : s2 * __expf(m2 - M));
  m = M;
}

template <class T>
__global__ void ce_partial_kernel(const T* logits, const std::int32_t* targets, float* stats,
                                  std::int64_t T_, std::int64_t V, std::int64_t v0) {
  __shared__ float pm[32], ps[32];
  const std::int64_t t = blockIdx.x;
  const T* row = logits + t * V;
  float m = -INFINITY, s = 0;
  for (std::int64_t v = threadIdx.x; v < V; v += blockDim.x) combine(m, s, to_f(row[v]), 1.0f);
  for (int o = 16; o > 0; o >>= 1)
    combine(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    pm[warp] = m;
    ps[warp] = s;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) combine(m, s, pm[w], ps[w]);
    const std::int64_t tv = targets[t] - v0;
    stats[t] = m;
    stats[T_ + t] = s;
    stats[2 * T_ + t] = (tv >= 0 && tv < V) ? to_f(row[tv]) : 0.0f;
  }
}

__global__ void ce_combine_kernel(const float* parts, int n, float* lse, float* loss_sum,
                                  std::int64_t T_) {
  const std::int64_t t = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  float loss = 0;
  if (t < T_) {
    float m = -INFINITY, s = 0, target = 0;
    for (int i = 0; i < n; ++i) {
      combine(m, s, parts[i * 3 * T_ + t], parts[i * 3 * T_ + T_ + t]);
      target += parts[i * 3 * T_ + 2 * T_ + t];
    }
    lse[t] = m + logf(s);
    loss = lse[t] - target;
  }
  if (loss_sum) {
    loss = block_sum(loss);
    if (threadIdx.x == 0) atomicAdd(loss_sum, loss);
  }
}

template <class T>
__global__ void ce_backward_kernel(T* logits, const std::int32_t* targets, const float* lse,
                                   float scale, std::int64_t V, std::int64_t v0) {
  const std::int64_t t = blockIdx.x;
  T* row = logits + t * V;
  const float l = lse[t];
  const std::int64_t tv = targets[t] - v0;
  for (std::int64_t v = threadIdx.x; v < V; v += blockDim.x)
    row[v] = from_f<T>(scale * (__expf(to_f(row[v]) - l) - (v == tv ? 1.0f : 0.0f)));
}

}  // namespace

void CudaKernels::ce_partial(Stream& st, const void* logits, const std::int32_t* targets,
                             float* stats, std::int64_t T, std::int64_t V, std::int64_t v0) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    ce_partial_kernel<E><<<static_cast<unsigned>(T), kThreads, 0, s>>>(
        static_cast<const E*>(logits), targets, stats, T, V, v0);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::ce_combine(Stream& st, const float* parts, int n, float* lse, float* loss_sum,
                             std::int64_t T) {
  const cudaStream_t s = native(st);
  ce_combine_kernel<<<static_cast<unsigned>((T + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      parts, n, lse, loss_sum, T);
  OVB_CHECK_LAUNCH();
}

void CudaKernels::ce_backward(Stream& st, void* logits, const std::int32_t* targets,
                              const float* lse, float scale, std::int64_t T, std::int64_t V,
                              std::int64_t v0) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    ce_backward_kernel<E><<<static_cast<unsigned>(T), kThreads, 0, s>>>(static_cast<E*>(logits),
                                                                        targets, lse, scale, V, v0);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
