// The kernel layer of gpt4d: one interface, two implementations with the same semantics.
//   host: fp32 loops and OpenBLAS GEMMs (kernels/host/), synchronous on the calling thread;
//   cuda: bf16 (or fp32) activations and weights, fp32 statistics, gradients of parameters and
//         optimizer state, cuBLASLt GEMMs with fused epilogues (kernels/cuda/), asynchronous on
//         the given stream.
// Pointers: `void*` tensors are in the activation dtype act(); `float*` tensors are fp32.
// Shapes are row-major; T = tokens, C = features held by this rank, C_total = all features.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/math.hpp"  // kLnEps
#include "model/layout.hpp"
#include "ovb/backend.hpp"
#include "ovb/tracked_memory.hpp"

namespace ovb::gpt {

// Which attention the CUDA kernels run (--attention): cuDNN's fused flash attention, the suite's
// CUDA-core flash-style kernels ("simt"), or automatic: cuDNN where it is built and supports the
// shape and dtype, else simt. The host backend has one attention (plain loops).
enum class AttentionKind { automatic, cudnn, simt };
std::string_view name_of(AttentionKind k);          // "auto", "cudnn", "simt"
AttentionKind parse_attention(std::string_view s);  // UsageError for anything else
bool cudnn_attention_built();                       // this build has the cuDNN attention

struct AdamWArgs {
  float lr = 0, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0;
  int step = 1;    // 1-based, for the bias corrections
  float clip = 0;  // > 0: gradients scaled by min(1, clip / global norm)
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual DType act() const = 0;
  virtual std::string description() const = 0;

  // ---- memory, initialisation, casts
  virtual void zero(Stream& s, void* p, std::size_t bytes) = 0;
  // params[t.offset + e] = initial value of global element t.global_index(e) (rng.hpp).
  virtual void init_tensor(Stream& s, float* params, const TensorDesc& t, std::uint64_t seed) = 0;
  virtual void to_act(Stream& s, const float* src, void* dst, std::int64_t n) = 0;
  virtual void to_f32(Stream& s, const void* src, float* dst, std::int64_t n) = 0;

  // ---- embedding: out[t,:] = wte[tok[t],:] + wpe[t % S,:] (wpe may be null: no position
  // embedding, Llama); backward accumulates into fp32 (dwpe null with wpe).
  virtual void embedding_forward(Stream& s, const std::int32_t* tok, const void* wte,
                                 const void* wpe, void* out, std::int64_t T, std::int64_t S,
                                 std::int64_t C) = 0;
  virtual void embedding_backward(Stream& s, const std::int32_t* tok, const void* dout, float* dwte,
                                  float* dwpe, std::int64_t T, std::int64_t S, std::int64_t C) = 0;

  // ---- layer norm of rows whose features are split over ranks (statistics reduced in between)
  // stats[2t] = sum_c x[t,c], stats[2t+1] = sum_c x[t,c]^2 over this rank's C features.
  virtual void ln_partial(Stream& s, const void* x, float* stats, std::int64_t T,
                          std::int64_t C) = 0;
  // The residual add out = a + b and ln_partial's stats of out, in one pass.
  virtual void add_ln_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                              std::int64_t T, std::int64_t C) = 0;
  // From the reduced stats: mean, rstd = 1/sqrt(var + eps) into mr[2t], mr[2t+1];
  // out = (x - mean) * rstd * g + b.
  virtual void ln_forward(Stream& s, const void* x, const float* stats, const void* g,
                          const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                          std::int64_t C_total) = 0;
  // xhat = (x - mean) rstd, dxhat = dy g: sums[2t] = sum_c dxhat, sums[2t+1] = sum_c dxhat xhat.
  virtual void ln_backward_partial(Stream& s, const void* dy, const void* x, const float* mr,
                                   const void* g, float* sums, std::int64_t T, std::int64_t C) = 0;
  // dx += rstd (dxhat - sums0/C_total - xhat sums1/C_total); dg += sum_t dy xhat; db += sum_t dy.
  virtual void ln_backward(Stream& s, const void* dy, const void* x, const float* mr, const void* g,
                           const float* sums, void* dx, float* dg, float* db, std::int64_t T,
                           std::int64_t C, std::int64_t C_total) = 0;

  // ---- Llama: RMSNorm (statistics reduced over the ranks between the steps, as the layer norm),
  // SwiGLU, RoPE and grouped-query attention; formulas in kernels/host/llama_ops.hpp. A backend
  // without them throws UsageError naming the kernel (gpt4d refuses such a run before training).
  // stats[t] = sum_c x[t,c]^2; add_rms_partial makes out = a + b first.
  virtual void rms_partial(Stream& s, const void* x, float* stats, std::int64_t T, std::int64_t C);
  virtual void add_rms_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                               std::int64_t T, std::int64_t C);
  // rstd into mr[2t+1] (mr[2t] = 0); out = x rstd g.
  virtual void rms_forward(Stream& s, const void* x, const float* stats, const void* g, void* out,
                           float* mr, std::int64_t T, std::int64_t C, std::int64_t C_total);
  // sums[t] = sum_c dy g x rstd.
  virtual void rms_backward_partial(Stream& s, const void* dy, const void* x, const float* mr,
                                    const void* g, float* sums, std::int64_t T, std::int64_t C);
  // dx += rstd (dy g - xhat sums/C_total); dg += sum_t dy xhat.
  virtual void rms_backward(Stream& s, const void* dy, const void* x, const float* mr,
                            const void* g, const float* sums, void* dx, float* dg, std::int64_t T,
                            std::int64_t C, std::int64_t C_total);
  // y [T, F] = silu(gate) up of gu [T, 2F] (gate j, up j at columns 2j, 2j+1); dgu overwritten.
  virtual void swiglu_forward(Stream& s, const void* gu, void* y, std::int64_t T, std::int64_t F);
  virtual void swiglu_backward(Stream& s, const void* gu, const void* dy, void* dgu, std::int64_t T,
                               std::int64_t F);
  // In place on the q and k heads of qkv [B*S, G (r+2) D] (G groups of r query heads, k, v).
  virtual void rope(Stream& s, void* qkv, std::int64_t B, std::int64_t S, std::int64_t G,
                    std::int64_t r, std::int64_t D, float theta, bool backward);
  // Attention over Hkv groups of H/Hkv query heads (qkv as for rope); Hkv == H is
  // attention_forward/backward.
  virtual void gqa_attention_forward(Stream& s, const void* qkv, void* out, float* lse,
                                     std::int64_t B, std::int64_t S, std::int64_t H,
                                     std::int64_t Hkv, std::int64_t D);
  virtual void gqa_attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                                      const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                      std::int64_t S, std::int64_t H, std::int64_t Hkv,
                                      std::int64_t D);

  // ---- elementwise (GELU is the tanh approximation of GPT-2, as cuBLASLt's epilogue)
  virtual void add(Stream& s, const void* a, const void* b, void* out, std::int64_t n) = 0;
  virtual void gelu_forward(Stream& s, const void* x, void* y, std::int64_t n) = 0;
  // dx = gelu'(x) * dy; dx may alias dy.
  virtual void gelu_backward(Stream& s, const void* x, const void* dy, void* dx,
                             std::int64_t n) = 0;
  // y[i] += x[i], fp32 (gradient accumulation over micro-steps; `add` is in act()).
  virtual void accumulate(Stream& s, const float* x, float* y, std::int64_t n) = 0;
  // db[c] += sum_t dy[t,c].
  virtual void bias_grad(Stream& s, const void* dy, float* db, std::int64_t T, std::int64_t C) = 0;

  // ---- linear layers, W[N,K] row-major
  // y[T,N] = x[T,K] W^T (+ bias[N] when bias != nullptr); when gelu_out != nullptr also
  // gelu_out = gelu(y) (y keeps the pre-activation).
  virtual void linear_forward(Stream& s, const void* x, const void* w, const void* bias, void* y,
                              void* gelu_out, std::int64_t T, std::int64_t N, std::int64_t K) = 0;
  // dx[T,K] = dy[T,N] W; when gelu_in != nullptr (x = gelu(gelu_in), [T,K]) the GELU backward
  // is applied too: dx = gelu'(gelu_in) * (dy W) (CUDA: cuBLASLt's DGELU epilogue).
  virtual void linear_backward_input(Stream& s, const void* dy, const void* w, void* dx,
                                     std::int64_t T, std::int64_t N, std::int64_t K,
                                     const void* gelu_in = nullptr) = 0;
  // dw[N,K] = dy^T x, fp32, overwritten; when dbias != nullptr also dbias[n] = sum_t dy[t,n],
  // fp32, overwritten (CUDA: cuBLASLt's BGRADB epilogue).
  virtual void linear_backward_weight(Stream& s, const void* dy, const void* x, float* dw,
                                      std::int64_t T, std::int64_t N, std::int64_t K,
                                      float* dbias = nullptr) = 0;

  // ---- causal self-attention of B sequences of S tokens, H heads of size D
  // Chooses the implementation for this shape (Hkv K/V heads; Hkv = H for multi-head attention)
  // ahead of the first call (cuDNN builds its graphs and workspace here, outside the timed
  // iterations) and returns it: "cudnn", "simt" or "host". Throws UsageError when --attention
  // cudnn was asked for and cuDNN cannot run the shape.
  virtual std::string prepare_attention(std::int64_t B, std::int64_t S, std::int64_t H,
                                        std::int64_t Hkv, std::int64_t D) = 0;
  // qkv [B*S, H*3*D] (q, k, v of head 0, then head 1, ...), out [B*S, H*D], lse [B, H, S] (the
  // log-sum-exp of each softmax row, saved for backward).
  virtual void attention_forward(Stream& s, const void* qkv, void* out, float* lse, std::int64_t B,
                                 std::int64_t S, std::int64_t H, std::int64_t D) = 0;
  // dqkv (overwritten) from dout; scratch holds B*S*H floats.
  virtual void attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                                  const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                  std::int64_t S, std::int64_t H, std::int64_t D) = 0;

  // ---- vocab-parallel cross-entropy; logits [T, V] hold the vocabulary slice [v0, v0 + V)
  // stats [3, T]: row max m, sum exp(l - m), the target's logit (0 when outside the slice).
  virtual void ce_partial(Stream& s, const void* logits, const std::int32_t* targets, float* stats,
                          std::int64_t T, std::int64_t V, std::int64_t v0) = 0;
  // parts [n, 3, T] (every slice's stats) -> lse[t] = log sum_v exp(l_v); when loss_sum is not
  // null, *loss_sum += sum_t (lse[t] - target logit).
  virtual void ce_combine(Stream& s, const float* parts, int n, float* lse, float* loss_sum,
                          std::int64_t T) = 0;
  // logits <- scale * (softmax - onehot(target)), in place.
  virtual void ce_backward(Stream& s, void* logits, const std::int32_t* targets, const float* lse,
                           float scale, std::int64_t T, std::int64_t V, std::int64_t v0) = 0;

  // ---- optimizer
  virtual void sumsq(Stream& s, const float* x, std::int64_t n, float* acc) = 0;  // *acc += |x|^2
  // AdamW on n elements; when a.clip > 0 gradients are scaled by min(1, clip / sqrt(*norm_sumsq));
  // when work != nullptr it receives the updated weights in act().
  virtual void adamw(Stream& s, float* p, const float* g, float* m, float* v, void* work,
                     std::int64_t n, const AdamWArgs& a, const float* norm_sumsq) = 0;
};

// The kernels of `backend` ("host": fp32 only; "cuda": act = bf16 or fp32). Their own buffers
// (the cuBLASLt and cuDNN workspaces) are counted in `mem` as workspace when it is given.
// gemm_autotune (--gemm-autotune, cuda only): 0 or 1 runs cuBLASLt's heuristic choice for every
// GEMM shape; N > 1 times the heuristic's first N algorithms on each shape's first call and keeps
// the fastest (lt_matmul.hpp). The host backend refuses N > 1.
inline constexpr int kMaxGemmAutotune = 64;  // cuBLASLt returns fewer for most shapes
std::unique_ptr<Kernels> make_kernels(Backend& backend, DType act, TrackedMemory* mem = nullptr,
                                      AttentionKind attention = AttentionKind::automatic,
                                      int gemm_autotune = 0);

// Bytes this rank may allocate: free device memory on CUDA; on the host, the available memory
// (MemAvailable) divided among the node's ranks.
double free_device_memory(Backend& backend, const LaunchContext& ctx);

}  // namespace ovb::gpt
