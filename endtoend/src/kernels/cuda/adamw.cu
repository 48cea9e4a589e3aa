// CUDA kernels: gradient-norm sum of squares and the fused AdamW update, both memory-bound single
// passes with 16-byte accesses: AdamW reads p, g, m, v (fp32 x 4) and writes p, m, v and the
// working copy (bf16 x 4, 8 bytes) in one pass, with the global-norm clipping factor read from
// the device (no host synchronisation). A run of the flat buffers may start at any element: the
// few elements before the first 16-byte boundary and after the last whole vector are done one by
// one by the first threads.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kThreads = 256;

struct AdamWParams {  // AdamWArgs (kernels.hpp) with the bias corrections of its step
  float lr, beta1, beta2, eps, weight_decay;
  float bc1, bc2;  // 1 - beta^step
  float clip;      // > 0: scale gradients by min(1, clip / norm), norm from the device
};

// Elements before p reaches a 16-byte boundary (p is 4-byte aligned: 0..3).
int head_elements(const float* p, std::int64_t n) {
  const auto mis = static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % 16 / 4);
  return static_cast<int>(std::min<std::int64_t>(n, (4 - mis) % 4));
}

__global__ void sumsq_kernel(const float* x, std::int64_t n, int head, float* acc) {
  const std::int64_t tid = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t nvec = (n - head) / 4, tail0 = head + 4 * nvec;
  float s = 0;
  for (std::int64_t j = tid; j < nvec; j += stride) {
    const float4 v = *reinterpret_cast<const float4*>(x + head + 4 * j);
    s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  if (tid < head) s += x[tid] * x[tid];
  if (tid < n - tail0) s += x[tail0 + tid] * x[tail0 + tid];
  s = block_sum(s);
  if (threadIdx.x == 0) atomicAdd(acc, s);
}

template <class T>
__device__ __forceinline__ void adamw_one(float* p, const float* g, float* m, float* v, T* work,
                                          std::int64_t i, float scale, const AdamWParams& a) {
  float mi = m[i], vi = v[i];
  const float pi = adamw_update(p[i], g[i] * scale, mi, vi, a.lr, a.beta1, a.beta2, a.eps,
                                a.weight_decay, a.bc1, a.bc2);
  p[i] = pi;
  m[i] = mi;
  v[i] = vi;
  if (work) work[i] = from_f<T>(pi);
}

// Elements [0, head) one by one (all of them when the buffers' alignments differ), then whole
// vectors of 4, then the tail.
template <class T>
__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, T* work, std::int64_t n,
                             std::int64_t head, AdamWParams a, const float* norm_sumsq) {
  const float scale = clip_scale(a.clip, *norm_sumsq);
  const std::int64_t tid = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t nvec = (n - head) / 4, tail0 = head + 4 * nvec;
  for (std::int64_t j = tid; j < nvec; j += stride) {
    const std::int64_t i = head + 4 * j;
    const float4 pv = *reinterpret_cast<const float4*>(p + i);
    const float4 gv = *reinterpret_cast<const float4*>(g + i);
    float4 mv = *reinterpret_cast<const float4*>(m + i);
    float4 vv = *reinterpret_cast<const float4*>(v + i);
    float pi[4] = {pv.x, pv.y, pv.z, pv.w}, gi[4] = {gv.x, gv.y, gv.z, gv.w};
    float mi[4] = {mv.x, mv.y, mv.z, mv.w}, vi[4] = {vv.x, vv.y, vv.z, vv.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
      pi[k] = adamw_update(pi[k], gi[k] * scale, mi[k], vi[k], a.lr, a.beta1, a.beta2, a.eps,
                           a.weight_decay, a.bc1, a.bc2);
    *reinterpret_cast<float4*>(p + i) = make_float4(pi[0], pi[1], pi[2], pi[3]);
    *reinterpret_cast<float4*>(m + i) = make_float4(mi[0], mi[1], mi[2], mi[3]);
    *reinterpret_cast<float4*>(v + i) = make_float4(vi[0], vi[1], vi[2], vi[3]);
    if (work) store_pack<4>(work + i, pi);  // 8 bytes (bf16) or 16 (fp32), aligned with p
  }
  for (std::int64_t i = tid; i < head; i += stride) adamw_one(p, g, m, v, work, i, scale, a);
  if (tid < n - tail0) adamw_one(p, g, m, v, work, tail0 + tid, scale, a);
}

unsigned blocks_for(std::int64_t n) {
  return std::min(grid_for((n + 3) / 4, kThreads), 132u * 16);  // a few waves on an H100
}

}  // namespace

void CudaKernels::sumsq(Stream& st, const float* x, std::int64_t n, float* acc) {
  const cudaStream_t s = native(st);
  if (n == 0) return;
  sumsq_kernel<<<std::min(blocks_for(n), 1024u), kThreads, 0, s>>>(x, n, head_elements(x, n), acc);
  OVB_CHECK_LAUNCH();
}

void CudaKernels::adamw(Stream& st, float* p, const float* g, float* m, float* v, void* work,
                        std::int64_t n, const AdamWArgs& args, const float* norm_sumsq) {
  const cudaStream_t s = native(st);
  const AdamWParams a{args.lr,
                      args.beta1,
                      args.beta2,
                      args.eps,
                      args.weight_decay,
                      1.0f - std::pow(args.beta1, static_cast<float>(args.step)),
                      1.0f - std::pow(args.beta2, static_cast<float>(args.step)),
                      args.clip};
  if (n == 0) return;
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    // In gpt4d p, g, m, v and work are one offset into buffers of equal alignment, so one head
    // count aligns them all (work to 16 / (4 / sizeof(E)) bytes); otherwise all go one by one.
    std::int64_t head = head_elements(p, n);
    const std::uintptr_t wb = reinterpret_cast<std::uintptr_t>(work);
    for (const float* q :
         {static_cast<const float*>(g), static_cast<const float*>(m), static_cast<const float*>(v)})
      if (head_elements(q, n) != head) head = n;
    if (work && (wb + head * sizeof(E)) % (4 * sizeof(E)) != 0) head = n;
    adamw_kernel<E><<<blocks_for(n), kThreads, 0, s>>>(p, g, m, v, static_cast<E*>(work), n, head,
                                                       a, norm_sumsq);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
