// CUDA kernels: gradient-norm sum of squares (block sums, one atomic per block) and the fused
// AdamW update with global-norm clipping read from the device (no host synchronisation) and the
// cast of the updated weights to the working copy.
#include <algorithm>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/launch.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt::cuda {

namespace {

__global__ void sumsq_kernel(const float* x, std::int64_t n, float* acc) {
  float s = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    s += x[i] * x[i];
  s = block_sum(s);
  if (threadIdx.x == 0) atomicAdd(acc, s);
}

template <class T>
__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, T* work, std::int64_t n,
                             AdamWParams a, const float* norm_sumsq) {
  const float scale = clip_scale(a.clip, *norm_sumsq);
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    float mi = m[i], vi = v[i];
    const float pi = adamw_update(p[i], g[i] * scale, mi, vi, a.lr, a.beta1, a.beta2, a.eps,
                                  a.weight_decay, a.bc1, a.bc2);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
    if (work) work[i] = from_f<T>(pi);
  }
}

}  // namespace

void launch_sumsq(cudaStream_t s, const float* x, std::int64_t n, float* acc) {
  if (n == 0) return;
  const unsigned blocks = std::min(grid_for(n, 256), 1024u);
  sumsq_kernel<<<blocks, 256, 0, s>>>(x, n, acc);
  OVB_CHECK_LAUNCH();
}

void launch_adamw(cudaStream_t s, DType act, float* p, const float* g, float* m, float* v,
                  void* work, std::int64_t n, const AdamWParams& a, const float* norm_sumsq) {
  if (n == 0) return;
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    adamw_kernel<E>
        <<<grid_for(n, 256), 256, 0, s>>>(p, g, m, v, static_cast<E*>(work), n, a, norm_sumsq);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
