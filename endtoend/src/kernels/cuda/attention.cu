// CUDA kernels: causal self-attention, flash style - tiles of 32 keys stream through shared
// memory, an online softmax keeps a running max and sum per query row, only the output and the
// row's log-sum-exp are written (no S x S matrix). Backward recomputes the probabilities from the
// saved log-sum-exp: one kernel accumulates dQ per query row over key tiles, another dK and dV per
// key row over query tiles (no atomics, deterministic).
//
// Work split: a block of 4 warps owns 16 rows (4 per warp); for each row a warp holds its
// accumulators spread over the lanes (element e on lane e % 32) and the lanes take the 32 keys
// (or queries) of a tile. Math is fp32 on CUDA cores; tensor-core tiles (or cuDNN's fused
// attention) are the performance follow-up. Head size up to 256.
//
// Grouped-query attention: the qkv row holds Hkv groups of [r query heads | k | v] (r = H/Hkv;
// r = 1 is plain multi-head attention). Query head h reads its group's k and v; the dK/dV kernel
// runs per K/V head and sums over the group's r query heads in turn (still no atomics).
#include <cmath>

#include "kernels/cuda/common.cuh"
#include "kernels/cuda/cuda_kernels.hpp"
#include "ovb/error.hpp"

namespace ovb::gpt::cuda {

namespace {

constexpr int kWarps = 4, kRowsPerWarp = 4, kRows = kWarps * kRowsPerWarp, kTile = 32;
constexpr unsigned kFull = 0xffffffffu;

struct Geo {
  int S, H, D, r;  // r query heads per K/V head
  float scale;
  __device__ std::int64_t row_stride() const {
    return static_cast<std::int64_t>(H / r) * (r + 2) * D;
  }
  // Offset in a row of query head h's q (col 0), or of its group's k (1) or v (2).
  __device__ std::int64_t col_offset(int h, int col) const {
    const int grp = h / r;
    const int within = col == 0 ? h % r : r + col - 1;
    return static_cast<std::int64_t>(grp * (r + 2) + within) * D;
  }
  // Start of column `col` of query head h in sequence b.
  template <class T>
  __device__ const T* head(const T* qkv, int b, int h, int col) const {
    return qkv + static_cast<std::int64_t>(b) * S * row_stride() + col_offset(h, col);
  }
  __device__ std::int64_t out_index(int b, int q, int h) const {
    return (static_cast<std::int64_t>(b) * S + q) * H * D + static_cast<std::int64_t>(h) * D;
  }
  __device__ std::int64_t lse_index(int b, int h, int q) const {
    return (static_cast<std::int64_t>(b) * H + h) * S + q;
  }
};

// Loads rows [r0, r0 + n) of one head's column block (Geo::head) into smem rows of stride ld.
template <class T>
__device__ void load_rows(float* dst, int ld, const T* head, std::int64_t stride, int r0, int n,
                          int S, int D, float mul = 1.0f) {
  for (int idx = threadIdx.x; idx < n * D; idx += blockDim.x) {
    const int r = idx / D, e = idx % D, g = r0 + r;
    dst[r * ld + e] = g < S ? mul * to_f(head[g * stride + e]) : 0.0f;
  }
}

template <class T>
__device__ void load_out_rows(float* dst, int ld, const T* x, const Geo& g, int b, int h, int r0,
                              int n) {
  for (int idx = threadIdx.x; idx < n * g.D; idx += blockDim.x) {
    const int r = idx / g.D, e = idx % g.D, q = r0 + r;
    dst[r * ld + e] = q < g.S ? to_f(x[g.out_index(b, q, h) + e]) : 0.0f;
  }
}

__device__ __forceinline__ float dot(const float* a, const float* b, int D) {
  float s = 0;
  for (int e = 0; e < D; ++e) s += a[e] * b[e];
  return s;
}

// acc[e] += sum_{j < jn} w_j rows[j][e] for this lane's elements e = lane + 32 i, where w_j is
// lane j's value of w (one weight per key or query of the tile).
template <int NI>
__device__ __forceinline__ void add_tile(float (&acc)[NI], float w, const float* rows, int ld,
                                         int jn, int D, int lane) {
  for (int j = 0; j < jn; ++j) {
    const float wj = __shfl_sync(kFull, w, j);
#pragma unroll
    for (int i = 0; i < NI; ++i) {
      const int e = lane + 32 * i;
      if (e < D) acc[i] += wj * rows[j * ld + e];
    }
  }
}

template <class T, int NI>
__global__ void __launch_bounds__(kWarps * 32)
    attn_fwd_kernel(const T* qkv, T* out, float* lse, Geo g) {
  extern __shared__ float sm[];
  const int D = g.D, ld = D + 1;
  float* Ks = sm;
  float* Vs = Ks + kTile * ld;
  float* Qs = Vs + kTile * ld;  // [kRows][ld], pre-scaled
  const int b = blockIdx.z, h = blockIdx.y, r0 = blockIdx.x * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T *qp = g.head(qkv, b, h, 0), *kp = g.head(qkv, b, h, 1), *vp = g.head(qkv, b, h, 2);
  const std::int64_t stride = g.row_stride();
  load_rows(Qs, ld, qp, stride, r0, kRows, g.S, D, g.scale);
  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][NI];
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    m[rr] = -INFINITY;
    l[rr] = 0;
    for (int i = 0; i < NI; ++i) acc[rr][i] = 0;
  }
  const int last = min(g.S, r0 + kRows) - 1;
  for (int k0 = 0; k0 <= last; k0 += kTile) {
    __syncthreads();
    load_rows(Ks, ld, kp, stride, k0, kTile, g.S, D);
    load_rows(Vs, ld, vp, stride, k0, kTile, g.S, D);
    __syncthreads();
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
      const int r = warp * kRowsPerWarp + rr, q = r0 + r;
      if (q >= g.S || k0 > q) continue;  // warp-uniform
      const int key = k0 + lane;
      const float sc = key <= q ? dot(Qs + r * ld, Ks + lane * ld, D) : -INFINITY;
      const float mn = fmaxf(m[rr], warp_max(sc));
      const float p = key <= q ? __expf(sc - mn) : 0.0f;
      const float corr = m[rr] == -INFINITY ? 0.0f : __expf(m[rr] - mn);
      l[rr] = l[rr] * corr + warp_sum(p);
      for (int i = 0; i < NI; ++i) acc[rr][i] *= corr;
      add_tile<NI>(acc[rr], p, Vs, ld, min(kTile, q - k0 + 1), D, lane);
      m[rr] = mn;
    }
  }
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int q = r0 + warp * kRowsPerWarp + rr;
    if (q >= g.S) continue;
    const float inv = 1.0f / l[rr];
    for (int i = 0; i < NI; ++i) {
      const int e = lane + 32 * i;
      if (e < D) out[g.out_index(b, q, h) + e] = from_f<T>(acc[rr][i] * inv);
    }
    if (lane == 0) lse[g.lse_index(b, h, q)] = m[rr] + logf(l[rr]);
  }
}

// delta[b,h,q] = dO . O of the row (the softmax backward's row term).
template <class T>
__global__ void attn_delta_kernel(const T* out, const T* dout, float* delta, Geo g, int B) {
  const std::int64_t row = blockIdx.x * std::int64_t(kWarps) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= static_cast<std::int64_t>(B) * g.H * g.S) return;
  const int q = static_cast<int>(row % g.S), h = static_cast<int>(row / g.S % g.H),
            b = static_cast<int>(row / (static_cast<std::int64_t>(g.S) * g.H));
  const std::int64_t o = g.out_index(b, q, h);
  float s = 0;
  for (int e = lane; e < g.D; e += 32) s += to_f(out[o + e]) * to_f(dout[o + e]);
  s = warp_sum(s);
  if (lane == 0) delta[row] = s;
}

// dQ per query row, streaming key tiles.
template <class T, int NI>
__global__ void __launch_bounds__(kWarps * 32)
    attn_bwd_dq_kernel(const T* qkv, const T* dout, const float* lse, const float* delta, T* dqkv,
                       Geo g) {
  extern __shared__ float sm[];
  const int D = g.D, ld = D + 1;
  float* Ks = sm;
  float* Vs = Ks + kTile * ld;
  float* Qs = Vs + kTile * ld;   // [kRows][ld], pre-scaled
  float* dOs = Qs + kRows * ld;  // [kRows][ld]
  const int b = blockIdx.z, h = blockIdx.y, r0 = blockIdx.x * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T *qp = g.head(qkv, b, h, 0), *kp = g.head(qkv, b, h, 1), *vp = g.head(qkv, b, h, 2);
  const std::int64_t stride = g.row_stride();
  load_rows(Qs, ld, qp, stride, r0, kRows, g.S, D, g.scale);
  load_out_rows(dOs, ld, dout, g, b, h, r0, kRows);
  float L[kRowsPerWarp], Dl[kRowsPerWarp], dq[kRowsPerWarp][NI];
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int q = r0 + warp * kRowsPerWarp + rr;
    L[rr] = q < g.S ? lse[g.lse_index(b, h, q)] : 0.0f;
    Dl[rr] = q < g.S ? delta[g.lse_index(b, h, q)] : 0.0f;
    for (int i = 0; i < NI; ++i) dq[rr][i] = 0;
  }
  const int last = min(g.S, r0 + kRows) - 1;
  for (int k0 = 0; k0 <= last; k0 += kTile) {
    __syncthreads();
    load_rows(Ks, ld, kp, stride, k0, kTile, g.S, D);
    load_rows(Vs, ld, vp, stride, k0, kTile, g.S, D);
    __syncthreads();
    for (int rr = 0; rr < kRowsPerWarp; ++rr) {
      const int r = warp * kRowsPerWarp + rr, q = r0 + r;
      if (q >= g.S || k0 > q) continue;
      const int key = k0 + lane;
      float ds = 0;
      if (key <= q) {
        const float p = __expf(dot(Qs + r * ld, Ks + lane * ld, D) - L[rr]);
        ds = p * (dot(dOs + r * ld, Vs + lane * ld, D) - Dl[rr]);
      }
      add_tile<NI>(dq[rr], ds, Ks, ld, min(kTile, q - k0 + 1), D, lane);
    }
  }
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int q = r0 + warp * kRowsPerWarp + rr;
    if (q >= g.S) continue;
    T* dst = dqkv + (static_cast<std::int64_t>(b) * g.S + q) * stride + g.col_offset(h, 0);
    for (int i = 0; i < NI; ++i) {
      const int e = lane + 32 * i;
      if (e < D) dst[e] = from_f<T>(g.scale * dq[rr][i]);
    }
  }
}

// dK and dV per key row of K/V head blockIdx.y, streaming query tiles (queries at or after the
// key) of each of the group's query heads.
template <class T, int NI>
__global__ void __launch_bounds__(kWarps * 32)
    attn_bwd_dkv_kernel(const T* qkv, const T* dout, const float* lse, const float* delta, T* dqkv,
                        Geo g) {
  extern __shared__ float sm[];
  const int D = g.D, ld = D + 1;
  float* Qs = sm;                // [kTile][ld], pre-scaled
  float* dOs = Qs + kTile * ld;  // [kTile][ld]
  float* Ks = dOs + kTile * ld;  // [kRows][ld]
  float* Vs = Ks + kRows * ld;   // [kRows][ld]
  float* Lt = Vs + kRows * ld;   // [kTile]
  float* Dt = Lt + kTile;        // [kTile]
  const int b = blockIdx.z, h0 = blockIdx.y * g.r, c0 = blockIdx.x * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t stride = g.row_stride();
  load_rows(Ks, ld, g.head(qkv, b, h0, 1), stride, c0, kRows, g.S, D);
  load_rows(Vs, ld, g.head(qkv, b, h0, 2), stride, c0, kRows, g.S, D);
  float dk[kRowsPerWarp][NI], dv[kRowsPerWarp][NI];
  for (int rr = 0; rr < kRowsPerWarp; ++rr)
    for (int i = 0; i < NI; ++i) dk[rr][i] = dv[rr][i] = 0;
  for (int h = h0; h < h0 + g.r; ++h) {
    for (int q0 = c0 / kTile * kTile; q0 < g.S; q0 += kTile) {
      __syncthreads();
      load_rows(Qs, ld, g.head(qkv, b, h, 0), stride, q0, kTile, g.S, D, g.scale);
      load_out_rows(dOs, ld, dout, g, b, h, q0, kTile);
      if (threadIdx.x < kTile) {
        const int q = q0 + threadIdx.x;
        Lt[threadIdx.x] = q < g.S ? lse[g.lse_index(b, h, q)] : 0.0f;
        Dt[threadIdx.x] = q < g.S ? delta[g.lse_index(b, h, q)] : 0.0f;
      }
      __syncthreads();
      for (int rr = 0; rr < kRowsPerWarp; ++rr) {
        const int r = warp * kRowsPerWarp + rr, key = c0 + r;
        if (key >= g.S || q0 + kTile - 1 < key) continue;  // warp-uniform
        const int q = q0 + lane;
        float p = 0, ds = 0;
        if (q < g.S && q >= key) {
          p = __expf(dot(Qs + lane * ld, Ks + r * ld, D) - Lt[lane]);
          ds = p * (dot(dOs + lane * ld, Vs + r * ld, D) - Dt[lane]);
        }
        add_tile<NI>(dv[rr], p, dOs, ld, kTile, D, lane);
        add_tile<NI>(dk[rr], ds, Qs, ld, kTile, D, lane);  // Qs pre-scaled: dK = scale dS^T Q
      }
    }
  }
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int key = c0 + warp * kRowsPerWarp + rr;
    if (key >= g.S) continue;
    T* dst = dqkv + (static_cast<std::int64_t>(b) * g.S + key) * stride + g.col_offset(h0, 1);
    for (int i = 0; i < NI; ++i) {
      const int e = lane + 32 * i;
      if (e < D) {
        dst[e] = from_f<T>(dk[rr][i]);
        dst[D + e] = from_f<T>(dv[rr][i]);
      }
    }
  }
}

// Launches a kernel instance, opting in to more than 48 KiB of dynamic shared memory.
template <class Kernel, class... Args>
void launch_kernel(Kernel kernel, dim3 grid, std::size_t smem, cudaStream_t s, Args... args) {
  if (smem > 48 * 1024)
    OVB_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  kernel<<<grid, kWarps * 32, smem, s>>>(args...);
  OVB_CHECK_LAUNCH();
}

// KERNEL<T, NI> with NI = ceil(D / 32) in 1..8.
#define OVB_ATTN_DISPATCH(NI_VAR, KERNEL, T, ...)             \
  switch (NI_VAR) {                                           \
    case 1: launch_kernel(KERNEL<T, 1>, __VA_ARGS__); break;  \
    case 2: launch_kernel(KERNEL<T, 2>, __VA_ARGS__); break;  \
    case 3: launch_kernel(KERNEL<T, 3>, __VA_ARGS__); break;  \
    case 4: launch_kernel(KERNEL<T, 4>, __VA_ARGS__); break;  \
    case 5: launch_kernel(KERNEL<T, 5>, __VA_ARGS__); break;  \
    case 6: launch_kernel(KERNEL<T, 6>, __VA_ARGS__); break;  \
    case 7: launch_kernel(KERNEL<T, 7>, __VA_ARGS__); break;  \
    default: launch_kernel(KERNEL<T, 8>, __VA_ARGS__); break; \
  }

Geo geometry(std::int64_t S, std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  if (D > 256) throw Error("attention: head size " + std::to_string(D) + " > 256 is not supported");
  if (Hkv < 1 || H % Hkv != 0)
    throw Error("attention: " + std::to_string(H) + " query heads do not split into " +
                std::to_string(Hkv) + " K/V heads");
  return Geo{static_cast<int>(S), static_cast<int>(H), static_cast<int>(D),
             static_cast<int>(H / Hkv), 1.0f / std::sqrt(static_cast<float>(D))};
}

void simt_forward(cudaStream_t s, DType act, const void* qkv, void* out, float* lse, std::int64_t B,
                  std::int64_t S, std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  const Geo g = geometry(S, H, Hkv, D);
  const int ni = static_cast<int>((D + 31) / 32);
  const dim3 grid(static_cast<unsigned>((S + kRows - 1) / kRows), static_cast<unsigned>(H),
                  static_cast<unsigned>(B));
  const std::size_t smem = (2 * kTile + kRows) * (D + 1) * sizeof(float);
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    OVB_ATTN_DISPATCH(ni, attn_fwd_kernel, E, grid, smem, s, static_cast<const E*>(qkv),
                      static_cast<E*>(out), lse, g);
  });
}

void simt_backward(cudaStream_t s, DType act, const void* qkv, const void* out, const void* dout,
                   const float* lse, void* dqkv, float* scratch, std::int64_t B, std::int64_t S,
                   std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  const Geo g = geometry(S, H, Hkv, D);
  const int ni = static_cast<int>((D + 31) / 32);
  const dim3 grid(static_cast<unsigned>((S + kRows - 1) / kRows), static_cast<unsigned>(H),
                  static_cast<unsigned>(B));
  const std::size_t smem_dq = (2 * kTile + 2 * kRows) * (D + 1) * sizeof(float);
  const std::size_t smem_dkv = ((2 * kTile + 2 * kRows) * (D + 1) + 2 * kTile) * sizeof(float);
  dispatch(act, [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(qkv);
    const E* dO = static_cast<const E*>(dout);
    const std::int64_t rows = B * H * S;
    attn_delta_kernel<E>
        <<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32, 0, s>>>(
            static_cast<const E*>(out), dO, scratch, g, static_cast<int>(B));
    OVB_CHECK_LAUNCH();
    OVB_ATTN_DISPATCH(ni, attn_bwd_dq_kernel, E, grid, smem_dq, s, x, dO, lse,
                      static_cast<const float*>(scratch), static_cast<E*>(dqkv), g);
    const dim3 grid_kv(grid.x, static_cast<unsigned>(Hkv), grid.z);
    OVB_ATTN_DISPATCH(ni, attn_bwd_dkv_kernel, E, grid_kv, smem_dkv, s, x, dO, lse,
                      static_cast<const float*>(scratch), static_cast<E*>(dqkv), g);
  });
}

}  // namespace

bool CudaKernels::uses_cudnn(const AttnShape& a) {
  if (auto it = use_cudnn_.find(a); it != use_cudnn_.end()) return it->second;
  bool use = false;
#ifdef OVB_HAVE_CUDNN
  if (cudnn_) {
    const std::string why = cudnn_->prepare(a, act_);
    use = why.empty();
    if (!use && attention_ == AttentionKind::cudnn)
      throw UsageError("--attention cudnn: cuDNN cannot run attention with " + a.str() + " in " +
                       std::string(name_of(act_)) + ": " + why);
    if (!use) attention_note_ = "cuDNN cannot run " + a.str() + ": " + why;
  }
#endif
  use_cudnn_[a] = use;
  return use;
}

std::string CudaKernels::prepare_attention(std::int64_t B, std::int64_t S, std::int64_t H,
                                           std::int64_t Hkv, std::int64_t D) {
  return uses_cudnn(AttnShape{B, S, H, Hkv, D}) ? "cudnn" : "simt";
}

void CudaKernels::attention_forward(Stream& s, const void* qkv, void* out, float* lse,
                                    std::int64_t B, std::int64_t S, std::int64_t H,
                                    std::int64_t D) {
  gqa_attention_forward(s, qkv, out, lse, B, S, H, H, D);
}

void CudaKernels::attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                                     const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                     std::int64_t S, std::int64_t H, std::int64_t D) {
  gqa_attention_backward(s, qkv, out, dout, lse, dqkv, scratch, B, S, H, H, D);
}

void CudaKernels::gqa_attention_forward(Stream& s, const void* qkv, void* out, float* lse,
                                        std::int64_t B, std::int64_t S, std::int64_t H,
                                        std::int64_t Hkv, std::int64_t D) {
  const AttnShape a{B, S, H, Hkv, D};
#ifdef OVB_HAVE_CUDNN
  if (uses_cudnn(a)) return cudnn_->forward(s, qkv, out, lse, a, act_);
#endif
  simt_forward(native(s), act_, qkv, out, lse, a.B, a.S, a.H, a.Hkv, a.D);
}

void CudaKernels::gqa_attention_backward(Stream& s, const void* qkv, const void* out,
                                         const void* dout, const float* lse, void* dqkv,
                                         float* scratch, std::int64_t B, std::int64_t S,
                                         std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  const AttnShape a{B, S, H, Hkv, D};
#ifdef OVB_HAVE_CUDNN
  if (uses_cudnn(a)) return cudnn_->backward(s, qkv, out, dout, lse, dqkv, a, act_);  // no scratch
#endif
  simt_backward(native(s), act_, qkv, out, dout, lse, dqkv, scratch, a.B, a.S, a.H, a.Hkv, a.D);
}

}  // namespace ovb::gpt::cuda
