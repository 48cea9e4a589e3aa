// CUDA kernels of Llama blocks, the same formulas as the host loops of kernels/host/llama_ops.hpp:
// RMSNorm (one warp per row for the row statistics, the normalisation and the input gradient;
// the gain gradient a column sum over row chunks with one atomicAdd per column and block, so the
// order of those few additions varies from run to run), the SwiGLU of interleaved gate/up
// columns, and rotary position embeddings in place on the q and k heads. Element at a time with
// fp32 math: these passes are memory-bound next to the GEMMs, and 16-byte packs are the
// follow-up where a profile shows them.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kRowsPerBlock = 8;     // warps per block, one row each
constexpr int kParamRowChunk = 256;  // rows per block of the gain-gradient kernel
constexpr int kThreads = 256;

__device__ __forceinline__ std::int64_t warp_row() {
  return blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
}

unsigned row_blocks(std::int64_t T) {
  return static_cast<unsigned>((T + kRowsPerBlock - 1) / kRowsPerBlock);
}

// stats[t] = sum_c x^2; with b != nullptr the row is x = a + b, rounded to T and stored in out.
template <class T>
__global__ void rms_partial_kernel(const T* a, const T* b, T* out, float* stats, std::int64_t T_,
                                   std::int64_t C) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  float ss = 0;
  for (std::int64_t c = lane; c < C; c += 32) {
    float x = to_f(a[t * C + c]);
    if (b) {
      const T y = from_f<T>(x + to_f(b[t * C + c]));
      out[t * C + c] = y;
      x = to_f(y);  // the statistics of the row as stored
    }
    ss += x * x;
  }
  ss = warp_sum(ss);
  if (lane == 0) stats[t] = ss;
}

template <class T>
__global__ void rms_forward_kernel(const T* x, const float* stats, const T* g, T* out, float* mr,
                                   std::int64_t T_, std::int64_t C, float inv_n) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float rstd = rsqrtf(stats[t] * inv_n + kLnEps);
  if (lane == 0) {
    mr[2 * t] = 0;  // the layer norm's mean slot
    mr[2 * t + 1] = rstd;
  }
  for (std::int64_t c = lane; c < C; c += 32)
    out[t * C + c] = from_f<T>(to_f(x[t * C + c]) * rstd * to_f(g[c]));
}

template <class T>
__global__ void rms_backward_partial_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                            float* sums, std::int64_t T_, std::int64_t C) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float rstd = mr[2 * t + 1];
  float s = 0;
  for (std::int64_t c = lane; c < C; c += 32)
    s += to_f(dy[t * C + c]) * to_f(g[c]) * to_f(x[t * C + c]) * rstd;
  s = warp_sum(s);
  if (lane == 0) sums[t] = s;
}

// dx += rstd (dy g - xhat sums/C_total).
template <class T>
__global__ void rms_backward_dx_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                       const float* sums, T* dx, std::int64_t T_, std::int64_t C,
                                       float inv_n) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float rstd = mr[2 * t + 1], m1 = sums[t] * inv_n;
  for (std::int64_t c = lane; c < C; c += 32) {
    const std::int64_t i = t * C + c;
    const float xhat = to_f(x[i]) * rstd;
    dx[i] = from_f<T>(to_f(dx[i]) + rstd * (to_f(dy[i]) * to_f(g[c]) - xhat * m1));
  }
}

// dg[c] += sum_t dy xhat over a block's kThreads columns and kParamRowChunk rows.
template <class T>
__global__ void rms_backward_gain_kernel(const T* dy, const T* x, const float* mr, float* dg,
                                         std::int64_t T_, std::int64_t C) {
  const std::int64_t c = blockIdx.x * std::int64_t(kThreads) + threadIdx.x;
  if (c >= C) return;
  const std::int64_t t0 = blockIdx.y * std::int64_t(kParamRowChunk);
  const std::int64_t t1 = min(T_, t0 + kParamRowChunk);
  float s = 0;
  for (std::int64_t t = t0; t < t1; ++t)
    s += to_f(dy[t * C + c]) * to_f(x[t * C + c]) * mr[2 * t + 1];
  atomicAdd(dg + c, s);
}

template <class T>
__global__ void swiglu_forward_kernel(const T* gu, T* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const float gate = to_f(gu[2 * i]), up = to_f(gu[2 * i + 1]);
    y[i] = from_f<T>(silu(gate) * up);
  }
}

template <class T>
__global__ void swiglu_backward_kernel(const T* gu, const T* dy, T* dgu, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const float gate = to_f(gu[2 * i]), up = to_f(gu[2 * i + 1]), d = to_f(dy[i]);
    dgu[2 * i] = from_f<T>(d * up * silu_grad(gate));
    dgu[2 * i + 1] = from_f<T>(d * silu(gate));
  }
}

// One thread per rotated pair: index = ((t G + grp) (r + 1) + h) D/2 + i over the r query heads
// and the k head of each group (v is not rotated).
template <class T>
__global__ void rope_kernel(T* qkv, std::int64_t n, std::int64_t S, std::int64_t G, std::int64_t r,
                            std::int64_t D, float theta, float sign) {
  const std::int64_t half = D / 2;
  for (std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; idx < n;
       idx += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx % half;
    const std::int64_t h = idx / half % (r + 1);
    const std::int64_t grp = idx / (half * (r + 1)) % G;
    const std::int64_t t = idx / (half * (r + 1) * G);
    T* x = qkv + t * G * (r + 2) * D + (grp * (r + 2) + h) * D;
    const float a = rope_angle(t % S, i, D, theta);
    const float c = cosf(a), s = sign * sinf(a);
    const float x0 = to_f(x[2 * i]), x1 = to_f(x[2 * i + 1]);
    x[2 * i] = from_f<T>(x0 * c - x1 * s);
    x[2 * i + 1] = from_f<T>(x0 * s + x1 * c);
  }
}

}  // namespace

void CudaKernels::rms_partial(Stream& s, const void* x, float* stats, std::int64_t T,
                              std::int64_t C) {
  add_rms_partial(s, x, nullptr, nullptr, stats, T, C);
}

void CudaKernels::add_rms_partial(Stream& st, const void* a, const void* b, void* out, float* stats,
                                  std::int64_t T, std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    rms_partial_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(a), static_cast<const E*>(b), static_cast<E*>(out), stats, T, C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::rms_forward(Stream& st, const void* x, const float* stats, const void* g,
                              void* out, float* mr, std::int64_t T, std::int64_t C,
                              std::int64_t C_total) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    rms_forward_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(x), stats, static_cast<const E*>(g), static_cast<E*>(out), mr, T, C,
        1.0f / static_cast<float>(C_total));
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::rms_backward_partial(Stream& st, const void* dy, const void* x, const float* mr,
                                       const void* g, float* sums, std::int64_t T, std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    rms_backward_partial_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums, T,
        C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::rms_backward(Stream& st, const void* dy, const void* x, const float* mr,
                               const void* g, const float* sums, void* dx, float* dg,
                               std::int64_t T, std::int64_t C, std::int64_t C_total) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    rms_backward_dx_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums,
        static_cast<E*>(dx), T, C, 1.0f / static_cast<float>(C_total));
    OVB_CHECK_LAUNCH();
    const dim3 grid(static_cast<unsigned>((C + kThreads - 1) / kThreads),
                    static_cast<unsigned>((T + kParamRowChunk - 1) / kParamRowChunk));
    rms_backward_gain_kernel<E><<<grid, kThreads, 0, s>>>(static_cast<const E*>(dy),
                                                          static_cast<const E*>(x), mr, dg, T, C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::swiglu_forward(Stream& st, const void* gu, void* y, std::int64_t T,
                                 std::int64_t F) {
  const std::int64_t n = T * F;
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    swiglu_forward_kernel<E><<<grid_for(n, kThreads), kThreads, 0, native(st)>>>(
        static_cast<const E*>(gu), static_cast<E*>(y), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::swiglu_backward(Stream& st, const void* gu, const void* dy, void* dgu,
                                  std::int64_t T, std::int64_t F) {
  const std::int64_t n = T * F;
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    swiglu_backward_kernel<E><<<grid_for(n, kThreads), kThreads, 0, native(st)>>>(
        static_cast<const E*>(gu), static_cast<const E*>(dy), static_cast<E*>(dgu), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::rope(Stream& st, void* qkv, std::int64_t B, std::int64_t S, std::int64_t G,
                       std::int64_t r, std::int64_t D, float theta, bool backward) {
  const std::int64_t n = B * S * G * (r + 1) * (D / 2);
  if (n == 0) return;
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    rope_kernel<E><<<grid_for(n, kThreads), kThreads, 0, native(st)>>>(
        static_cast<E*>(qkv), n, S, G, r, D, theta, backward ? -1.0f : 1.0f);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
