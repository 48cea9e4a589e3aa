// How cuDNN's fused attention sees gpt4d's attention tensors: the shape, and the dimensions,
// strides and offsets of each cuDNN tensor over the buffers (plain C++, so that a host test
// checks the index arithmetic without cuDNN or a GPU).
//
// The tensors are strided views of gpt4d's buffers. qkv [B*S, Hkv (r+2) D] holds per
// token Hkv groups of [r query heads | k | v] (r = H/Hkv; r = 1 is multi-head attention: per head
// q, k, v); out and dout [B*S, H*D]; dqkv like qkv. cuDNN sees [batch, heads, S, D] tensors, and
// a group's query heads are D apart while groups are (r+2) D apart, so no one head stride covers
// all H query heads when 1 < Hkv < H. Three views:
//   r = 1: Q, K, V [B, H, S, D], head stride 3D (offsets 0, D, 2D), one run;
//   Hkv = 1: Q [B, H, S, D], K, V [B, 1, S, D], head stride D (offsets 0, H D, (H+1) D), one run;
//   else: one run per sequence, the groups as cuDNN's batch: Q [Hkv, r, S, D], K, V [Hkv, 1, S,
//     D], batch stride (r+2) D, sequence stride Hkv (r+2) D (an "sbhd" layout); out [Hkv, r, S, D]
//     (strides r D, D, H D, 1) and the statistics [Hkv, r, S] stay packed, as cuDNN before 9.26
//     requires of the backward's statistics input.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace ovb::gpt::cuda {

// Hkv K/V heads, each shared by H/Hkv query heads (Hkv = H: multi-head attention).
struct AttnShape {
  std::int64_t B = 0, S = 0, H = 0, Hkv = 0, D = 0;
  auto operator<=>(const AttnShape&) const = default;
  std::string str() const {  // "B 4, S 2048, H 32, Hkv 8, D 128" (Hkv only when < H)
    return "B " + std::to_string(B) + ", S " + std::to_string(S) + ", H " + std::to_string(H) +
           (Hkv != H ? ", Hkv " + std::to_string(Hkv) : std::string()) + ", D " + std::to_string(D);
  }
};

// Dimensions [batch, heads, S, D] and strides in elements of cuDNN's tensors, and `runs` graph
// executions, each `*_step` elements further on in every buffer. H must be a multiple of Hkv.
struct CudnnAttnView {
  using Dims = std::vector<std::int64_t>;
  Dims q_dims, kv_dims, qkv, out_dims, out, stats_dims, stats;  // qkv: Q's strides, K's and V's too
  std::int64_t k_at = 0, v_at = 0;  // where the first k and v start, from the first q
  std::int64_t runs = 1, qkv_step = 0, out_step = 0, stats_step = 0;

  explicit CudnnAttnView(const AttnShape& a) {
    const std::int64_t r = a.H / a.Hkv, row = a.Hkv * (r + 2) * a.D;
    k_at = r * a.D;
    v_at = (r + 1) * a.D;
    if (r == 1 || a.Hkv == 1) {  // every query head one stride apart: one run
      q_dims = {a.B, a.H, a.S, a.D};
      kv_dims = {a.B, a.Hkv, a.S, a.D};
      qkv = {a.S * row, (r == 1 ? 3 : 1) * a.D, row, 1};
      out = {a.S * a.H * a.D, a.D, a.H * a.D, 1};
    } else {  // per sequence, groups as cuDNN's batch
      q_dims = {a.Hkv, r, a.S, a.D};
      kv_dims = {a.Hkv, 1, a.S, a.D};
      qkv = {(r + 2) * a.D, a.D, row, 1};
      out = {r * a.D, a.D, a.H * a.D, 1};
      runs = a.B;
      qkv_step = a.S * row;
      out_step = a.S * a.H * a.D;
      stats_step = a.H * a.S;
    }
    out_dims = q_dims;
    stats_dims = {q_dims[0], q_dims[1], a.S, 1};
    stats = {q_dims[1] * a.S, a.S, 1, 1};  // packed
  }
};

}  // namespace ovb::gpt::cuda
