// CUDA kernels: memory, initialisation by global index, casts, residual add, fp32 accumulation,
// GELU, bias gradient (see kernels.hpp for the contracts; the host versions are in
// kernels/host/elementwise.cpp).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "kernels/math.hpp"
#include "model/rng.hpp"

namespace ovb::gpt::cuda {

namespace {

struct InitArgs {  // what the initialiser needs of a TensorDesc (layout.hpp)
  std::int64_t count, cols, row0, col0, block_cols, flat0;
  std::uint64_t seed, id;
  float stddev;
  int init;  // 0 normal, 1 ones, 2 zeros
};

__global__ void init_kernel(float* p, InitArgs a) {
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < a.count;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    float v = a.init == 1 ? 1.0f : 0.0f;
    if (a.init == 0) {
      const std::int64_t f = a.flat0 + e;
      const std::int64_t g = (a.row0 + f / a.block_cols) * a.cols + a.col0 + f % a.block_cols;
      v = a.stddev * normal_at(a.seed, a.id, static_cast<std::uint64_t>(g));
    }
    p[e] = v;
  }
}

template <class To, class From>
__global__ void cast_kernel(const From* src, To* dst, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = from_f<To>(to_f(src[i]));
}

template <class T>
__global__ void add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
}

__global__ void accumulate_kernel(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

template <class T>
__global__ void gelu_fwd_kernel(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] = from_f<T>(gelu(to_f(x[i])));
}

template <class T>
__global__ void gelu_bwd_kernel(const T* x, const T* dy, T* dx, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dx[i] = from_f<T>(gelu_grad(to_f(x[i])) * to_f(dy[i]));
}

// db[c] += sum_t dy[t, c]: 32 columns per block (coalesced rows), 16 row lanes, no atomics.
template <class T>
__global__ void bias_grad_kernel(const T* dy, float* db, std::int64_t T_, std::int64_t C) {
  __shared__ float part[16][33];
  const std::int64_t c = blockIdx.x * 32 + threadIdx.x;
  float s = 0;
  if (c < C)
    for (std::int64_t t = threadIdx.y; t < T_; t += 16) s += to_f(dy[t * C + c]);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    for (int r = 1; r < 16; ++r) s += part[r][threadIdx.x];
    db[c] += s;
  }
}

}  // namespace

void CudaKernels::zero(Stream& s, void* p, std::size_t bytes) {
  OVB_CHECK_CUDA(cudaMemsetAsync(p, 0, bytes, native(s)));
}

void CudaKernels::init_tensor(Stream& s, float* params, const TensorDesc& t, std::uint64_t seed) {
  const InitArgs a{t.count,      t.cols,
                   t.row0,       t.col0,
                   t.block_cols, t.flat0,
                   seed,         t.id,
                   t.stddev,     t.init == Init::normal ? 0 : (t.init == Init::ones ? 1 : 2)};
  if (a.count == 0) return;
  init_kernel<<<grid_for(a.count, 256), 256, 0, native(s)>>>(params + t.offset, a);
  OVB_CHECK_LAUNCH();
}

void CudaKernels::to_act(Stream& st, const float* src, void* dst, std::int64_t n) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using T = decltype(tag);
    cast_kernel<T, float><<<grid_for(n, 256), 256, 0, s>>>(src, static_cast<T*>(dst), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::to_f32(Stream& st, const void* src, float* dst, std::int64_t n) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using T = decltype(tag);
    cast_kernel<float, T><<<grid_for(n, 256), 256, 0, s>>>(static_cast<const T*>(src), dst, n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::add(Stream& st, const void* a, const void* b, void* out, std::int64_t n) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using T = decltype(tag);
    add_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::accumulate(Stream& st, const float* x, float* y, std::int64_t n) {
  if (n == 0) return;
  accumulate_kernel<<<grid_for(n, 256), 256, 0, native(st)>>>(x, y, n);
  OVB_CHECK_LAUNCH();
}

void CudaKernels::gelu_forward(Stream& st, const void* x, void* y, std::int64_t n) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using T = decltype(tag);
    gelu_fwd_kernel<T>
        <<<grid_for(n, 256), 256, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::gelu_backward(Stream& st, const void* x, const void* dy, void* dx,
                                std::int64_t n) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using T = decltype(tag);
    gelu_bwd_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(
        static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), n);
  });
  OVB_CHECK_LAUNCH();
}

void CudaKernels::bias_grad(Stream& st, const void* dy, float* db, std::int64_t T, std::int64_t C) {
  const cudaStream_t s = native(st);
  dispatch(act_, [&](auto tag) {
    using E = decltype(tag);
    bias_grad_kernel<E><<<static_cast<unsigned>((C + 31) / 32), dim3(32, 16), 0, s>>>(
        static_cast<const E*>(dy), db, T, C);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
