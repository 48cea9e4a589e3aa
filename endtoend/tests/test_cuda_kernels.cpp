// Every CUDA kernel against the host kernel on the same inputs, in fp32 (tight: the same
// arithmetic up to ordering and fast exp) and in bf16 (inputs rounded to bf16 first, outputs
// compared with bf16-sized tolerances). Attention both ways: the CUDA-core kernels and cuDNN's
// fused flash attention (bf16; skipped, visibly, in builds without cuDNN). GPU-labelled: skipped
// visibly without a GPU.
// Run: ovb-gpt4d-cuda-kernel-tests (no MPI launcher needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernel_test_util.hpp"
#include "ovb/dtype.hpp"
#include "ovb/error.hpp"
#include "ovb/test_main.hpp"

using namespace ovb;
using namespace ovb::gpt;
using namespace ovb::gpt::testing;

namespace {

class CudaVsHost : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    BackendOptions h, c;
    h.name = "host";
    c.name = "cuda";
    host_ = make_backend(h, ovb::testing::launch());
    cuda_ = make_backend(c, ovb::testing::launch());
    hk_ = make_kernels(*host_, DType::f32);
    ck_ = make_kernels(*cuda_, GetParam());
    hs_ = host_->create_stream();
    cs_ = cuda_->create_stream();
  }
  void check_linear_gemms(Kernels& ck);
  DType act() const { return GetParam(); }
  bool bf16() const { return GetParam() == DType::bf16; }
  // Tolerance for values of magnitude ~1 computed in the activation dtype.
  float tol(float f32 = 1e-4f, float b16 = 3e-2f) const { return bf16() ? b16 : f32; }

  // Rounds host values to what the device holds in the activation dtype.
  std::vector<float> quantized(std::vector<float> v) const {
    if (bf16())
      for (float& x : v) x = bf16_bits_to_float(float_to_bf16_bits(x));
    return v;
  }
  // Device buffers: activation dtype or fp32.
  Buffer act_buf(const std::vector<float>& v) {
    Buffer b = cuda_->allocate(std::max<std::size_t>(1, v.size()) * size_of(act()));
    std::vector<unsigned char> raw(v.size() * size_of(act()));
    for (std::size_t i = 0; i < v.size(); ++i) store_host(raw.data(), act(), i, v[i]);
    upload(b, raw.data(), raw.size());
    return b;
  }
  Buffer f32_buf(const std::vector<float>& v) {
    Buffer b = cuda_->allocate(std::max<std::size_t>(1, v.size()) * 4);
    upload(b, v.data(), v.size() * 4);
    return b;
  }
  template <class I>
  Buffer int_buf(const std::vector<I>& v) {
    Buffer b = cuda_->allocate(v.size() * sizeof(I));
    upload(b, v.data(), v.size() * sizeof(I));
    return b;
  }
  // A pageable upload may still be in flight on the legacy stream when it returns, and the test
  // stream does not order with it: wait for the device.
  void upload(Buffer& b, const void* src, std::size_t bytes) {
    cuda_->upload(b, src, bytes);
    cuda_->synchronize();
  }
  std::vector<float> act_out(const Buffer& b, std::size_t n) {
    cs_->synchronize();
    std::vector<unsigned char> raw(n * size_of(act()));
    cuda_->download(raw.data(), b, raw.size());
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = load_host(raw.data(), act(), i);
    return v;
  }
  std::vector<float> f32_out(const Buffer& b, std::size_t n) {
    cs_->synchronize();
    std::vector<float> v(n);
    cuda_->download(v.data(), b, n * 4);
    return v;
  }
  static void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                           float rtol, const char* what, float atol = -1) {
    ASSERT_EQ(got.size(), want.size()) << what;
    float scale = 0;
    for (float w : want) scale = std::max(scale, std::abs(w));
    if (atol < 0) atol = rtol * std::max(scale, 1e-6f);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i])) && bad++ < 5)
        ADD_FAILURE() << what << "[" << i << "]: cuda " << got[i] << " host " << want[i];
    EXPECT_EQ(bad, 0u) << what << ": elements off";
  }

  // Attention forward and backward of `k` against the host loops on the same (quantized) inputs;
  // the backward reads the host's output and log-sum-exp, rounded like the device's.
  void compare_attention(Kernels& k, std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t D,
                         float out_tol, float dqkv_tol) {
    const std::int64_t rows = B * S;
    const std::vector<float> qkv = quantized(random_vec(rows * 3 * H * D, 16)),
                             dout = quantized(random_vec(rows * H * D, 17));
    std::vector<float> out(rows * H * D), lse(B * H * S), dqkv(qkv.size()), scratch(B * H * S);
    hk_->attention_forward(*hs_, qkv.data(), out.data(), lse.data(), B, S, H, D);
    const std::vector<float> outq = quantized(out);  // what the device's backward will read
    hk_->attention_backward(*hs_, qkv.data(), outq.data(), dout.data(), lse.data(), dqkv.data(),
                            scratch.data(), B, S, H, D);
    Buffer X = act_buf(qkv), O = act_buf(out), L = f32_buf(lse), DO = act_buf(dout),
           DX = act_buf(qkv), SC = f32_buf(scratch);
    k.attention_forward(*cs_, X.data(), O.data(), L.as<float>(), B, S, H, D);
    const std::string shape = "B" + std::to_string(B) + " S" + std::to_string(S) + " H" +
                              std::to_string(H) + " D" + std::to_string(D);
    expect_close(act_out(O, out.size()), out, out_tol, ("attention out " + shape).c_str());
    expect_close(f32_out(L, lse.size()), lse, 1e-4f, ("attention lse " + shape).c_str());
    O = act_buf(outq);
    upload(L, lse.data(), lse.size() * 4);
    k.attention_backward(*cs_, X.data(), O.data(), DO.data(), L.as<float>(), DX.data(),
                         SC.as<float>(), B, S, H, D);
    expect_close(act_out(DX, dqkv.size()), dqkv, dqkv_tol, ("attention dqkv " + shape).c_str());
  }

  // Grouped-query attention (qkv: Hkv groups of [r query heads | k | v]) of `k` against the host
  // loops, as compare_attention; dqkv starts at 5 on the device, so every element must be written.
  void compare_gqa(Kernels& k, std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t Hkv,
                   std::int64_t D, float out_tol, float dqkv_tol) {
    const std::int64_t rows = B * S, width = (H + 2 * Hkv) * D;
    const std::vector<float> qkv = quantized(random_vec(rows * width, 61)),
                             dout = quantized(random_vec(rows * H * D, 62));
    std::vector<float> out(rows * H * D), lse(B * H * S), dqkv(qkv.size()), scratch(B * H * S);
    hk_->gqa_attention_forward(*hs_, qkv.data(), out.data(), lse.data(), B, S, H, Hkv, D);
    const std::vector<float> outq = quantized(out);
    hk_->gqa_attention_backward(*hs_, qkv.data(), outq.data(), dout.data(), lse.data(), dqkv.data(),
                                scratch.data(), B, S, H, Hkv, D);
    const std::string shape = "B" + std::to_string(B) + " S" + std::to_string(S) + " H" +
                              std::to_string(H) + " Hkv" + std::to_string(Hkv) + " D" +
                              std::to_string(D);
    Buffer X = act_buf(qkv), O = act_buf(out), L = f32_buf(lse), DO = act_buf(dout),
           DX = act_buf(std::vector<float>(qkv.size(), 5.0f)), SC = f32_buf(scratch);
    k.gqa_attention_forward(*cs_, X.data(), O.data(), L.as<float>(), B, S, H, Hkv, D);
    expect_close(act_out(O, out.size()), out, out_tol, ("gqa out " + shape).c_str());
    expect_close(f32_out(L, lse.size()), lse, 1e-4f, ("gqa lse " + shape).c_str());
    O = act_buf(outq);
    upload(L, lse.data(), lse.size() * 4);
    k.gqa_attention_backward(*cs_, X.data(), O.data(), DO.data(), L.as<float>(), DX.data(),
                             SC.as<float>(), B, S, H, Hkv, D);
    expect_close(act_out(DX, dqkv.size()), dqkv, dqkv_tol, ("gqa dqkv " + shape).c_str());
  }

  void layer_norm_case(std::int64_t T, std::int64_t C);

  std::unique_ptr<Backend> host_, cuda_;
  std::unique_ptr<Kernels> hk_, ck_;
  std::unique_ptr<Stream> hs_, cs_;
};

}  // namespace

TEST_P(CudaVsHost, InitialisationAndCasts) {
  TensorDesc t;
  t.id = 9;
  t.rows = 40;
  t.cols = 24;
  t.row0 = 8;
  t.col0 = 12;
  t.block_rows = 16;
  t.block_cols = 12;
  t.flat0 = 64;
  t.count = 96;
  t.init = Init::normal;
  t.stddev = 0.5f;
  std::vector<float> want(96);
  hk_->init_tensor(*hs_, want.data(), t, 77);
  Buffer d = cuda_->allocate(96 * 4);
  ck_->init_tensor(*cs_, d.as<float>(), t, 77);
  expect_close(f32_out(d, 96), want, 1e-6f, "init normal");
  t.init = Init::ones;
  ck_->init_tensor(*cs_, d.as<float>(), t, 77);
  EXPECT_EQ(f32_out(d, 96), std::vector<float>(96, 1.0f));
  const std::vector<float> x = random_vec(300, 1, 3.0f);
  Buffer xs = f32_buf(x), a = act_buf(std::vector<float>(300)),
         back = f32_buf(std::vector<float>(300));
  ck_->to_act(*cs_, xs.as<float>(), a.data(), 300);
  ck_->to_f32(*cs_, a.data(), back.as<float>(), 300);
  EXPECT_EQ(act_out(a, 300), quantized(x));
  EXPECT_EQ(f32_out(back, 300), quantized(x));
}

TEST_P(CudaVsHost, ElementwiseGeluAddBiasGrad) {
  const std::int64_t T = 37, C = 70, n = T * C;
  const std::vector<float> x = quantized(random_vec(n, 2, 2.0f)), y = quantized(random_vec(n, 3));
  std::vector<float> sum(n), g(n), dg(n), db(C, 0.5f);
  hk_->add(*hs_, x.data(), y.data(), sum.data(), n);
  hk_->gelu_forward(*hs_, x.data(), g.data(), n);
  hk_->gelu_backward(*hs_, x.data(), y.data(), dg.data(), n);
  hk_->bias_grad(*hs_, y.data(), db.data(), T, C);
  Buffer X = act_buf(x), Y = act_buf(y), S = act_buf(x), G = act_buf(x), DG = act_buf(y),
         DB = f32_buf(std::vector<float>(C, 0.5f));
  ck_->add(*cs_, X.data(), Y.data(), S.data(), n);
  ck_->gelu_forward(*cs_, X.data(), G.data(), n);
  ck_->gelu_backward(*cs_, X.data(), DG.data(), DG.data(), n);  // in place, as in the model
  ck_->bias_grad(*cs_, Y.data(), DB.as<float>(), T, C);
  expect_close(act_out(S, n), sum, tol(1e-6f, 1e-2f), "add");
  expect_close(act_out(G, n), g, tol(1e-5f, 1e-2f), "gelu");
  expect_close(act_out(DG, n), dg, tol(1e-5f, 1e-2f), "gelu backward");
  expect_close(f32_out(DB, C), db, 1e-4f, "bias grad");
}

// fp32 whatever the activation dtype: gradient accumulation over micro-steps. The odd length
// covers a grid-stride tail; accumulating twice checks that y is read, not overwritten.
TEST_P(CudaVsHost, AccumulateFp32) {
  const std::size_t n = 100003;
  const std::int64_t len = static_cast<std::int64_t>(n);
  const std::vector<float> x = random_vec(n, 5, 3.0f), y0 = random_vec(n, 6, 2.0f);
  std::vector<float> y = y0;
  hk_->accumulate(*hs_, x.data(), y.data(), len);
  hk_->accumulate(*hs_, x.data(), y.data(), len);
  for (std::size_t i = 0; i < n; i += 9973) ASSERT_EQ(y[i], (y0[i] + x[i]) + x[i]);
  Buffer X = f32_buf(x), Y = f32_buf(y0);
  ck_->accumulate(*cs_, X.as<float>(), Y.as<float>(), len);
  ck_->accumulate(*cs_, X.as<float>(), Y.as<float>(), len);
  EXPECT_EQ(f32_out(Y, n), y);  // one fp32 add per element: bitwise equal
}

TEST_P(CudaVsHost, Embedding) {
  const std::int64_t V = 50, S = 7, T = 21, C = 40;
  const std::vector<float> wte = quantized(random_vec(V * C, 4)),
                           wpe = quantized(random_vec(S * C, 5)),
                           dout = quantized(random_vec(T * C, 6));
  std::vector<std::int32_t> tok(T);
  for (std::int64_t t = 0; t < T; ++t) tok[t] = static_cast<std::int32_t>((t * 7) % 11);  // repeats
  std::vector<float> out(T * C), dwte(V * C, 0.0f), dwpe(S * C, 0.0f);
  hk_->embedding_forward(*hs_, tok.data(), wte.data(), wpe.data(), out.data(), T, S, C);
  hk_->embedding_backward(*hs_, tok.data(), dout.data(), dwte.data(), dwpe.data(), T, S, C);
  Buffer TK = int_buf(tok), E = act_buf(wte), P = act_buf(wpe), O = act_buf(out),
         DO = act_buf(dout), DE = f32_buf(std::vector<float>(V * C)),
         DP = f32_buf(std::vector<float>(S * C));
  ck_->embedding_forward(*cs_, TK.as<std::int32_t>(), E.data(), P.data(), O.data(), T, S, C);
  ck_->embedding_backward(*cs_, TK.as<std::int32_t>(), DO.data(), DE.as<float>(), DP.as<float>(), T,
                          S, C);
  expect_close(act_out(O, T * C), out, tol(1e-6f, 1e-2f), "embedding");
  expect_close(f32_out(DE, V * C), dwte, 1e-5f, "dwte");
  expect_close(f32_out(DP, S * C), dwpe, 1e-5f, "dwpe");
}

// C = 96: the 16-byte vector kernels; C = 90: the same kernels one element at a time.
TEST_P(CudaVsHost, LayerNormForwardAndBackward) {
  for (const auto [T, C] : {std::array<std::int64_t, 2>{45, 96}, {37, 90}}) {
    layer_norm_case(T, C);
  }
}

void CudaVsHost::layer_norm_case(std::int64_t T, std::int64_t C) {
  const std::int64_t Ct = 2 * C;  // this rank holds half the features
  const std::vector<float> x = quantized(random_vec(T * C, 7, 2.0f)),
                           g = quantized(random_vec(C, 8)), b = quantized(random_vec(C, 9)),
                           dy = quantized(random_vec(T * C, 10)),
                           dx0 = quantized(random_vec(T * C, 11));
  // Reduced statistics as if the other half had the same values (exercises C_total != C).
  std::vector<float> st(2 * T), mr(2 * T), out(T * C), sums(2 * T), dx = dx0, dg(C, 0.0f),
                                                                    db(C, 0.0f);
  hk_->ln_partial(*hs_, x.data(), st.data(), T, C);
  for (float& v : st) v *= 2;
  hk_->ln_forward(*hs_, x.data(), st.data(), g.data(), b.data(), out.data(), mr.data(), T, C, Ct);
  hk_->ln_backward_partial(*hs_, dy.data(), x.data(), mr.data(), g.data(), sums.data(), T, C);
  hk_->ln_backward(*hs_, dy.data(), x.data(), mr.data(), g.data(), sums.data(), dx.data(),
                   dg.data(), db.data(), T, C, Ct);
  Buffer X = act_buf(x), G = act_buf(g), B = act_buf(b), DY = act_buf(dy), DX = act_buf(dx0),
         ST = f32_buf(std::vector<float>(2 * T)), MR = f32_buf(mr), O = act_buf(out),
         SU = f32_buf(sums), DG = f32_buf(std::vector<float>(C)),
         DB = f32_buf(std::vector<float>(C));
  ck_->ln_partial(*cs_, X.data(), ST.as<float>(), T, C);
  std::vector<float> dst = f32_out(ST, 2 * T);
  expect_close(
      dst,
      [&] {
        auto v = st;
        for (float& e : v) e /= 2;
        return v;
      }(),
      1e-5f, "ln stats");
  for (float& v : dst) v *= 2;
  upload(ST, dst.data(), dst.size() * 4);
  ck_->ln_forward(*cs_, X.data(), ST.as<float>(), G.data(), B.data(), O.data(), MR.as<float>(), T,
                  C, Ct);
  expect_close(act_out(O, T * C), out, tol(1e-4f, 2e-2f), "ln forward");
  expect_close(f32_out(MR, 2 * T), mr, 1e-4f, "ln mean/rstd");
  ck_->ln_backward_partial(*cs_, DY.data(), X.data(), MR.as<float>(), G.data(), SU.as<float>(), T,
                           C);
  expect_close(f32_out(SU, 2 * T), sums, 1e-4f, "ln backward sums");
  upload(SU, sums.data(), sums.size() * 4);
  ck_->ln_backward(*cs_, DY.data(), X.data(), MR.as<float>(), G.data(), SU.as<float>(), DX.data(),
                   DG.as<float>(), DB.as<float>(), T, C, Ct);
  expect_close(act_out(DX, T * C), dx, tol(1e-4f, 2e-2f), "ln dx");
  expect_close(f32_out(DG, C), dg, 1e-4f, "ln dgamma");
  expect_close(f32_out(DB, C), db, 1e-4f, "ln dbeta");
  // The residual add fused into the statistics pass.
  std::vector<float> sum(T * C), st2(2 * T);
  hk_->add_ln_partial(*hs_, x.data(), dy.data(), sum.data(), st2.data(), T, C);
  Buffer SUM = act_buf(std::vector<float>(T * C)), ST2 = f32_buf(std::vector<float>(2 * T));
  ck_->add_ln_partial(*cs_, X.data(), DY.data(), SUM.data(), ST2.as<float>(), T, C);
  expect_close(act_out(SUM, T * C), quantized(sum), tol(1e-6f, 1e-2f), "residual add");
  expect_close(f32_out(ST2, 2 * T), st2, tol(1e-5f, 1e-2f), "residual add + ln stats");
}

// The three GEMMs of a linear layer, with and without their epilogues, on `ck` (the heuristic's
// algorithms or autotuned ones) against the host kernels.
void CudaVsHost::check_linear_gemms(Kernels& ck) {
  for (const auto [T, N, K] :
       {std::array<std::int64_t, 3>{48, 64, 40}, {33, 20, 24}, {17, 24, 30}}) {
    const std::vector<float> x = quantized(random_vec(T * K, 12)),
                             w = quantized(random_vec(N * K, 13)),
                             bias = quantized(random_vec(N, 14)),
                             dy = quantized(random_vec(T * N, 15));
    std::vector<float> y(T * N), act_y(T * N), dx(T * K), dw(N * K);
    hk_->linear_forward(*hs_, x.data(), w.data(), bias.data(), y.data(), act_y.data(), T, N, K);
    hk_->linear_backward_input(*hs_, dy.data(), w.data(), dx.data(), T, N, K);
    hk_->linear_backward_weight(*hs_, dy.data(), x.data(), dw.data(), T, N, K);
    Buffer X = act_buf(x), W = act_buf(w), Bi = act_buf(bias), Y = act_buf(y), A = act_buf(y),
           DY = act_buf(dy), DX = act_buf(dx), DW = f32_buf(dw);
    // N = 64: GELU fused into the cuBLASLt epilogue; N = 20: GELU as its own kernel.
    ck.linear_forward(*cs_, X.data(), W.data(), Bi.data(), Y.data(), A.data(), T, N, K);
    ck.linear_backward_input(*cs_, DY.data(), W.data(), DX.data(), T, N, K);
    ck.linear_backward_weight(*cs_, DY.data(), X.data(), DW.as<float>(), T, N, K);
    expect_close(act_out(Y, T * N), y, tol(1e-5f, 2e-2f), "linear forward");
    // cuBLASLt's GELU epilogue may approximate tanh differently from the host formula.
    expect_close(act_out(A, T * N), act_y, tol(1e-3f, 2e-2f), "linear forward gelu");
    expect_close(act_out(DX, T * K), dx, tol(1e-5f, 2e-2f), "linear dx");
    expect_close(f32_out(DW, N * K), dw, 1e-5f, "linear dw");  // fp32 output of exact products
    ck.linear_forward(*cs_, X.data(), W.data(), nullptr, Y.data(), nullptr, T, N, K);
    std::vector<float> nb(T * N);
    hk_->linear_forward(*hs_, x.data(), w.data(), nullptr, nb.data(), nullptr, T, N, K);
    expect_close(act_out(Y, T * N), nb, tol(1e-5f, 2e-2f), "linear forward, no bias");
    // The backward epilogues: dX with the GELU backward of its pre-activation (DGELU; K = 30:
    // the separate kernel), dW with the bias gradient (BGRADB), which is overwritten.
    const std::vector<float> pre = quantized(random_vec(T * K, 21, 2.0f));
    std::vector<float> dxg(T * K), dwb(N * K), dbias(N, 7.0f);
    hk_->linear_backward_input(*hs_, dy.data(), w.data(), dxg.data(), T, N, K, pre.data());
    hk_->linear_backward_weight(*hs_, dy.data(), x.data(), dwb.data(), T, N, K, dbias.data());
    Buffer PRE = act_buf(pre), DXG = act_buf(dxg), DWB = f32_buf(dwb),
           DBI = f32_buf(std::vector<float>(N, 7.0f));
    ck.linear_backward_input(*cs_, DY.data(), W.data(), DXG.data(), T, N, K, PRE.data());
    ck.linear_backward_weight(*cs_, DY.data(), X.data(), DWB.as<float>(), T, N, K, DBI.as<float>());
    expect_close(act_out(DXG, T * K), dxg, tol(1e-3f, 3e-2f), "linear dx with GELU backward");
    expect_close(f32_out(DWB, N * K), dw, 1e-5f, "linear dw with the bias gradient");
    expect_close(f32_out(DBI, N), dbias, 1e-5f, "linear bias gradient");
  }
}

TEST_P(CudaVsHost, LinearGemmsWithEpilogues) {
  check_linear_gemms(*ck_);
}

// --gemm-autotune: the algorithms kept after timing compute the same GEMMs. Against the host
// kernels as the heuristic's, then against the heuristic's own results on a shape with more
// candidates, element by element within the bound of two fp32 summation orders (rounding.hpp)
// plus one rounding of each result to the activation dtype (bf16: unit roundoff 2^-8).
TEST_P(CudaVsHost, LinearGemmsAutotuned) {
  auto tuned = make_kernels(*cuda_, act(), nullptr, AttentionKind::automatic, 8);
  check_linear_gemms(*tuned);
  EXPECT_NE(tuned->description().find("autotuned among the heuristic's first 8"), std::string::npos)
      << tuned->description();
  const std::int64_t T = 512, N = 384, K = 256;
  const std::vector<float> x = quantized(random_vec(T * K, 31)),
                           w = quantized(random_vec(N * K, 32)),
                           bias = quantized(random_vec(N, 33)),
                           dy = quantized(random_vec(T * N, 34));
  const double unit = bf16() ? 0x1p-8 : 0.0;
  struct Out {
    std::vector<float> y, dx, dw, db;
  };
  auto run = [&](Kernels& k) {
    Buffer X = act_buf(x), W = act_buf(w), Bi = act_buf(bias), DY = act_buf(dy),
           Y = act_buf(std::vector<float>(T * N)), DX = act_buf(std::vector<float>(T * K)),
           DW = f32_buf(std::vector<float>(N * K)), DB = f32_buf(std::vector<float>(N));
    // Twice: the first call of a shape is the one that times the candidates.
    for (int rep = 0; rep < 2; ++rep) {
      k.linear_forward(*cs_, X.data(), W.data(), Bi.data(), Y.data(), nullptr, T, N, K);
      k.linear_backward_input(*cs_, DY.data(), W.data(), DX.data(), T, N, K);
      k.linear_backward_weight(*cs_, DY.data(), X.data(), DW.as<float>(), T, N, K, DB.as<float>());
    }
    return Out{act_out(Y, T * N), act_out(DX, T * K), f32_out(DW, N * K), f32_out(DB, N)};
  };
  const Out a = run(*ck_), b = run(*tuned);
  auto pair_bound = [&](double ra, double rb, std::int64_t n, double magnitude) {
    return unit * (std::abs(ra) + std::abs(rb)) / (1 - unit) +
           ovb::testing::fp32_two_orders_bound(n, magnitude);
  };
  int bad = 0;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t n = 0; n < N; ++n) {
      double mag = std::abs(bias[n]);
      for (std::int64_t k = 0; k < K; ++k) mag += std::abs(x[t * K + k] * w[n * K + k]);
      const std::size_t i = static_cast<std::size_t>(t * N + n);
      bad += std::abs(a.y[i] - b.y[i]) > pair_bound(a.y[i], b.y[i], K + 1, mag);
    }
  EXPECT_EQ(bad, 0) << "forward elements outside the bound";
  bad = 0;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t k = 0; k < K; ++k) {
      double mag = 0;
      for (std::int64_t n = 0; n < N; ++n) mag += std::abs(dy[t * N + n] * w[n * K + k]);
      const std::size_t i = static_cast<std::size_t>(t * K + k);
      bad += std::abs(a.dx[i] - b.dx[i]) > pair_bound(a.dx[i], b.dx[i], N, mag);
    }
  EXPECT_EQ(bad, 0) << "dx elements outside the bound";
  bad = 0;
  for (std::int64_t n = 0; n < N; ++n) {
    double dbmag = 0;
    for (std::int64_t t = 0; t < T; ++t) dbmag += std::abs(dy[t * N + n]);
    bad += std::abs(a.db[n] - b.db[n]) > ovb::testing::fp32_two_orders_bound(T, dbmag);
    for (std::int64_t k = 0; k < K; ++k) {
      double mag = 0;
      for (std::int64_t t = 0; t < T; ++t) mag += std::abs(dy[t * N + n] * x[t * K + k]);
      const std::size_t i = static_cast<std::size_t>(n * K + k);
      bad += std::abs(a.dw[i] - b.dw[i]) > ovb::testing::fp32_two_orders_bound(T, mag);
    }
  }
  EXPECT_EQ(bad, 0) << "dw or bias-gradient elements outside the bound";
}

// The CUDA-core ("simt") attention, forced, so that it stays tested where cuDNN would run.
TEST_P(CudaVsHost, FlashAttentionForwardAndBackward) {
  auto simt = make_kernels(*cuda_, act(), nullptr, AttentionKind::simt);
  for (const auto [B, S, H, D] : {std::array<std::int64_t, 4>{2, 50, 3, 16},
                                  {1, 70, 2, 64},
                                  {1, 33, 1, 80},
                                  {1, 40, 2, 128}}) {
    ASSERT_EQ(simt->prepare_attention(B, S, H, H, D), "simt");
    compare_attention(*simt, B, S, H, D, tol(1e-4f, 2e-2f), tol(2e-4f, 3e-2f));
  }
}

// cuDNN's fused flash attention (bf16): the shapes gpt4d runs must be supported and agree with
// the host loops; fp32 falls back to simt under auto and is refused under --attention cudnn.
TEST_P(CudaVsHost, CudnnFusedAttention) {
  if (!cudnn_attention_built()) GTEST_SKIP() << "this build has no cuDNN (OVB_ENABLE_CUDNN)";
  if (!bf16()) {
    EXPECT_EQ(make_kernels(*cuda_, act())->prepare_attention(1, 128, 2, 2, 64), "simt");
    auto forced = make_kernels(*cuda_, act(), nullptr, AttentionKind::cudnn);
    EXPECT_THROW(forced->prepare_attention(1, 128, 2, 2, 64), UsageError);
    return;
  }
  auto cudnn = make_kernels(*cuda_, act(), nullptr, AttentionKind::cudnn);
  for (const auto [B, S, H, D] : {std::array<std::int64_t, 4>{2, 128, 2, 64},
                                  {1, 256, 2, 128},
                                  {1, 192, 4, 32},
                                  {1, 1024, 1, 128}}) {
    ASSERT_EQ(cudnn->prepare_attention(B, S, H, H, D), "cudnn");
    compare_attention(*cudnn, B, S, H, D, 2e-2f, 3e-2f);
  }
  EXPECT_NE(cudnn->description().find("cuDNN fused flash attention"), std::string::npos)
      << cudnn->description();
  // auto: cuDNN where it runs the shape; a length that is no multiple of 64 either runs on cuDNN
  // (and must then be right) or falls back to simt with the reason in the description.
  auto automatic = make_kernels(*cuda_, act());
  EXPECT_EQ(automatic->prepare_attention(2, 128, 2, 2, 64), "cudnn");
  const std::string odd = automatic->prepare_attention(1, 70, 2, 2, 64);
  EXPECT_TRUE(odd == "cudnn" || odd == "simt") << odd;
  compare_attention(*automatic, 1, 70, 2, 64, 2e-2f, 3e-2f);
}

TEST_P(CudaVsHost, VocabParallelCrossEntropy) {
  const std::int64_t T = 29, V = 1000, v0 = 1000;  // this rank's slice: [1000, 2000)
  const std::vector<float> logits = quantized(random_vec(T * V, 18, 3.0f));
  std::vector<std::int32_t> tgt(T);
  for (std::int64_t t = 0; t < T; ++t) tgt[t] = static_cast<std::int32_t>((t * 97) % 2500);
  // Two slices' stats: this one and a made-up second one, combined as after the all-gather.
  std::vector<float> parts(2 * 3 * T), lse(T), dl = logits;
  hk_->ce_partial(*hs_, logits.data(), tgt.data(), parts.data(), T, V, v0);
  for (std::int64_t t = 0; t < T; ++t) {
    parts[3 * T + t] = 1.5f;    // max
    parts[4 * T + t] = 300.0f;  // sum exp
    parts[5 * T + t] = tgt[t] < v0 ? 0.7f : 0.0f;
  }
  float loss = 0;
  hk_->ce_combine(*hs_, parts.data(), 2, lse.data(), &loss, T);
  hk_->ce_backward(*hs_, dl.data(), tgt.data(), lse.data(), 0.01f, T, V, v0);
  Buffer Lg = act_buf(logits), TG = int_buf(tgt), P = f32_buf(parts), LS = f32_buf(lse),
         LO = f32_buf(std::vector<float>{0.0f});
  ck_->ce_partial(*cs_, Lg.data(), TG.as<std::int32_t>(), P.as<float>(), T, V, v0);
  std::vector<float> dparts = f32_out(P, parts.size());
  expect_close(std::vector<float>(dparts.begin(), dparts.begin() + 3 * T),
               std::vector<float>(parts.begin(), parts.begin() + 3 * T), 1e-4f, "ce stats");
  ck_->ce_combine(*cs_, P.as<float>(), 2, LS.as<float>(), LO.as<float>(), T);
  expect_close(f32_out(LS, T), lse, 1e-5f, "ce log-sum-exp");
  EXPECT_NEAR(f32_out(LO, 1)[0], loss, 1e-4f * std::abs(loss));
  ck_->ce_backward(*cs_, Lg.data(), TG.as<std::int32_t>(), LS.as<float>(), 0.01f, T, V, v0);
  expect_close(act_out(Lg, T * V), dl, tol(1e-4f, 2e-2f), "ce dlogits", 1e-7f);
}

TEST_P(CudaVsHost, GradNormAndAdamW) {
  const std::int64_t n = 5000;
  std::vector<float> p = random_vec(n, 19), g = random_vec(n, 20), m(n, 0.1f), v(n, 0.2f), work(n);
  float ss = 0;
  hk_->sumsq(*hs_, g.data(), n, &ss);
  Buffer P = f32_buf(p), G = f32_buf(g), M = f32_buf(m), Vb = f32_buf(v), W = act_buf(work),
         SS = f32_buf(std::vector<float>{0.0f});
  ck_->sumsq(*cs_, G.as<float>(), n, SS.as<float>());
  const float dss = f32_out(SS, 1)[0];
  EXPECT_NEAR(dss, ss, 1e-5f * ss);
  AdamWArgs a;
  a.lr = 0.01f;
  a.weight_decay = 0.1f;
  a.clip = 1.0f;
  a.step = 3;
  hk_->adamw(*hs_, p.data(), g.data(), m.data(), v.data(), work.data(), n, a, &ss);
  ck_->adamw(*cs_, P.as<float>(), G.as<float>(), M.as<float>(), Vb.as<float>(), W.data(), n, a,
             SS.as<float>());
  expect_close(f32_out(P, n), p, 1e-5f, "adamw weights");
  expect_close(f32_out(M, n), m, 1e-5f, "adamw m");
  expect_close(f32_out(Vb, n), v, 1e-5f, "adamw v");
  expect_close(act_out(W, n), quantized(p), tol(1e-5f, 1e-2f), "adamw working copy");
  // A run that starts off a 16-byte boundary (as the runs of gpt4d's flat buffers may): the head
  // and tail elements take the scalar path, the rest the vector one.
  const std::int64_t o = 1, k = n - 4;
  float ss2 = 0;
  hk_->sumsq(*hs_, g.data() + o, k, &ss2);
  Buffer SS2 = f32_buf(std::vector<float>{0.0f});
  ck_->sumsq(*cs_, G.as<float>() + o, k, SS2.as<float>());
  EXPECT_NEAR(f32_out(SS2, 1)[0], ss2, 1e-5f * ss2);
  a.step = 4;
  hk_->adamw(*hs_, p.data() + o, g.data() + o, m.data() + o, v.data() + o, work.data() + o, k, a,
             &ss);
  ck_->adamw(*cs_, P.as<float>() + o, G.as<float>() + o, M.as<float>() + o, Vb.as<float>() + o,
             static_cast<char*>(W.data()) + o * size_of(act()), k, a, SS.as<float>());
  expect_close(f32_out(P, n), p, 1e-5f, "adamw weights, offset run");
  expect_close(f32_out(M, n), m, 1e-5f, "adamw m, offset run");
  expect_close(f32_out(Vb, n), v, 1e-5f, "adamw v, offset run");
  expect_close(act_out(W, n), quantized(p), tol(1e-5f, 1e-2f), "adamw working copy, offset run");
}

// ---- Llama: RMSNorm (with C_total != C, as under a feature split), SwiGLU, RoPE, GQA.
TEST_P(CudaVsHost, RmsNormForwardAndBackward) {
  for (const auto [T, C] : {std::array<std::int64_t, 2>{45, 96}, {300, 37}}) {
    const std::int64_t Ct = 2 * C;  // this rank holds half the features
    const std::vector<float> x = quantized(random_vec(T * C, 31, 2.0f)),
                             g = quantized(random_vec(C, 32)),
                             dy = quantized(random_vec(T * C, 33)),
                             dx0 = quantized(random_vec(T * C, 34));
    std::vector<float> st(T), mr(2 * T), out(T * C), sums(T), dx = dx0, dg(C, 0.0f);
    hk_->rms_partial(*hs_, x.data(), st.data(), T, C);
    for (float& v : st) v *= 2;  // as if the other half had the same values
    hk_->rms_forward(*hs_, x.data(), st.data(), g.data(), out.data(), mr.data(), T, C, Ct);
    hk_->rms_backward_partial(*hs_, dy.data(), x.data(), mr.data(), g.data(), sums.data(), T, C);
    hk_->rms_backward(*hs_, dy.data(), x.data(), mr.data(), g.data(), sums.data(), dx.data(),
                      dg.data(), T, C, Ct);
    Buffer X = act_buf(x), G = act_buf(g), DY = act_buf(dy), DX = act_buf(dx0),
           ST = f32_buf(std::vector<float>(T)), MR = f32_buf(std::vector<float>(2 * T, -1.0f)),
           O = act_buf(out), SU = f32_buf(std::vector<float>(T)),
           DG = f32_buf(std::vector<float>(C));
    ck_->rms_partial(*cs_, X.data(), ST.as<float>(), T, C);
    std::vector<float> dst = f32_out(ST, T);
    for (float& v : dst) v *= 2;
    expect_close(dst, st, 1e-5f, "rms stats");
    upload(ST, st.data(), st.size() * 4);
    ck_->rms_forward(*cs_, X.data(), ST.as<float>(), G.data(), O.data(), MR.as<float>(), T, C, Ct);
    expect_close(act_out(O, T * C), out, tol(1e-4f, 2e-2f), "rms forward");
    expect_close(f32_out(MR, 2 * T), mr, 1e-4f, "rms (0, rstd)", 1e-6f);
    ck_->rms_backward_partial(*cs_, DY.data(), X.data(), MR.as<float>(), G.data(), SU.as<float>(),
                              T, C);
    expect_close(f32_out(SU, T), sums, 1e-4f, "rms backward sums");
    upload(SU, sums.data(), sums.size() * 4);
    ck_->rms_backward(*cs_, DY.data(), X.data(), MR.as<float>(), G.data(), SU.as<float>(),
                      DX.data(), DG.as<float>(), T, C, Ct);
    expect_close(act_out(DX, T * C), dx, tol(1e-4f, 2e-2f), "rms dx");
    expect_close(f32_out(DG, C), dg, 1e-4f, "rms dgain");
    // The residual add fused into the statistics pass.
    std::vector<float> sum(T * C), st2(T);
    hk_->add_rms_partial(*hs_, x.data(), dy.data(), sum.data(), st2.data(), T, C);
    Buffer SUM = act_buf(std::vector<float>(T * C)), ST2 = f32_buf(std::vector<float>(T));
    ck_->add_rms_partial(*cs_, X.data(), DY.data(), SUM.data(), ST2.as<float>(), T, C);
    expect_close(act_out(SUM, T * C), quantized(sum), tol(1e-6f, 1e-2f), "rms residual add");
    expect_close(f32_out(ST2, T), st2, tol(1e-5f, 1e-2f), "residual add + rms stats");
  }
}

TEST_P(CudaVsHost, SwiGluForwardAndBackward) {
  const std::int64_t T = 37, F = 53;
  const std::vector<float> gu = quantized(random_vec(T * 2 * F, 41, 2.0f)),
                           dy = quantized(random_vec(T * F, 42));
  std::vector<float> y(T * F), dgu(T * 2 * F);
  hk_->swiglu_forward(*hs_, gu.data(), y.data(), T, F);
  hk_->swiglu_backward(*hs_, gu.data(), dy.data(), dgu.data(), T, F);
  Buffer GU = act_buf(gu), Y = act_buf(std::vector<float>(T * F)), DY = act_buf(dy),
         DGU = act_buf(std::vector<float>(T * 2 * F, 7.0f));  // overwritten, not accumulated
  ck_->swiglu_forward(*cs_, GU.data(), Y.data(), T, F);
  expect_close(act_out(Y, T * F), y, tol(1e-5f, 1e-2f), "swiglu forward");
  ck_->swiglu_backward(*cs_, GU.data(), DY.data(), DGU.data(), T, F);
  expect_close(act_out(DGU, T * 2 * F), dgu, tol(1e-5f, 1e-2f), "swiglu backward");
}

TEST_P(CudaVsHost, RotaryEmbeddingForwardAndBackward) {
  // 2 sequences of 40 tokens, 3 K/V groups of 2 query heads, head size 64 (angles up to 39 rad).
  const std::int64_t B = 2, S = 40, G = 3, r = 2, D = 64;
  const float theta = 10000.0f;
  const std::vector<float> qkv = quantized(random_vec(B * S * G * (r + 2) * D, 51));
  for (const bool backward : {false, true}) {
    std::vector<float> want = qkv;
    hk_->rope(*hs_, want.data(), B, S, G, r, D, theta, backward);
    Buffer X = act_buf(qkv);
    ck_->rope(*cs_, X.data(), B, S, G, r, D, theta, backward);
    expect_close(act_out(X, qkv.size()), want, tol(1e-4f, 2e-2f),
                 backward ? "rope backward" : "rope forward");
  }
}

// Grouped-query attention on the CUDA-core kernels (forced) and under auto (cuDNN in bf16 where
// it is built and runs the shape, else simt) against the host loops.
TEST_P(CudaVsHost, GroupedQueryAttention) {
  for (const auto [B, S, H, Hkv, D] :
       {std::array<std::int64_t, 5>{2, 50, 4, 2, 16}, {1, 70, 6, 2, 64}, {1, 40, 4, 1, 128}}) {
    for (const AttentionKind kind : {AttentionKind::automatic, AttentionKind::simt}) {
      auto k = make_kernels(*cuda_, act(), nullptr, kind);
      compare_gqa(*k, B, S, H, Hkv, D, tol(1e-4f, 2e-2f), tol(2e-4f, 3e-2f));
    }
  }
}

// cuDNN's fused flash attention with grouped-query attention (bf16) against the host loops, in
// each of its views of gpt4d's grouped qkv (cudnn_attention.hpp): K/V heads shared by all query
// heads (one run), groups as cuDNN's batch with one run per sequence (B > 1: the runs' offsets),
// multi-head attention beside. auto picks cuDNN for these shapes as for multi-head attention;
// what cuDNN cannot run is refused in one line under --attention cudnn and runs on simt under
// auto; fp32 is simt's.
TEST_P(CudaVsHost, CudnnGroupedQueryAttention) {
  if (!cudnn_attention_built()) GTEST_SKIP() << "this build has no cuDNN (OVB_ENABLE_CUDNN)";
  if (!bf16()) {
    EXPECT_EQ(make_kernels(*cuda_, act())->prepare_attention(1, 128, 4, 2, 64), "simt");
    auto forced = make_kernels(*cuda_, act(), nullptr, AttentionKind::cudnn);
    EXPECT_THROW(forced->prepare_attention(1, 128, 4, 2, 64), UsageError);
    return;
  }
  auto cudnn = make_kernels(*cuda_, act(), nullptr, AttentionKind::cudnn);
  for (const auto [B, S, H, Hkv, D] : {std::array<std::int64_t, 5>{1, 128, 4, 1, 64},
                                       {2, 128, 4, 1, 128},
                                       {2, 128, 8, 2, 64},
                                       {3, 192, 6, 3, 128},
                                       {2, 256, 32, 8, 128},  // llama3-8B's heads on one GPU
                                       {2, 128, 4, 4, 64}}) {
    ASSERT_EQ(cudnn->prepare_attention(B, S, H, Hkv, D), "cudnn");
    compare_gqa(*cudnn, B, S, H, Hkv, D, 2e-2f, 3e-2f);
  }
  EXPECT_NE(cudnn->description().find("cuDNN fused flash attention"), std::string::npos)
      << cudnn->description();
  auto automatic = make_kernels(*cuda_, act());
  EXPECT_EQ(automatic->prepare_attention(2, 128, 8, 2, 64), "cudnn");
  // A length that is no multiple of 64: cuDNN (and then right) or simt.
  const std::string odd = automatic->prepare_attention(2, 70, 6, 2, 64);
  EXPECT_TRUE(odd == "cudnn" || odd == "simt") << odd;
  compare_gqa(*automatic, 2, 70, 6, 2, 64, 2e-2f, 3e-2f);
  // Head size 60 is no multiple of 8, which cuDNN's attention needs: refused by name under
  // --attention cudnn, simt (and right) under auto.
  try {
    cudnn->prepare_attention(1, 64, 4, 2, 60);
    ADD_FAILURE() << "--attention cudnn accepted head size 60";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--attention cudnn: cuDNN cannot run attention with B 1, S 64, H 4, Hkv 2, "
                       "D 60"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_EQ(automatic->prepare_attention(1, 64, 4, 2, 60), "simt");
  compare_gqa(*automatic, 1, 64, 4, 2, 60, 2e-2f, 3e-2f);
  // Query heads that do not split into the K/V heads.
  EXPECT_THROW(cudnn->prepare_attention(1, 64, 4, 3, 64), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaVsHost, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& info) { return std::string(name_of(info.param)); });
