// Host kernels against independent references (double-precision loops written from the
// formulas) and their backward passes against finite differences of their forward passes.
#include <gtest/gtest.h>

#include <cmath>

#include "kernel_test_util.hpp"
#include "kernels/math.hpp"
#include "ovb/rounding.hpp"
#include "ovb/test_main.hpp"

using namespace ovb;
using namespace ovb::gpt;
using namespace ovb::gpt::testing;

namespace {

class HostKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    BackendOptions o;
    o.name = "host";
    backend_ = make_backend(o, ovb::testing::launch());
    k_ = make_kernels(*backend_, DType::f32);
    s_ = backend_->create_stream();
  }
  Kernels& k() { return *k_; }
  Stream& s() { return *s_; }
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Kernels> k_;
  std::unique_ptr<Stream> s_;
};

// Splits columns [T, C] into `parts` pieces [T, C/parts].
std::vector<std::vector<float>> split_cols(const std::vector<float>& x, std::int64_t T,
                                           std::int64_t C, int parts) {
  const std::int64_t c = C / parts;
  std::vector<std::vector<float>> out(static_cast<std::size_t>(parts), std::vector<float>(T * c));
  for (int p = 0; p < parts; ++p)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) out[p][t * c + j] = x[t * C + p * c + j];
  return out;
}

std::vector<float> join_cols(const std::vector<std::vector<float>>& parts, std::int64_t T) {
  const std::int64_t c = static_cast<std::int64_t>(parts[0].size()) / T;
  const std::int64_t C = c * static_cast<std::int64_t>(parts.size());
  std::vector<float> x(T * C);
  for (std::size_t p = 0; p < parts.size(); ++p)
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t j = 0; j < c; ++j) x[t * C + p * c + j] = parts[p][t * c + j];
  return x;
}

}  // namespace

// Layer norm of rows split over two "ranks": statistics summed between the two steps.
TEST_F(HostKernels, LayerNormSplitRowsMatchesReferenceAndFiniteDifferences) {
  const std::int64_t T = 5, C = 12, P = 2, c = C / P;
  std::vector<float> x = random_vec(T * C, 1, 2.0f), g = random_vec(C, 2), b = random_vec(C, 3);
  for (float& v : x) v += 0.5f;
  const std::vector<float> R = random_vec(T * C, 4);
  auto forward = [&](std::vector<float>* mr_out) {
    auto xs = split_cols(x, T, C, P);
    std::vector<float> stats(2 * T, 0.0f), part(2 * T);
    for (int p = 0; p < P; ++p) {
      k().ln_partial(s(), xs[p].data(), part.data(), T, c);
      for (std::int64_t i = 0; i < 2 * T; ++i) stats[i] += part[i];
    }
    std::vector<std::vector<float>> outs(P, std::vector<float>(T * c));
    std::vector<float> mr(2 * T);
    for (int p = 0; p < P; ++p)
      k().ln_forward(s(), xs[p].data(), stats.data(), g.data() + p * c, b.data() + p * c,
                     outs[p].data(), mr.data(), T, c, C);
    if (mr_out) *mr_out = mr;
    return join_cols(outs, T);
  };
  std::vector<float> mr;
  const std::vector<float> y = forward(&mr);
  for (std::int64_t t = 0; t < T; ++t) {
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < C; ++j) mean += x[t * C + j];
    mean /= C;
    for (std::int64_t j = 0; j < C; ++j) var += (x[t * C + j] - mean) * (x[t * C + j] - mean);
    var /= C;
    for (std::int64_t j = 0; j < C; ++j)
      EXPECT_NEAR(y[t * C + j], (x[t * C + j] - mean) / std::sqrt(var + kLnEps) * g[j] + b[j],
                  1e-4);
  }
  // Backward of loss = sum(y * R), pieces again.
  auto xs = split_cols(x, T, C, P), dys = split_cols(R, T, C, P);
  std::vector<float> sums(2 * T, 0.0f), part(2 * T);
  for (int p = 0; p < P; ++p) {
    k().ln_backward_partial(s(), dys[p].data(), xs[p].data(), mr.data(), g.data() + p * c,
                            part.data(), T, c);
    for (std::int64_t i = 0; i < 2 * T; ++i) sums[i] += part[i];
  }
  std::vector<std::vector<float>> dxs(P, std::vector<float>(T * c, 0.0f));
  std::vector<float> dg(C, 0.0f), db(C, 0.0f);
  for (int p = 0; p < P; ++p)
    k().ln_backward(s(), dys[p].data(), xs[p].data(), mr.data(), g.data() + p * c, sums.data(),
                    dxs[p].data(), dg.data() + p * c, db.data() + p * c, T, c, C);
  auto loss = [&] { return dot(forward(nullptr), R); };
  check_gradient(x, join_cols(dxs, T), loss, "ln dx");
  check_gradient(g, dg, loss, "ln dgamma");
  check_gradient(b, db, loss, "ln dbeta");
}

TEST_F(HostKernels, GeluIsCloseToExactAndItsGradientToFiniteDifferences) {
  std::vector<float> x = random_vec(64, 5, 2.0f), y(64), dy = random_vec(64, 6), dx(64);
  k().gelu_forward(s(), x.data(), y.data(), 64);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(y[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 2e-3);  // tanh approx.
  k().gelu_backward(s(), x.data(), dy.data(), dx.data(), 64);
  check_gradient(
      x, dx,
      [&] {
        std::vector<float> out(64);
        k().gelu_forward(s(), x.data(), out.data(), 64);
        return dot(out, dy);
      },
      "gelu", 1e-3);
}

// The GEMMs (OpenBLAS) against loops in double: an fp32 inner product of n terms is within
// gamma_n of the sum of its terms' magnitudes (ovb/rounding.hpp), whatever order the BLAS kernel
// adds them in. GELU (tanh form) of the fp32 pre-activation: its slope is at most 1.13, and its
// own evaluation takes about ten roundings (cube, two multiply-adds, tanh within 2 ulp, 1 + ., the
// product), bounded by gamma_16 of |x| (|gelu(x)| <= |x|).
static double gelu_bound(double y, double y_bound) {
  return 1.13 * y_bound + ovb::testing::fp32_gamma(16) * (std::abs(y) + y_bound);
}

TEST_F(HostKernels, LinearMatchesLoopsAndItsGradients) {
  using ovb::testing::fp32_dot_bound;
  const std::int64_t T = 4, N = 3, K = 5;
  const std::vector<float> x = random_vec(T * K, 7), w = random_vec(N * K, 8),
                           bias = random_vec(N, 9), dy = random_vec(T * N, 10);
  std::vector<float> y(T * N), act(T * N), dx(T * K), dw(N * K, 99.0f);
  k().linear_forward(s(), x.data(), w.data(), bias.data(), y.data(), act.data(), T, N, K);
  k().linear_backward_input(s(), dy.data(), w.data(), dx.data(), T, N, K);
  k().linear_backward_weight(s(), dy.data(), x.data(), dw.data(), T, N, K);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t n = 0; n < N; ++n) {
      double ref = bias[n], mag = std::abs(bias[n]);
      for (std::int64_t j = 0; j < K; ++j) {
        ref += double(x[t * K + j]) * w[n * K + j];
        mag += std::abs(double(x[t * K + j]) * w[n * K + j]);
      }
      const double tol = fp32_dot_bound(K + 1, mag);
      EXPECT_NEAR(y[t * N + n], ref, tol);
      EXPECT_NEAR(act[t * N + n], gelu(static_cast<float>(ref)), gelu_bound(ref, tol));
    }
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < K; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t n = 0; n < N; ++n) {
        ref += double(dy[t * N + n]) * w[n * K + j];
        mag += std::abs(double(dy[t * N + n]) * w[n * K + j]);
      }
      EXPECT_NEAR(dx[t * K + j], ref, fp32_dot_bound(N, mag));
    }
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t j = 0; j < K; ++j) {
      double ref = 0, mag = 0;  // overwritten, not accumulated onto the 99s
      for (std::int64_t t = 0; t < T; ++t) {
        ref += double(dy[t * N + n]) * x[t * K + j];
        mag += std::abs(double(dy[t * N + n]) * x[t * K + j]);
      }
      EXPECT_NEAR(dw[n * K + j], ref, fp32_dot_bound(T, mag));
    }
}

// The fused backward variants: dX with the GELU backward of the layer input's pre-activation,
// dW with the bias gradient (overwritten), against loops from the formulas (bounds as above; the
// GELU slope of an exact pre-activation is evaluated in fp32 in about ten roundings as well, and
// |gelu'| <= 1.13 bounds how it scales the product's error).
TEST_F(HostKernels, LinearBackwardWithGeluAndBiasGradient) {
  using ovb::testing::fp32_dot_bound;
  const std::int64_t T = 4, N = 3, K = 5;
  const std::vector<float> x = random_vec(T * K, 7), w = random_vec(N * K, 8),
                           dy = random_vec(T * N, 10), pre = random_vec(T * K, 12, 2.0f);
  std::vector<float> dx(T * K), dw(N * K), db(N, 99.0f);
  k().linear_backward_input(s(), dy.data(), w.data(), dx.data(), T, N, K, pre.data());
  k().linear_backward_weight(s(), dy.data(), x.data(), dw.data(), T, N, K, db.data());
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t j = 0; j < K; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t n = 0; n < N; ++n) {
        ref += double(dy[t * N + n]) * w[n * K + j];
        mag += std::abs(double(dy[t * N + n]) * w[n * K + j]);
      }
      const double slope = gelu_grad(pre[t * K + j]);
      const double tol = 1.13 * fp32_dot_bound(N, mag) +
                         ovb::testing::fp32_gamma(16) * std::abs(slope) * (std::abs(ref) + mag);
      EXPECT_NEAR(dx[t * K + j], ref * slope, tol);
    }
  for (std::int64_t n = 0; n < N; ++n) {
    double ref = 0, mag = 0;  // overwritten, not accumulated onto the 99s
    for (std::int64_t t = 0; t < T; ++t) {
      ref += dy[t * N + n];
      mag += std::abs(dy[t * N + n]);
    }
    EXPECT_NEAR(db[n], ref, ovb::testing::fp32_dot_bound(T, mag));
  }
}

TEST_F(HostKernels, BiasGradAccumulatesColumnSums) {
  const std::vector<float> dy = random_vec(6 * 4, 11);
  std::vector<float> db{1, 2, 3, 4};
  k().bias_grad(s(), dy.data(), db.data(), 6, 4);
  for (int c = 0; c < 4; ++c) {
    double ref = c + 1;
    for (int t = 0; t < 6; ++t) ref += dy[t * 4 + c];
    EXPECT_NEAR(db[c], ref, 1e-5);
  }
}

// Gradient accumulation over micro-steps: y += x in fp32, twice, against the sums by hand.
TEST_F(HostKernels, AccumulateAddsInFp32) {
  const std::vector<float> x = {1.5f, -2.0f, 0.25f, 1e-8f}, y0 = {1.0f, 1.0f, -0.25f, 1.0f};
  std::vector<float> y = y0;
  k().accumulate(s(), x.data(), y.data(), 4);
  k().accumulate(s(), x.data(), y.data(), 3);  // the last element only once
  EXPECT_EQ(y, (std::vector<float>{4.0f, -3.0f, 0.25f, 1.0f + 1e-8f}));
}

TEST_F(HostKernels, AttentionMatchesMaskedSoftmaxAndFiniteDifferences) {
  const std::int64_t B = 2, S = 5, H = 2, D = 4, row = 3 * H * D;
  std::vector<float> qkv = random_vec(B * S * row, 12);
  const std::vector<float> R = random_vec(B * S * H * D, 13);
  std::vector<float> out(B * S * H * D), lse(B * H * S);
  k().attention_forward(s(), qkv.data(), out.data(), lse.data(), B, S, H, D);
  const double scale = 1 / std::sqrt(double(D));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < S; ++i) {
        // Full score row with -inf above the diagonal, softmax in double.
        std::vector<double> sc(S);
        double mx = -1e300;
        for (std::int64_t j = 0; j < S; ++j) {
          double d = 0;
          for (std::int64_t e = 0; e < D; ++e)
            d += double(qkv[(b * S + i) * row + h * 3 * D + e]) *
                 qkv[(b * S + j) * row + h * 3 * D + D + e];
          sc[j] = j <= i ? d * scale : -INFINITY;
          mx = std::max(mx, sc[j]);
        }
        double z = 0;
        for (double v : sc) z += std::exp(v - mx);
        EXPECT_NEAR(lse[(b * H + h) * S + i], mx + std::log(z), 1e-5);
        for (std::int64_t e = 0; e < D; ++e) {
          double o = 0;
          for (std::int64_t j = 0; j < S; ++j)
            o += std::exp(sc[j] - mx) / z * qkv[(b * S + j) * row + h * 3 * D + 2 * D + e];
          EXPECT_NEAR(out[(b * S + i) * H * D + h * D + e], o, 1e-5);
        }
      }
  std::vector<float> dqkv(qkv.size(), 7.0f), scratch(B * S * H);
  k().attention_backward(s(), qkv.data(), out.data(), R.data(), lse.data(), dqkv.data(),
                         scratch.data(), B, S, H, D);
  check_gradient(
      qkv, dqkv,
      [&] {
        std::vector<float> o(out.size()), l(lse.size());
        k().attention_forward(s(), qkv.data(), o.data(), l.data(), B, S, H, D);
        return dot(o, R);
      },
      "attention dqkv", 1e-2, 120);
}

// Cross-entropy with the vocabulary split in two slices, combined as after the Y all-gather.
TEST_F(HostKernels, VocabParallelCrossEntropyMatchesLogSoftmaxAndFiniteDifferences) {
  const std::int64_t T = 6, V = 10, P = 2, v = V / P;
  std::vector<float> logits = random_vec(T * V, 14, 3.0f);
  const std::vector<std::int32_t> tgt{0, 9, 4, 5, 2, 7};
  const float scale = 0.25f;
  auto run = [&](std::vector<float>* dlogits) {
    auto ls = split_cols(logits, T, V, P);
    std::vector<float> parts(P * 3 * T), lse(T);
    for (int p = 0; p < P; ++p)
      k().ce_partial(s(), ls[p].data(), tgt.data(), parts.data() + p * 3 * T, T, v, p * v);
    float loss = 0;
    k().ce_combine(s(), parts.data(), P, lse.data(), &loss, T);
    if (dlogits) {
      for (int p = 0; p < P; ++p)
        k().ce_backward(s(), ls[p].data(), tgt.data(), lse.data(), scale, T, v, p * v);
      *dlogits = join_cols(ls, T);
    }
    return double(loss);
  };
  double ref = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    double mx = -1e300, z = 0;
    for (std::int64_t j = 0; j < V; ++j) mx = std::max(mx, double(logits[t * V + j]));
    for (std::int64_t j = 0; j < V; ++j) z += std::exp(logits[t * V + j] - mx);
    ref += mx + std::log(z) - logits[t * V + tgt[t]];
  }
  std::vector<float> dl;
  const double loss = run(&dl);
  EXPECT_NEAR(loss, ref, 1e-4);
  // The loss is an fp32 sum: its last place is the grid of every evaluation.
  check_gradient(
      logits, dl, [&] { return scale * run(nullptr); }, "cross-entropy dlogits", 1e-2, 40,
      scale * ovb::testing::fp32_last_place(loss));
}

TEST_F(HostKernels, EmbeddingForwardAndBackward) {
  const std::int64_t V = 7, S = 3, T = 6, C = 4;
  std::vector<float> wte = random_vec(V * C, 15), wpe = random_vec(S * C, 16);
  const std::vector<float> R = random_vec(T * C, 17);
  const std::vector<std::int32_t> tok{3, 0, 6, 3, 3, 1};
  std::vector<float> out(T * C), dwte(V * C, 0.0f), dwpe(S * C, 0.0f);
  k().embedding_forward(s(), tok.data(), wte.data(), wpe.data(), out.data(), T, S, C);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t c = 0; c < C; ++c)
      EXPECT_FLOAT_EQ(out[t * C + c], wte[tok[t] * C + c] + wpe[(t % S) * C + c]);
  k().embedding_backward(s(), tok.data(), R.data(), dwte.data(), dwpe.data(), T, S, C);
  auto loss = [&] {
    std::vector<float> o(T * C);
    k().embedding_forward(s(), tok.data(), wte.data(), wpe.data(), o.data(), T, S, C);
    return dot(o, R);
  };
  check_gradient(wte, dwte, loss, "dwte", 1e-2, 1000);
  check_gradient(wpe, dwpe, loss, "dwpe", 1e-2, 1000);
}

TEST_F(HostKernels, AdamWWithClippingMatchesDoubleReference) {
  const std::int64_t n = 16;
  std::vector<float> p = random_vec(n, 18), g = random_vec(n, 19), m(n, 0.0f), v(n, 0.0f), work(n);
  std::vector<double> pr(p.begin(), p.end()), mr(n, 0), vr(n, 0);
  float sumsq = 0;
  k().sumsq(s(), g.data(), n, &sumsq);
  double ss = 0;
  for (float x : g) ss += double(x) * x;
  ASSERT_NEAR(sumsq, ss, 1e-4);
  AdamWArgs a;
  a.lr = 0.01f;
  a.weight_decay = 0.1f;
  a.clip = 0.5f;
  const double scale = 0.5 / (std::sqrt(ss) + 1e-6);
  for (int step = 1; step <= 2; ++step) {
    a.step = step;
    k().adamw(s(), p.data(), g.data(), m.data(), v.data(), work.data(), n, a, &sumsq);
    for (std::int64_t i = 0; i < n; ++i) {
      const double gi = g[i] * scale;
      mr[i] = 0.9 * mr[i] + 0.1 * gi;
      vr[i] = 0.95 * vr[i] + 0.05 * gi * gi;
      const double mh = mr[i] / (1 - std::pow(0.9, step)), vh = vr[i] / (1 - std::pow(0.95, step));
      pr[i] -= 0.01 * (mh / (std::sqrt(vh) + 1e-8) + 0.1 * pr[i]);
      EXPECT_NEAR(p[i], pr[i], 1e-5) << "step " << step;
      EXPECT_EQ(work[i], p[i]);
    }
  }
}

// A weight split into 2x2 blocks and 2 Z shards initialises to the same values as unsplit.
TEST_F(HostKernels, InitialisationDependsOnlyOnGlobalIndex) {
  TensorDesc whole;
  whole.id = 42;
  whole.rows = 6;
  whole.cols = 8;
  whole.block_rows = 6;
  whole.block_cols = 8;
  whole.count = 48;
  whole.init = Init::normal;
  whole.stddev = 0.02f;
  std::vector<float> ref(48);
  k().init_tensor(s(), ref.data(), whole, 7);
  double sum2 = 0;
  for (float v : ref) sum2 += double(v) * v;
  EXPECT_GT(sum2, 0.0);
  std::vector<float> assembled(48, 0.0f);
  for (int br = 0; br < 2; ++br)
    for (int bc = 0; bc < 2; ++bc)
      for (int z = 0; z < 2; ++z) {
        TensorDesc t = whole;
        t.block_rows = 3;
        t.block_cols = 4;
        t.row0 = br * 3;
        t.col0 = bc * 4;
        t.count = 6;
        t.flat0 = z * 6;
        std::vector<float> piece(6);
        k().init_tensor(s(), piece.data(), t, 7);
        for (int e = 0; e < 6; ++e)
          assembled[static_cast<std::size_t>(t.global_index(e))] = piece[e];
      }
  EXPECT_EQ(assembled, ref);
}
