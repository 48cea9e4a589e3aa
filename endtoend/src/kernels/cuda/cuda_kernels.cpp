// CudaKernels: the Kernels interface forwarded to the launchers of the .cu files (launch.hpp)
// on the stream's cudaStream_t.
#include "kernels/cuda/cuda_kernels.hpp"

#include <cmath>

#include "kernels/cuda/launch.hpp"
#include "ovb/cuda/check.hpp"

namespace ovb::gpt::cuda {

namespace {
cudaStream_t native(Stream& s) {
  return static_cast<cudaStream_t>(s.native());
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
  launch_init(native(s), params + t.offset, a);
}

void CudaKernels::to_act(Stream& s, const float* src, void* dst, std::int64_t n) {
  launch_to_act(native(s), act_, src, dst, n);
}

void CudaKernels::to_f32(Stream& s, const void* src, float* dst, std::int64_t n) {
  launch_to_f32(native(s), act_, src, dst, n);
}

void CudaKernels::embedding_forward(Stream& s, const std::int32_t* tok, const void* wte,
                                    const void* wpe, void* out, std::int64_t T, std::int64_t S,
                                    std::int64_t C) {
  launch_embedding_forward(native(s), act_, tok, wte, wpe, out, T, S, C);
}

void CudaKernels::embedding_backward(Stream& s, const std::int32_t* tok, const void* dout,
                                     float* dwte, float* dwpe, std::int64_t T, std::int64_t S,
                                     std::int64_t C) {
  launch_embedding_backward(native(s), act_, tok, dout, dwte, dwpe, T, S, C);
}

void CudaKernels::ln_partial(Stream& s, const void* x, float* stats, std::int64_t T,
                             std::int64_t C) {
  launch_ln_partial(native(s), act_, x, stats, T, C);
}

void CudaKernels::add_ln_partial(Stream& s, const void* a, const void* b, void* out, float* stats,
                                 std::int64_t T, std::int64_t C) {
  launch_add_ln_partial(native(s), act_, a, b, out, stats, T, C);
}

void CudaKernels::ln_forward(Stream& s, const void* x, const float* stats, const void* g,
                             const void* b, void* out, float* mr, std::int64_t T, std::int64_t C,
                             std::int64_t C_total) {
  launch_ln_forward(native(s), act_, x, stats, g, b, out, mr, T, C, C_total);
}

void CudaKernels::ln_backward_partial(Stream& s, const void* dy, const void* x, const float* mr,
                                      const void* g, float* sums, std::int64_t T, std::int64_t C) {
  launch_ln_backward_partial(native(s), act_, dy, x, mr, g, sums, T, C);
}

void CudaKernels::ln_backward(Stream& s, const void* dy, const void* x, const float* mr,
                              const void* g, const float* sums, void* dx, float* dg, float* db,
                              std::int64_t T, std::int64_t C, std::int64_t C_total) {
  launch_ln_backward(native(s), act_, dy, x, mr, g, sums, dx, dg, db, T, C, C_total);
}

void CudaKernels::add(Stream& s, const void* a, const void* b, void* out, std::int64_t n) {
  launch_add(native(s), act_, a, b, out, n);
}

void CudaKernels::gelu_forward(Stream& s, const void* x, void* y, std::int64_t n) {
  launch_gelu_forward(native(s), act_, x, y, n);
}

void CudaKernels::gelu_backward(Stream& s, const void* x, const void* dy, void* dx,
                                std::int64_t n) {
  launch_gelu_backward(native(s), act_, x, dy, dx, n);
}

void CudaKernels::bias_grad(Stream& s, const void* dy, float* db, std::int64_t T, std::int64_t C) {
  launch_bias_grad(native(s), act_, dy, db, T, C);
}

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
                                           std::int64_t D) {
  return uses_cudnn(AttnShape{B, S, H, D}) ? "cudnn" : "simt";
}

void CudaKernels::attention_forward(Stream& s, const void* qkv, void* out, float* lse,
                                    std::int64_t B, std::int64_t S, std::int64_t H,
                                    std::int64_t D) {
  const AttnShape a{B, S, H, D};
#ifdef OVB_HAVE_CUDNN
  if (uses_cudnn(a)) return cudnn_->forward(s, qkv, out, lse, a, act_);
#endif
  launch_attention_forward(native(s), act_, qkv, out, lse, a.B, a.S, a.H, a.D);
}

void CudaKernels::attention_backward(Stream& s, const void* qkv, const void* out, const void* dout,
                                     const float* lse, void* dqkv, float* scratch, std::int64_t B,
                                     std::int64_t S, std::int64_t H, std::int64_t D) {
  const AttnShape a{B, S, H, D};
#ifdef OVB_HAVE_CUDNN
  if (uses_cudnn(a)) return cudnn_->backward(s, qkv, out, dout, lse, dqkv, a, act_);  // no scratch
#endif
  launch_attention_backward(native(s), act_, qkv, out, dout, lse, dqkv, scratch, a.B, a.S, a.H,
                            a.D);
}

void CudaKernels::ce_partial(Stream& s, const void* logits, const std::int32_t* targets,
                             float* stats, std::int64_t T, std::int64_t V, std::int64_t v0) {
  launch_ce_partial(native(s), act_, logits, targets, stats, T, V, v0);
}

void CudaKernels::ce_combine(Stream& s, const float* parts, int n, float* lse, float* loss_sum,
                             std::int64_t T) {
  launch_ce_combine(native(s), parts, n, lse, loss_sum, T);
}

void CudaKernels::ce_backward(Stream& s, void* logits, const std::int32_t* targets,
                              const float* lse, float scale, std::int64_t T, std::int64_t V,
                              std::int64_t v0) {
  launch_ce_backward(native(s), act_, logits, targets, lse, scale, T, V, v0);
}

void CudaKernels::sumsq(Stream& s, const float* x, std::int64_t n, float* acc) {
  launch_sumsq(native(s), x, n, acc);
}

void CudaKernels::adamw(Stream& s, float* p, const float* g, float* m, float* v, void* work,
                        std::int64_t n, const AdamWArgs& a, const float* norm_sumsq) {
  const AdamWParams k{a.lr,
                      a.beta1,
                      a.beta2,
                      a.eps,
                      a.weight_decay,
                      1.0f - std::pow(a.beta1, static_cast<float>(a.step)),
                      1.0f - std::pow(a.beta2, static_cast<float>(a.step)),
                      a.clip};
  launch_adamw(native(s), act_, p, g, m, v, work, n, k, norm_sumsq);
}

}  // namespace ovb::gpt::cuda
