// cuDNN's views of gpt4d's attention buffers (kernels/cuda/cudnn_attention_view.hpp) against the
// layout the host and CUDA-core kernels read, element by element, without cuDNN or a GPU: every
// (run, batch, head, position, element) that cuDNN would address must be the element of the query
// head the reference layout puts there, and its output, statistics, k and v (cuDNN's rule: query
// head j of h_q reads K/V head j / (h_q / h_k)) must be that head's.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/cuda/cudnn_attention_view.hpp"

using ovb::gpt::cuda::AttnShape;
using ovb::gpt::cuda::CudnnAttnView;

namespace {

using Dims = CudnnAttnView::Dims;

std::int64_t offset(const Dims& stride, std::int64_t n, std::int64_t h, std::int64_t s,
                    std::int64_t e) {
  return n * stride[0] + h * stride[1] + s * stride[2] + e * stride[3];
}

// The reference layout (kernels.hpp, host/attention.cpp): qkv rows of Hkv groups of
// [r query heads | k | v], out [B*S, H*D], lse [B, H, S].
struct Reference {
  AttnShape a;
  std::int64_t r, row;
  explicit Reference(const AttnShape& shape)
      : a(shape), r(shape.H / shape.Hkv), row(shape.Hkv * (shape.H / shape.Hkv + 2) * shape.D) {}
  // col 0: query head h's q; 1: its group's k; 2: its group's v.
  std::int64_t qkv(std::int64_t b, std::int64_t h, int col, std::int64_t s, std::int64_t e) const {
    const std::int64_t within = col == 0 ? h % r : r + col - 1;
    return (b * a.S + s) * row + ((h / r) * (r + 2) + within) * a.D + e;
  }
  std::int64_t out(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t e) const {
    return (b * a.S + s) * a.H * a.D + h * a.D + e;
  }
  std::int64_t lse(std::int64_t b, std::int64_t h, std::int64_t s) const {
    return (b * a.H + h) * a.S + s;
  }
};

void check_view(const AttnShape& a) {
  SCOPED_TRACE(a.str());
  const CudnnAttnView v(a);
  const Reference ref(a);
  // Shapes cuDNN requires: K/V like Q but with a divisor of its heads; packed statistics.
  ASSERT_EQ(v.q_dims.size(), 4u);
  EXPECT_EQ(v.kv_dims[0], v.q_dims[0]);
  EXPECT_EQ(v.q_dims[1] % v.kv_dims[1], 0);
  EXPECT_EQ(v.q_dims[2], a.S);
  EXPECT_EQ(v.q_dims[3], a.D);
  EXPECT_EQ(v.kv_dims[2], a.S);
  EXPECT_EQ(v.kv_dims[3], a.D);
  EXPECT_EQ(v.out_dims, v.q_dims);
  EXPECT_EQ(v.stats_dims, (Dims{v.q_dims[0], v.q_dims[1], a.S, 1}));
  EXPECT_EQ(v.stats, (Dims{v.q_dims[1] * a.S, a.S, 1, 1}));
  EXPECT_EQ(v.qkv[3], 1);
  EXPECT_EQ(v.out[3], 1);
  ASSERT_EQ(v.runs * v.q_dims[0] * v.q_dims[1], a.B * a.H);

  // Which (sequence, query head) owns each q element of the buffer, by the reference layout.
  const std::int64_t qkv_n = a.B * a.S * ref.row;
  std::vector<std::int64_t> owner(qkv_n, -1);
  for (std::int64_t b = 0; b < a.B; ++b)
    for (std::int64_t h = 0; h < a.H; ++h)
      for (std::int64_t s = 0; s < a.S; ++s)
        for (std::int64_t e = 0; e < a.D; ++e) owner[ref.qkv(b, h, 0, s, e)] = b * a.H + h;

  std::vector<int> q_seen(qkv_n, 0), kv_seen(qkv_n, 0), heads(a.B * a.H, 0);
  std::size_t bad = 0;
  auto expect = [&](bool ok, const char* what, std::int64_t i, std::int64_t n, std::int64_t j) {
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << " of run " << i << ", batch " << n << ", head " << j;
  };
  const std::int64_t group = v.q_dims[1] / v.kv_dims[1];
  for (std::int64_t i = 0; i < v.runs; ++i)
    for (std::int64_t n = 0; n < v.q_dims[0]; ++n)
      for (std::int64_t j = 0; j < v.q_dims[1]; ++j) {
        const std::int64_t q0 = i * v.qkv_step + offset(v.qkv, n, j, 0, 0);
        ASSERT_GE(q0, 0);
        ASSERT_LT(q0, qkv_n);
        const std::int64_t bh = owner[q0];
        ASSERT_GE(bh, 0) << "run " << i << ", batch " << n << ", head " << j
                         << " does not start at a q element";
        ++heads[bh];
        const std::int64_t b = bh / a.H, h = bh % a.H, jk = j / group;
        for (std::int64_t s = 0; s < a.S; ++s) {
          expect(i * v.stats_step + offset(v.stats, n, j, s, 0) == ref.lse(b, h, s), "lse", i, n,
                 j);
          for (std::int64_t e = 0; e < a.D; ++e) {
            const std::int64_t q = i * v.qkv_step + offset(v.qkv, n, j, s, e);
            expect(q == ref.qkv(b, h, 0, s, e), "q", i, n, j);
            ++q_seen[q];
            const std::int64_t k = i * v.qkv_step + v.k_at + offset(v.qkv, n, jk, s, e);
            const std::int64_t vv = i * v.qkv_step + v.v_at + offset(v.qkv, n, jk, s, e);
            expect(k == ref.qkv(b, h, 1, s, e), "k", i, n, j);
            expect(vv == ref.qkv(b, h, 2, s, e), "v", i, n, j);
            if (j % group == 0) {  // each K/V head once
              ++kv_seen[k];
              ++kv_seen[vv];
            }
            expect(i * v.out_step + offset(v.out, n, j, s, e) == ref.out(b, h, s, e), "out", i, n,
                   j);
          }
        }
      }
  EXPECT_EQ(bad, 0u);
  for (std::int64_t bh = 0; bh < a.B * a.H; ++bh)
    EXPECT_EQ(heads[bh], 1) << "sequence " << bh / a.H << ", head " << bh % a.H;
  // dQ, dK and dV land on every element of dqkv exactly once.
  std::size_t uncovered = 0;
  for (std::int64_t x = 0; x < qkv_n; ++x)
    if (q_seen[x] + kv_seen[x] != 1) ++uncovered;
  EXPECT_EQ(uncovered, 0u) << "elements of dqkv not written exactly once";
}

}  // namespace

// Multi-head (one run), K/V shared by all query heads (one run), groups per sequence (B runs).
TEST(CudnnAttentionView, EveryElementIsTheReferenceLayoutsOwn) {
  for (const auto [B, S, H, Hkv, D] : {std::array<std::int64_t, 5>{2, 5, 3, 3, 8},
                                       {1, 4, 1, 1, 8},
                                       {2, 5, 4, 1, 8},
                                       {3, 5, 6, 2, 8},
                                       {2, 3, 8, 4, 16},
                                       {2, 3, 32, 8, 8}})
    check_view(AttnShape{B, S, H, Hkv, D});
}

// The per-sequence view: cuDNN's batch stride is smaller than its sequence stride (an "sbhd"
// layout), and the runs start one sequence apart.
TEST(CudnnAttentionView, GroupsAreCudnnsBatchOneRunPerSequence) {
  const CudnnAttnView v(AttnShape{3, 7, 6, 2, 8});
  EXPECT_EQ(v.runs, 3);
  EXPECT_EQ(v.q_dims, (Dims{2, 3, 7, 8}));
  EXPECT_EQ(v.kv_dims, (Dims{2, 1, 7, 8}));
  EXPECT_EQ(v.qkv, (Dims{5 * 8, 8, 2 * 5 * 8, 1}));
  EXPECT_EQ(v.qkv_step, 7 * 2 * 5 * 8);
  EXPECT_EQ(v.out, (Dims{3 * 8, 8, 6 * 8, 1}));
  EXPECT_EQ(v.stats_step, 6 * 7);
  EXPECT_EQ(v.k_at, 3 * 8);
  EXPECT_EQ(v.v_at, 4 * 8);
  const CudnnAttnView mha(AttnShape{3, 7, 6, 6, 8});
  EXPECT_EQ(mha.runs, 1);
  EXPECT_EQ(mha.qkv, (Dims{7 * 6 * 3 * 8, 3 * 8, 6 * 3 * 8, 1}));
}
