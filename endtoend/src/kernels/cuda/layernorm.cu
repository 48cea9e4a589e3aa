// CUDA kernels: layer norm of rows whose features are split over ranks. One warp per row for the
// row statistics (optionally fused with the residual add that produces the row), the
// normalisation and the input gradient, with 16-byte loads (bf16 x 8, fp32 x 4) and fp32 math
// where rows are 16-byte aligned (vec_width; else the same kernels one element at a time).
// The gamma/beta gradients are column sums over tokens: blocks of 32*V columns x 256 rows sum in
// registers and shared memory, then add their partial sums to dg/db with one atomicAdd per column
// and block (the order of those few additions varies from run to run).
#include <type_traits>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kRowsPerBlock = 8;     // warps per block, one row each
constexpr int kParamRowGroups = 8;   // threadIdx.y of the gamma/beta kernel
constexpr int kParamRowChunk = 256;  // rows per block of the gamma/beta kernel

__device__ __forceinline__ std::int64_t warp_row() {
  return blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
}

// stats[2t] = sum_c x, stats[2t+1] = sum_c x^2 of row t; with b != nullptr the row is
// x = a + b, rounded to T and stored in out first (the residual add fused in).
template <class T, int V>
__global__ void ln_partial_kernel(const T* a, const T* b, T* out, float* stats, std::int64_t T_,
                                  std::int64_t C) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  float s = 0, ss = 0;
  for (std::int64_t c = lane * V; c < C; c += 32 * V) {
    float x[V];
    load_pack<V>(a + t * C + c, x);
    if (b) {
      float y[V];
      load_pack<V>(b + t * C + c, y);
#pragma unroll
      for (int i = 0; i < V; ++i) x[i] = to_f(from_f<T>(x[i] + y[i]));  // as stored
      store_pack<V>(out + t * C + c, x);
    }
#pragma unroll
    for (int i = 0; i < V; ++i) {
      s += x[i];
      ss += x[i] * x[i];
    }
  }
  s = warp_sum(s);
  ss = warp_sum(ss);
  if (lane == 0) {
    stats[2 * t] = s;
    stats[2 * t + 1] = ss;
  }
}

template <class T, int V>
__global__ void ln_forward_kernel(const T* x, const float* stats, const T* g, const T* b, T* out,
                                  float* mr, std::int64_t T_, std::int64_t C, float inv_n) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = stats[2 * t] * inv_n;
  const float var = fmaxf(stats[2 * t + 1] * inv_n - mean * mean, 0.0f);
  const float rstd = rsqrtf(var + kLnEps);
  if (lane == 0) {
    mr[2 * t] = mean;
    mr[2 * t + 1] = rstd;
  }
  for (std::int64_t c = lane * V; c < C; c += 32 * V) {
    float xv[V], gv[V], bv[V], o[V];
    load_pack<V>(x + t * C + c, xv);
    load_pack<V>(g + c, gv);
    load_pack<V>(b + c, bv);
#pragma unroll
    for (int i = 0; i < V; ++i) o[i] = (xv[i] - mean) * rstd * gv[i] + bv[i];
    store_pack<V>(out + t * C + c, o);
  }
}

template <class T, int V>
__global__ void ln_backward_partial_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                           float* sums, std::int64_t T_, std::int64_t C) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = mr[2 * t], rstd = mr[2 * t + 1];
  float s0 = 0, s1 = 0;
  for (std::int64_t c = lane * V; c < C; c += 32 * V) {
    float dv[V], xv[V], gv[V];
    load_pack<V>(dy + t * C + c, dv);
    load_pack<V>(x + t * C + c, xv);
    load_pack<V>(g + c, gv);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float dxhat = dv[i] * gv[i];
      s0 += dxhat;
      s1 += dxhat * (xv[i] - mean) * rstd;
    }
  }
  s0 = warp_sum(s0);
  s1 = warp_sum(s1);
  if (lane == 0) {
    sums[2 * t] = s0;
    sums[2 * t + 1] = s1;
  }
}

// dx += rstd (dy g - sums0/C_total - xhat sums1/C_total).
template <class T, int V>
__global__ void ln_backward_dx_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                      const float* sums, T* dx, std::int64_t T_, std::int64_t C,
                                      float inv_n) {
  const std::int64_t t = warp_row();
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = mr[2 * t], rstd = mr[2 * t + 1];
  const float m0 = sums[2 * t] * inv_n, m1 = sums[2 * t + 1] * inv_n;
  for (std::int64_t c = lane * V; c < C; c += 32 * V) {
    float dv[V], xv[V], gv[V], acc[V];
    load_pack<V>(dy + t * C + c, dv);
    load_pack<V>(x + t * C + c, xv);
    load_pack<V>(g + c, gv);
    load_pack<V>(dx + t * C + c, acc);
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] += rstd * (dv[i] * gv[i] - m0 - (xv[i] - mean) * rstd * m1);
    store_pack<V>(dx + t * C + c, acc);
  }
}

// dg[c] += sum_t dy xhat, db[c] += sum_t dy over a block's 32*V columns and kParamRowChunk rows.
template <class T, int V>
__global__ void __launch_bounds__(32 * kParamRowGroups)
    ln_backward_params_kernel(const T* dy, const T* x, const float* mr, float* dg, float* db,
                              std::int64_t T_, std::int64_t C) {
  __shared__ float red[2][kParamRowGroups][32 * V];
  const std::int64_t c0 = blockIdx.x * std::int64_t(32 * V);
  const std::int64_t c = c0 + threadIdx.x * V;
  float sg[V], sb[V];
#pragma unroll
  for (int i = 0; i < V; ++i) sg[i] = sb[i] = 0;
  if (c < C) {
    const std::int64_t t1 = min(T_, (blockIdx.y + 1) * std::int64_t(kParamRowChunk));
    for (std::int64_t t = blockIdx.y * std::int64_t(kParamRowChunk) + threadIdx.y; t < t1;
         t += kParamRowGroups) {
      float dv[V], xv[V];
      load_pack<V>(dy + t * C + c, dv);
      load_pack<V>(x + t * C + c, xv);
      const float mean = mr[2 * t], rstd = mr[2 * t + 1];
#pragma unroll
      for (int i = 0; i < V; ++i) {
        sg[i] += dv[i] * (xv[i] - mean) * rstd;
        sb[i] += dv[i];
      }
    }
  }
#pragma unroll
  for (int i = 0; i < V; ++i) {
    red[0][threadIdx.y][threadIdx.x * V + i] = sg[i];
    red[1][threadIdx.y][threadIdx.x * V + i] = sb[i];
  }
  __syncthreads();
  const int tid = threadIdx.y * 32 + threadIdx.x;
  for (int k = tid; k < 2 * 32 * V; k += 32 * kParamRowGroups) {
    const int which = k / (32 * V), col = k % (32 * V);
    if (c0 + col >= C) continue;
    float s = 0;
#pragma unroll
    for (int r = 0; r < kParamRowGroups; ++r) s += red[which][r][col];
    atomicAdd((which == 0 ? dg : db) + c0 + col, s);
  }
}

unsigned row_blocks(std::int64_t T) {
  return static_cast<unsigned>((T + kRowsPerBlock - 1) / kRowsPerBlock);
}

// Calls f(T{}, std::integral_constant<int, V>{}) with V the vector width for these pointers.
template <class F>
void dispatch_vec(DType act, std::int64_t C, std::initializer_list<const void*> ptrs, F&& f) {
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    constexpr int w = static_cast<int>(16 / sizeof(E));
    if (vec_width<E>(C, ptrs) == w)
      f(tag, std::integral_constant<int, w>{});
    else
      f(tag, std::integral_constant<int, 1>{});
  });
}

}  // namespace

void CudaKernels::ln_partial(Stream& s, const void* x, float* stats, std::int64_t T,
                             std::int64_t C) {
  add_ln_partial(s, x, nullptr, nullptr, stats, T, C);
}

void CudaKernels::add_ln_partial(Stream& st, const void* a, const void* b, void* out, float* stats,
                                 std::int64_t T, std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch_vec(act_, C, {a, b, out}, [&](auto tag, auto v) {
    using E = decltype(tag);
    ln_partial_kernel<E, decltype(v)::value><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(a), static_cast<const E*>(b), static_cast<E*>(out), stats, T, C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::ln_forward(Stream& st, const void* x, const float* stats, const void* g,
                             const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                             std::int64_t C_total) {
  const cudaStream_t s = native(st);
  dispatch_vec(act_, C, {x, g, b, out}, [&](auto tag, auto v) {
    using E = decltype(tag);
    ln_forward_kernel<E, decltype(v)::value><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(x), stats, static_cast<const E*>(g), static_cast<const E*>(b),
        static_cast<E*>(out), mr, T, C, 1.0f / static_cast<float>(C_total));
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::ln_backward_partial(Stream& st, const void* dy, const void* x, const float* mr,
                                      const void* g, float* sums, std::int64_t T, std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch_vec(act_, C, {dy, x, g}, [&](auto tag, auto v) {
    using E = decltype(tag);
    ln_backward_partial_kernel<E, decltype(v)::value><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums, T,
        C);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::ln_backward(Stream& st, const void* dy, const void* x, const float* mr,
                              const void* g, const float* sums, void* dx, float* dg, float* db,
                              std::int64_t T, std::int64_t C, std::int64_t C_total) {
  const cudaStream_t s = native(st);
  dispatch_vec(act_, C, {dy, x, g, dx}, [&](auto tag, auto v) {
    using E = decltype(tag);
    constexpr int V = decltype(v)::value;
    ln_backward_dx_kernel<E, V><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums,
        static_cast<E*>(dx), T, C, 1.0f / static_cast<float>(C_total));
    const dim3 grid(static_cast<unsigned>((C + 32 * V - 1) / (32 * V)),
                    static_cast<unsigned>((T + kParamRowChunk - 1) / kParamRowChunk));
    ln_backward_params_kernel<E, V><<<grid, dim3(32, kParamRowGroups), 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, dg, db, T, C);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
