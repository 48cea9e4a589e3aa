// The host (fp32) kernels of Llama blocks: RMSNorm with statistics reduced over the ranks holding
// a row's features, the SwiGLU of interleaved gate/up rows, rotary position embeddings, and
// grouped-query attention. Free functions on plain fp32 buffers: the host backend runs them, and
// the CUDA kernels are checked against them.
#pragma once

#include <cstdint>

namespace ovb::gpt {

// ---- RMSNorm of rows whose C local features are part of C_total (reduced in between)
// stats[t] = sum_c x[t,c]^2 over this rank's features.
void host_rms_partial(const float* x, float* stats, std::int64_t T, std::int64_t C);
// From the reduced stats: rstd = 1/sqrt(stats/C_total + eps) into mr[2t+1] (mr[2t] = 0: the
// layer norm's (mean, rstd) slots); out = x rstd g.
void host_rms_forward(const float* x, const float* stats, const float* g, float* out, float* mr,
                      std::int64_t T, std::int64_t C, std::int64_t C_total);
// sums[t] = sum_c dy g xhat over this rank's features, xhat = x rstd.
void host_rms_backward_partial(const float* dy, const float* x, const float* mr, const float* g,
                               float* sums, std::int64_t T, std::int64_t C);
// From the reduced sums: dx += rstd (dy g - xhat sums/C_total); dg += sum_t dy xhat.
void host_rms_backward(const float* dy, const float* x, const float* mr, const float* g,
                       const float* sums, float* dx, float* dg, std::int64_t T, std::int64_t C,
                       std::int64_t C_total);

// ---- SwiGLU: gu [T, 2F] holds (gate j, up j) at columns (2j, 2j+1); y [T, F] = silu(gate) up.
void host_swiglu_forward(const float* gu, float* y, std::int64_t T, std::int64_t F);
// dgu [T, 2F] (overwritten) from dy [T, F].
void host_swiglu_backward(const float* gu, const float* dy, float* dgu, std::int64_t T,
                          std::int64_t F);

// ---- RoPE, in place on the q and k heads of qkv rows [B*S, G (r + 2) D] laid out in G groups
// of [q of r heads | k | v] (attention's layout); token t of a sequence is at position t % S.
// Pair i = features (2i, 2i+1) of each head turns by rope_angle(pos, i, D, theta); backward
// turns the gradient back (the rotation's transpose).
void host_rope(float* qkv, std::int64_t B, std::int64_t S, std::int64_t G, std::int64_t r,
               std::int64_t D, float theta, bool backward);

// ---- Causal attention of B sequences of S tokens, H query heads over Hkv K/V heads of size D;
// qkv rows as for host_rope (G = Hkv, r = H/Hkv), out [B*S, H*D], lse [B, H, S].
void host_attention_forward(const void* qkv, void* out, float* lse, std::int64_t B, std::int64_t S,
                            std::int64_t H, std::int64_t Hkv, std::int64_t D);
// dqkv (overwritten; a K/V head's gradient sums its query heads') from dout; scratch B*S*H floats.
void host_attention_backward(const void* qkv, const void* out, const void* dout, const float* lse,
                             void* dqkv, float* scratch, std::int64_t B, std::int64_t S,
                             std::int64_t H, std::int64_t Hkv, std::int64_t D);

}  // namespace ovb::gpt
