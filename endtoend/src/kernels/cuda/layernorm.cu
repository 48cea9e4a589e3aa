// CUDA kernels: layer norm of rows whose features are split over ranks. One warp per row for the
// row statistics and the normalisation; the gamma/beta gradients are column sums over tokens
// (32 columns x 16 row lanes per block, deterministic).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/launch.hpp"
#include "kernels/math.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kRowsPerBlock = 8;  // warps per block, one row each

template <class T>
__global__ void ln_partial_kernel(const T* x, float* stats, std::int64_t T_, std::int64_t C) {
  const std::int64_t t = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  float s = 0, ss = 0;
  for (std::int64_t c = lane; c < C; c += 32) {
    const float v = to_f(x[t * C + c]);
    s += v;
    ss += v * v;
  }
  s = warp_sum(s);
  ss = warp_sum(ss);
  if (lane == 0) {
    stats[2 * t] = s;
    stats[2 * t + 1] = ss;
  }
}

template <class T>
__global__ void ln_forward_kernel(const T* x, const float* stats, const T* g, const T* b, T* out,
                                  float* mr, std::int64_t T_, std::int64_t C, float inv_n) {
  const std::int64_t t = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = stats[2 * t] * inv_n;
  const float var = fmaxf(stats[2 * t + 1] * inv_n - mean * mean, 0.0f);
  const float rstd = rsqrtf(var + kLnEps);
  if (lane == 0) {
    mr[2 * t] = mean;
    mr[2 * t + 1] = rstd;
  }
  for (std::int64_t c = lane; c < C; c += 32)
    out[t * C + c] = from_f<T>((to_f(x[t * C + c]) - mean) * rstd * to_f(g[c]) + to_f(b[c]));
}

template <class T>
__global__ void ln_backward_partial_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                           float* sums, std::int64_t T_, std::int64_t C) {
  const std::int64_t t = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = mr[2 * t], rstd = mr[2 * t + 1];
  float s0 = 0, s1 = 0;
  for (std::int64_t c = lane; c < C; c += 32) {
    const float xhat = (to_f(x[t * C + c]) - mean) * rstd;
    const float dxhat = to_f(dy[t * C + c]) * to_f(g[c]);
    s0 += dxhat;
    s1 += dxhat * xhat;
  }
  s0 = warp_sum(s0);
  s1 = warp_sum(s1);
  if (lane == 0) {
    sums[2 * t] = s0;
    sums[2 * t + 1] = s1;
  }
}

template <class T>
__global__ void ln_backward_dx_kernel(const T* dy, const T* x, const float* mr, const T* g,
                                      const float* sums, T* dx, std::int64_t T_, std::int64_t C,
                                      float inv_n) {
  const std::int64_t t = blockIdx.x * std::int64_t(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (t >= T_) return;
  const float mean = mr[2 * t], rstd = mr[2 * t + 1];
  const float m0 = sums[2 * t] * inv_n, m1 = sums[2 * t + 1] * inv_n;
  for (std::int64_t c = lane; c < C; c += 32) {
    const float xhat = (to_f(x[t * C + c]) - mean) * rstd;
    const float d = to_f(dy[t * C + c]) * to_f(g[c]);
    dx[t * C + c] = from_f<T>(to_f(dx[t * C + c]) + rstd * (d - m0 - xhat * m1));
  }
}

// dg[c] += sum_t dy xhat, db[c] += sum_t dy.
template <class T>
__global__ void ln_backward_params_kernel(const T* dy, const T* x, const float* mr, float* dg,
                                          float* db, std::int64_t T_, std::int64_t C) {
  __shared__ float pg[16][33], pb[16][33];
  const std::int64_t c = blockIdx.x * 32 + threadIdx.x;
  float sg = 0, sb = 0;
  if (c < C)
    for (std::int64_t t = threadIdx.y; t < T_; t += 16) {
      const float d = to_f(dy[t * C + c]);
      sg += d * (to_f(x[t * C + c]) - mr[2 * t]) * mr[2 * t + 1];
      sb += d;
    }
  pg[threadIdx.y][threadIdx.x] = sg;
  pb[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y == 0 && c < C) {
    for (int r = 1; r < 16; ++r) {
      sg += pg[r][threadIdx.x];
      sb += pb[r][threadIdx.x];
    }
    dg[c] += sg;
    db[c] += sb;
  }
}

unsigned row_blocks(std::int64_t T) {
  return static_cast<unsigned>((T + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace

void launch_ln_partial(cudaStream_t s, DType act, const void* x, float* stats, std::int64_t T,
                       std::int64_t C) {
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    ln_partial_kernel<E>
        <<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(static_cast<const E*>(x), stats, T, C);
  });
  OVB_CHECK_LAUNCH();
}

void launch_ln_forward(cudaStream_t s, DType act, const void* x, const float* stats, const void* g,
                       const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                       std::int64_t C_total) {
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    ln_forward_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(x), stats, static_cast<const E*>(g), static_cast<const E*>(b),
        static_cast<E*>(out), mr, T, C, 1.0f / static_cast<float>(C_total));
  });
  OVB_CHECK_LAUNCH();
}

void launch_ln_backward_partial(cudaStream_t s, DType act, const void* dy, const void* x,
                                const float* mr, const void* g, float* sums, std::int64_t T,
                                std::int64_t C) {
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    ln_backward_partial_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums, T,
        C);
  });
  OVB_CHECK_LAUNCH();
}

void launch_ln_backward(cudaStream_t s, DType act, const void* dy, const void* x, const float* mr,
                        const void* g, const float* sums, void* dx, float* dg, float* db,
                        std::int64_t T, std::int64_t C, std::int64_t C_total) {
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    ln_backward_dx_kernel<E><<<row_blocks(T), 32 * kRowsPerBlock, 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, static_cast<const E*>(g), sums,
        static_cast<E*>(dx), T, C, 1.0f / static_cast<float>(C_total));
    ln_backward_params_kernel<E><<<static_cast<unsigned>((C + 31) / 32), dim3(32, 16), 0, s>>>(
        static_cast<const E*>(dy), static_cast<const E*>(x), mr, dg, db, T, C);
  });
  OVB_CHECK_LAUNCH();
}

}  // namespace ovb::gpt::cuda
