// The host kernels of Llama blocks (RMSNorm, SwiGLU, RoPE, grouped-query attention) against
// double-precision references written from the formulas, and their backward passes against
// finite differences of their forward passes.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_test_util.hpp"
#include "kernels/host/llama_ops.hpp"
#include "kernels/math.hpp"

using namespace ovb::gpt;
using namespace ovb::gpt::testing;

namespace {

// RMSNorm of [T, C] rows whose features are split into two halves ("ranks"): partial sums of
// squares added between the two steps, as the all-reduce over X does.
std::vector<float> rms_split(const std::vector<float>& x, const std::vector<float>& g,
                             std::int64_t T, std::int64_t C, std::vector<float>* mr_out = nullptr) {
  const std::int64_t c = C / 2;
  std::vector<float> part[2], gp[2], out(T * C), st[2], mr(2 * T);
  for (int p = 0; p < 2; ++p) {
    part[p].resize(T * c);
    gp[p].assign(g.begin() + p * c, g.begin() + (p + 1) * c);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) part[p][t * c + j] = x[t * C + p * c + j];
    st[p].resize(T);
    host_rms_partial(part[p].data(), st[p].data(), T, c);
  }
  std::vector<float> sum(T);
  for (std::int64_t t = 0; t < T; ++t) sum[t] = st[0][t] + st[1][t];
  for (int p = 0; p < 2; ++p) {
    std::vector<float> o(T * c);
    host_rms_forward(part[p].data(), sum.data(), gp[p].data(), o.data(), mr.data(), T, c, C);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) out[t * C + p * c + j] = o[t * c + j];
  }
  if (mr_out) *mr_out = mr;
  return out;
}

}  // namespace

TEST(LlamaKernels, RmsNormSplitRowsMatchesReferenceAndFiniteDifferences) {
  const std::int64_t T = 5, C = 8, c = C / 2;
  std::vector<float> x = random_vec(T * C, 1), g = random_vec(C, 2);
  const std::vector<float> R = random_vec(T * C, 3);
  std::vector<float> mr;
  const std::vector<float> y = rms_split(x, g, T, C, &mr);
  for (std::int64_t t = 0; t < T; ++t) {
    double ms = 0;
    for (std::int64_t j = 0; j < C; ++j) ms += double(x[t * C + j]) * x[t * C + j] / C;
    const double rstd = 1 / std::sqrt(ms + kLnEps);
    EXPECT_NEAR(mr[2 * t + 1], rstd, 1e-5 * rstd);
    EXPECT_EQ(mr[2 * t], 0.0f);
    for (std::int64_t j = 0; j < C; ++j)
      EXPECT_NEAR(y[t * C + j], x[t * C + j] * rstd * g[j], 1e-5);
  }
  // Backward, split the same way: partial row sums added, then each half's dx and dg.
  std::vector<float> dx(T * C, 0.5f), dg(C, 0.25f), sums(T, 0.0f);
  for (int p = 0; p < 2; ++p) {
    std::vector<float> dyp(T * c), xp(T * c), s(T);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) {
        dyp[t * c + j] = R[t * C + p * c + j];
        xp[t * c + j] = x[t * C + p * c + j];
      }
    host_rms_backward_partial(dyp.data(), xp.data(), mr.data(), g.data() + p * c, s.data(), T, c);
    for (std::int64_t t = 0; t < T; ++t) sums[t] += s[t];
  }
  for (int p = 0; p < 2; ++p) {
    std::vector<float> dyp(T * c), xp(T * c), dxp(T * c, 0.5f);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) {
        dyp[t * c + j] = R[t * C + p * c + j];
        xp[t * c + j] = x[t * C + p * c + j];
      }
    host_rms_backward(dyp.data(), xp.data(), mr.data(), g.data() + p * c, sums.data(), dxp.data(),
                      dg.data() + p * c, T, c, C);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) dx[t * C + p * c + j] = dxp[t * c + j];
  }
  for (float& v : dx) v -= 0.5f;  // dx and dg accumulate
  for (float& v : dg) v -= 0.25f;
  auto loss = [&] { return dot(rms_split(x, g, T, C), R); };
  check_gradient(x, dx, loss, "rmsnorm dx");
  check_gradient(g, dg, loss, "rmsnorm dg");
}

TEST(LlamaKernels, SwigluMatchesFormulaAndFiniteDifferences) {
  const std::int64_t T = 4, F = 6;
  std::vector<float> gu = random_vec(T * 2 * F, 4, 2.0f);
  const std::vector<float> R = random_vec(T * F, 5);
  std::vector<float> y(T * F);
  host_swiglu_forward(gu.data(), y.data(), T, F);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < F; ++j) {
      const double a = gu[t * 2 * F + 2 * j], b = gu[t * 2 * F + 2 * j + 1];
      EXPECT_NEAR(y[t * F + j], a / (1 + std::exp(-a)) * b, 1e-5);
    }
  std::vector<float> dgu(gu.size(), 9.0f);  // overwritten
  host_swiglu_backward(gu.data(), R.data(), dgu.data(), T, F);
  check_gradient(
      gu, dgu,
      [&] {
        std::vector<float> o(T * F);
        host_swiglu_forward(gu.data(), o.data(), T, F);
        return dot(o, R);
      },
      "swiglu dgu", 1e-2, 48);
}

TEST(LlamaKernels, RopeRotatesQAndKByPositionAndItsBackwardIsTheTranspose) {
  // Two sequences of 3 tokens, 2 groups of [2 q heads | k | v], head size 4.
  const std::int64_t B = 2, S = 3, G = 2, r = 2, D = 4, row = G * (r + 2) * D;
  const float theta = 100.0f;
  std::vector<float> x = random_vec(B * S * row, 6);
  std::vector<float> y = x;
  host_rope(y.data(), B, S, G, r, D, theta, false);
  for (std::int64_t t = 0; t < B * S; ++t)
    for (std::int64_t grp = 0; grp < G; ++grp)
      for (std::int64_t h = 0; h < r + 2; ++h)
        for (std::int64_t i = 0; i < D / 2; ++i) {
          const std::int64_t at = t * row + (grp * (r + 2) + h) * D + 2 * i;
          // v (h = r + 1) is not rotated; q and k turn by pos * theta^(-2i/D), pos = t % S.
          const double a = h == r + 1 ? 0 : double(t % S) * std::pow(double(theta), -2.0 * i / D);
          EXPECT_NEAR(y[at], x[at] * std::cos(a) - x[at + 1] * std::sin(a), 1e-5);
          EXPECT_NEAR(y[at + 1], x[at] * std::sin(a) + x[at + 1] * std::cos(a), 1e-5);
        }
  // Backward turns back: the gradient of dot(rope(x), R) is rope_backward(R).
  const std::vector<float> R = random_vec(x.size(), 7);
  std::vector<float> dx = R;
  host_rope(dx.data(), B, S, G, r, D, theta, true);
  check_gradient(
      x, dx,
      [&] {
        std::vector<float> o = x;
        host_rope(o.data(), B, S, G, r, D, theta, false);
        return dot(o, R);
      },
      "rope dx");
}

// Grouped-query attention equals multi-head attention whose K/V heads are copied to every query
// head of their group; its K/V gradient is the sum over the group's copies.
TEST(LlamaKernels, GroupedQueryAttentionIsMultiHeadWithSharedKvAndFiniteDifferences) {
  const std::int64_t B = 2, S = 4, H = 4, Hkv = 2, r = H / Hkv, D = 4;
  const std::int64_t row = Hkv * (r + 2) * D, mrow = 3 * H * D;
  std::vector<float> qkv = random_vec(B * S * row, 8);
  const std::vector<float> R = random_vec(B * S * H * D, 9);
  // The multi-head layout: per head q|k|v, k and v taken from the head's group.
  std::vector<float> mha(B * S * mrow);
  for (std::int64_t t = 0; t < B * S; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t grp = h / r, base = t * row + grp * (r + 2) * D;
      for (std::int64_t e = 0; e < D; ++e) {
        mha[t * mrow + h * 3 * D + e] = qkv[base + (h % r) * D + e];
        mha[t * mrow + h * 3 * D + D + e] = qkv[base + r * D + e];
        mha[t * mrow + h * 3 * D + 2 * D + e] = qkv[base + (r + 1) * D + e];
      }
    }
  std::vector<float> out(B * S * H * D), lse(B * H * S), mout(out.size()), mlse(lse.size());
  host_attention_forward(qkv.data(), out.data(), lse.data(), B, S, H, Hkv, D);
  host_attention_forward(mha.data(), mout.data(), mlse.data(), B, S, H, H, D);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], mout[i], 1e-6) << i;
  for (std::size_t i = 0; i < lse.size(); ++i) EXPECT_NEAR(lse[i], mlse[i], 1e-6) << i;
  std::vector<float> d(qkv.size(), 3.0f), md(mha.size()), scratch(B * S * H);
  host_attention_backward(qkv.data(), out.data(), R.data(), lse.data(), d.data(), scratch.data(), B,
                          S, H, Hkv, D);
  host_attention_backward(mha.data(), mout.data(), R.data(), mlse.data(), md.data(), scratch.data(),
                          B, S, H, H, D);
  for (std::int64_t t = 0; t < B * S; ++t)
    for (std::int64_t grp = 0; grp < Hkv; ++grp)
      for (std::int64_t e = 0; e < D; ++e) {
        const std::int64_t base = t * row + grp * (r + 2) * D;
        double dk = 0, dv = 0;
        for (std::int64_t h = grp * r; h < (grp + 1) * r; ++h) {
          EXPECT_NEAR(d[base + (h % r) * D + e], md[t * mrow + h * 3 * D + e], 1e-6);
          dk += md[t * mrow + h * 3 * D + D + e];
          dv += md[t * mrow + h * 3 * D + 2 * D + e];
        }
        EXPECT_NEAR(d[base + r * D + e], dk, 1e-5);
        EXPECT_NEAR(d[base + (r + 1) * D + e], dv, 1e-5);
      }
  check_gradient(
      qkv, d,
      [&] {
        std::vector<float> o(out.size()), l(lse.size());
        host_attention_forward(qkv.data(), o.data(), l.data(), B, S, H, Hkv, D);
        return dot(o, R);
      },
      "gqa dqkv", 1e-2, 96);
}
