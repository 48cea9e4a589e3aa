// CUDA implementations of the memory-bound kernel classes (see membw/mem_kernels.hpp): grid-stride
// element-wise kernels and one block per row for the row-wise classes, fp32 and bf16 (fp32
// arithmetic). Checked against the double-precision reference in the same binary before timing.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "membw/mem_kernels.hpp"
#include "ovb/cuda/check.hpp"
#include "ovb/cuda/element.cuh"
#include "ovb/error.hpp"

namespace ovb::mb {

namespace {
using K = MemConstants;
using bf16 = ovb::cuda::bf16;
constexpr int kThreads = 256;

using ovb::cuda::from_f;
using ovb::cuda::to_f;

// Sum (or max) over the block; every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float part[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = part[0];
  for (int i = 1; i < kThreads / 32; ++i) v = kMax ? fmaxf(v, part[i]) : v + part[i];
  __syncthreads();  // part is reused by the next reduction
  return v;
}

#define GRID_STRIDE(i, n)                                                                          \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

template <class T>
__global__ void copy_k(const T* __restrict__ x, T* __restrict__ y, std::int64_t n) {
  GRID_STRIDE(i, n) y[i] = x[i];
}

template <class T>
__global__ void residual_k(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                           std::int64_t n) {
  GRID_STRIDE(i, n) y[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

template <class T>
__global__ void bias_gelu_k(const T* __restrict__ x, const T* __restrict__ b, T* __restrict__ pre,
                            T* __restrict__ y, std::int64_t n, std::int64_t row) {
  GRID_STRIDE(i, n) {
    const T p = from_f<T>(to_f(x[i]) + to_f(b[i % row]));
    pre[i] = p;
    y[i] = from_f<T>(gelu(to_f(p)));  // from the stored pre-activation, as backward sees it
  }
}

template <class T>
__global__ void swiglu_k(const T* __restrict__ g, const T* __restrict__ u, T* __restrict__ y,
                         std::int64_t n) {
  GRID_STRIDE(i, n) {
    const float x = to_f(g[i]);
    y[i] = from_f<T>(x / (1.0f + expf(-x)) * to_f(u[i]));
  }
}

template <class T>
__global__ void rope_k(T* __restrict__ x, std::int64_t n, std::int64_t row) {
  GRID_STRIDE(p, n / 2) {  // one pair per thread
    const std::int64_t e = 2 * p, r = e / row, i = (e % row) / 2;
    const float ang = rope_angle(r % K::rope_positions, i, row, K::rope_theta);
    const float c = cosf(ang), s = sinf(ang);  // as the trainer's kernel
    const float x0 = to_f(x[e]), x1 = to_f(x[e + 1]);
    x[e] = from_f<T>(x0 * c - x1 * s);
    x[e + 1] = from_f<T>(x0 * s + x1 * c);
  }
}

template <class T>
__global__ void dropout_k(const T* __restrict__ x, T* __restrict__ y,
                          std::uint8_t* __restrict__ mask, std::int64_t n) {
  const float scale = 1.0f / (1.0f - K::dropout_p);
  GRID_STRIDE(i, n) {
    const bool keep = dropout_keep(static_cast<std::uint64_t>(i), K::dropout_seed, K::dropout_p);
    mask[i] = keep ? 1 : 0;
    y[i] = from_f<T>(keep ? to_f(x[i]) * scale : 0.0f);
  }
}

template <class T>
__global__ void grad_accum_k(float* __restrict__ acc, const T* __restrict__ g, std::int64_t n) {
  GRID_STRIDE(i, n) acc[i] += to_f(g[i]);
}

template <class T>
__global__ void adamw_k(float* __restrict__ p, float* __restrict__ m, float* __restrict__ v,
                        const T* __restrict__ g, T* __restrict__ w, std::int64_t n, float c1,
                        float c2) {
  GRID_STRIDE(i, n) {
    const float gi = to_f(g[i]);
    const float mi = K::beta1 * m[i] + (1.0f - K::beta1) * gi;
    const float vi = K::beta2 * v[i] + (1.0f - K::beta2) * gi * gi;
    const float pi =
        p[i] - K::lr * (mi * c1 / (sqrtf(vi * c2) + K::adam_eps) + K::weight_decay * p[i]);
    m[i] = mi;
    v[i] = vi;
    p[i] = pi;
    if (w) w[i] = from_f<T>(pi);
  }
}

// LayerNorm (beta != nullptr: mean and rstd in stats[2r], [2r+1]) or RMSNorm (rstd in stats[r]).
template <class T>
__global__ void norm_k(const T* __restrict__ x, const T* __restrict__ gamma,
                       const T* __restrict__ beta, T* __restrict__ y, float* __restrict__ stats,
                       std::int64_t row) {
  const T* xr = x + blockIdx.x * row;
  T* yr = y + blockIdx.x * row;
  float sum = 0, sq = 0;
  for (std::int64_t j = threadIdx.x; j < row; j += blockDim.x) {
    const float v = to_f(xr[j]);
    sum += v;
    sq += v * v;
  }
  sum = block_reduce<false>(sum);
  sq = block_reduce<false>(sq);
  const float mean = beta ? sum / static_cast<float>(row) : 0.0f;
  const float rstd = rsqrtf(sq / static_cast<float>(row) - mean * mean + K::ln_eps);
  for (std::int64_t j = threadIdx.x; j < row; j += blockDim.x) {
    const float v = (to_f(xr[j]) - mean) * rstd * to_f(gamma[j]);
    yr[j] = from_f<T>(beta ? v + to_f(beta[j]) : v);
  }
  if (threadIdx.x == 0) {
    if (beta) {
      stats[2 * blockIdx.x] = mean;
      stats[2 * blockIdx.x + 1] = rstd;
    } else {
      stats[blockIdx.x] = rstd;
    }
  }
}

// Softmax of each row into y, or (y == nullptr) the cross-entropy loss of each row.
template <class T>
__global__ void softmax_k(const T* __restrict__ x, T* __restrict__ y,
                          const std::int32_t* __restrict__ target, float* __restrict__ loss,
                          std::int64_t row) {
  const T* xr = x + blockIdx.x * row;
  float mx = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < row; j += blockDim.x) mx = fmaxf(mx, to_f(xr[j]));
  mx = block_reduce<true>(mx);
  float sum = 0;
  for (std::int64_t j = threadIdx.x; j < row; j += blockDim.x) sum += expf(to_f(xr[j]) - mx);
  sum = block_reduce<false>(sum);
  if (y) {
    const float inv = 1.0f / sum;
    for (std::int64_t j = threadIdx.x; j < row; j += blockDim.x)
      y[blockIdx.x * row + j] = from_f<T>(expf(to_f(xr[j]) - mx) * inv);
  } else if (threadIdx.x == 0) {
    loss[blockIdx.x] = mx + logf(sum) - to_f(xr[target[blockIdx.x]]);
  }
}

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

template <class T>
void launch(const MemArgs& a, cudaStream_t s) {
  auto buf = [&](int i) { return a.buf[static_cast<std::size_t>(i)]; };
  auto in = [&](int i) { return static_cast<const T*>(buf(i)); };
  auto out = [&](int i) { return static_cast<T*>(buf(i)); };
  auto f32 = [&](int i) { return static_cast<float*>(buf(i)); };
  const std::int64_t n = a.n, rows = a.n / a.row;
  const unsigned g = grid_for(n);
  switch (a.c) {
    case MemClass::copy: copy_k<T><<<g, kThreads, 0, s>>>(in(0), out(1), n); break;
    case MemClass::residual: residual_k<T><<<g, kThreads, 0, s>>>(in(0), in(1), out(2), n); break;
    case MemClass::bias_gelu:
      bias_gelu_k<T><<<g, kThreads, 0, s>>>(in(0), in(1), out(2), out(3), n, a.row);
      break;
    case MemClass::swiglu: swiglu_k<T><<<g, kThreads, 0, s>>>(in(0), in(1), out(2), n); break;
    case MemClass::rope: rope_k<T><<<g, kThreads, 0, s>>>(out(0), n, a.row); break;
    case MemClass::dropout:
      dropout_k<T><<<g, kThreads, 0, s>>>(in(0), out(1), static_cast<std::uint8_t*>(buf(2)), n);
      break;
    case MemClass::grad_accum: grad_accum_k<T><<<g, kThreads, 0, s>>>(f32(0), in(1), n); break;
    case MemClass::adamw: {
      const float c1 = 1.0f / (1.0f - powf(K::beta1, K::adam_step)),
                  c2 = 1.0f / (1.0f - powf(K::beta2, K::adam_step));
      T* w = a.t == DType::f32 ? nullptr : out(4);
      adamw_k<T><<<g, kThreads, 0, s>>>(f32(0), f32(1), f32(2), in(3), w, n, c1, c2);
      break;
    }
    case MemClass::layernorm:
      norm_k<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(in(0), in(1), in(2), out(3),
                                                                 f32(4), a.row);
      break;
    case MemClass::rmsnorm:
      norm_k<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(in(0), in(1), nullptr, out(2),
                                                                 f32(3), a.row);
      break;
    case MemClass::softmax:
      softmax_k<T>
          <<<static_cast<unsigned>(rows), kThreads, 0, s>>>(in(0), out(1), nullptr, nullptr, a.row);
      break;
    case MemClass::cross_entropy:
      softmax_k<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
          in(0), nullptr, static_cast<const std::int32_t*>(buf(1)), f32(2), a.row);
      break;
  }
  OVB_CHECK_CUDA(cudaGetLastError());
}
}  // namespace

void run_cuda_mem_kernel(const MemArgs& a, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (a.t) {
    case DType::f32: return launch<float>(a, s);
    case DType::bf16: return launch<bf16>(a, s);
    default:
      throw UsageError("ovb-membw's CUDA kernels take fp32 and bf16, not " +
                       std::string(name_of(a.t)));
  }
}

}  // namespace ovb::mb
