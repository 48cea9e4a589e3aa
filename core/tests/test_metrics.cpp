// Every metric formula against hand-computed values (docs/metrics.md).
#include <gtest/gtest.h>

#include <cmath>

#include "ovb/metrics.hpp"

namespace m = ovb::metrics;
using ovb::CollKind;

TEST(Metrics, CollectiveBytesFollowNcclTests) {
  // all-reduce: the buffer each rank holds; RS/AG: the total buffer.
  EXPECT_DOUBLE_EQ(m::collective_bytes(CollKind::all_reduce, 1000, 8, 2), 2000);
  EXPECT_DOUBLE_EQ(m::collective_bytes(CollKind::reduce_scatter, 1000, 8, 2), 16000);
  EXPECT_DOUBLE_EQ(m::collective_bytes(CollKind::all_gather, 250, 4, 4), 4000);
}

TEST(Metrics, BusFactors) {
  EXPECT_DOUBLE_EQ(m::bus_factor(CollKind::all_reduce, 8), 1.75);        // 2*7/8
  EXPECT_DOUBLE_EQ(m::bus_factor(CollKind::reduce_scatter, 8), 0.875);   // 7/8
  EXPECT_DOUBLE_EQ(m::bus_factor(CollKind::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(m::bus_factor(CollKind::all_reduce, 1), 0.0);
}

TEST(Metrics, AlgbwAndBusbw) {
  // 1 GiB all-reduce on 8 ranks in 5 ms: algbw = 1073741824/0.005/1e9 = 214.7483648 GB/s.
  EXPECT_NEAR(m::algbw_gbps(1073741824.0, 0.005), 214.7483648, 1e-9);
  EXPECT_NEAR(m::busbw_gbps(CollKind::all_reduce, 8, 1073741824.0, 0.005), 375.8096384, 1e-9);
  EXPECT_NEAR(m::busbw_gbps(CollKind::all_gather, 2, 1e9, 1.0), 0.5, 1e-12);
}

TEST(Metrics, GemmFlopAndTflops) {
  EXPECT_DOUBLE_EQ(m::gemm_flop(8192, 8192, 8192), 1099511627776.0);  // 2*8192^3
  // 2*8192^3 FLOP in 1.375 ms = 799.6448 TFLOP/s
  EXPECT_NEAR(m::tflops(m::gemm_flop(8192, 8192, 8192), 1.375e-3), 799.6448202, 1e-6);
}

TEST(Metrics, PeakTable) {
  EXPECT_EQ(m::peak_tflops("NVIDIA H100 80GB HBM3", "bf16"), 989.0);
  EXPECT_EQ(m::peak_tflops("NVIDIA H100 80GB HBM3", "fp8"), 1979.0);
  EXPECT_EQ(m::peak_tflops("NVIDIA H200", "bf16"), 989.0);
  EXPECT_EQ(m::peak_tflops("NVIDIA A100-SXM4-80GB", "bf16"), 312.0);
  EXPECT_EQ(m::peak_tflops("NVIDIA A100-SXM4-80GB", "fp8"), std::nullopt);
  EXPECT_EQ(m::peak_tflops("AMD Instinct MI250X", "bf16"), 191.5);
  EXPECT_EQ(m::peak_tflops("NVIDIA H100 PCIe", "bf16"), 756.0);
  EXPECT_EQ(m::peak_tflops("Intel Xeon", "bf16"), std::nullopt);
  EXPECT_DOUBLE_EQ(m::percent_of_peak(494.5, 989.0), 50.0);
}

TEST(Metrics, OverlapMetricsHandComputed) {
  // t_c = 10, t_m = 4, t_o = 11, t_c' = 10.5, t_m' = 5
  const auto r = m::overlap_metrics({10, 4, 11, 10.5, 5});
  EXPECT_DOUBLE_EQ(r.ideal, 10);
  EXPECT_DOUBLE_EQ(r.serial, 14);
  EXPECT_DOUBLE_EQ(r.speedup_vs_serial, 14.0 / 11.0);
  EXPECT_DOUBLE_EQ(r.overlap_efficiency, 0.75);                       // (14-11)/4
  EXPECT_DOUBLE_EQ(r.fraction_of_ideal, (14.0 / 11.0 - 1) / 0.4);     // (1.2727-1)/(1.4-1)
  EXPECT_NEAR(r.compute_slowdown, 0.05, 1e-15);
  EXPECT_NEAR(r.comm_slowdown, 0.25, 1e-15);
  EXPECT_DOUBLE_EQ(r.exposed_comm, 0.5);  // 11 - 10.5
}

TEST(Metrics, PipelineMetricsHandComputed) {
  // Four chunk GEMMs of 2.6 alone against the whole GEMM's 10: 0.4 lost to cutting it.
  EXPECT_NEAR(m::decomposition_loss(10.4, 10), 0.4, 1e-15);
  EXPECT_DOUBLE_EQ(m::decomposition_loss(10, 10), 0.0);
  // Unchunked GEMM 10 then all-reduce 4: serial 14, ideal 10. A pipeline of 12 gains 14/12 - 1
  // of the possible 14/10 - 1; one of 10 all of it; one of 14 nothing.
  EXPECT_DOUBLE_EQ(m::pipeline_fraction_of_ideal(10, 4, 12), (14.0 / 12.0 - 1) / 0.4);
  EXPECT_DOUBLE_EQ(m::pipeline_fraction_of_ideal(10, 4, 10), 1.0);
  EXPECT_DOUBLE_EQ(m::pipeline_fraction_of_ideal(10, 4, 14), 0.0);
  EXPECT_TRUE(std::isnan(m::pipeline_fraction_of_ideal(10, 0, 10)));
}

TEST(Metrics, OverlapExtremes) {
  const auto hidden = m::overlap_metrics({10, 4, 10, 10, 4});  // comm fully hidden
  EXPECT_DOUBLE_EQ(hidden.overlap_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(hidden.fraction_of_ideal, 1.0);
  const auto serial = m::overlap_metrics({10, 4, 14, 10, 4});  // no better than serial
  EXPECT_DOUBLE_EQ(serial.overlap_efficiency, 0.0);
  EXPECT_DOUBLE_EQ(serial.fraction_of_ideal, 0.0);
  const auto worse = m::overlap_metrics({10, 4, 16, 12, 6});
  EXPECT_DOUBLE_EQ(worse.overlap_efficiency, -0.5);
  EXPECT_TRUE(std::isnan(m::overlap_metrics({10, 0, 10, 10, 0}).fraction_of_ideal));
}

TEST(Metrics, NarayananFlopFormula) {
  // By hand for B=2, s=4, L=3, h=5, V=7: 96*2*4*3*25 * (1 + 4/30 + 7/240) = 57600 * 1.1625.
  EXPECT_DOUBLE_EQ(m::narayanan_flop(2, 4, 3, 5, 7), 66960.0);
  // It differs from this suite's hardware count only in the attention term (full s x s, not the
  // causal half) and the LM head (three passes, not four).
  // Attention: 16*B*s^2*L*h there, 8*B*s^2*L*h here.
  EXPECT_DOUBLE_EQ(m::narayanan_flop(2, 4, 3, 5, 0) - 16.0 * 2 * 16 * 3 * 5,
                   m::gpt_hardware_flop(m::gpt_model_flop(2, 4, 3, 5, 0), true) -
                       8.0 * 2 * 16 * 3 * 5);
}

TEST(Metrics, GptFlopFormula) {
  // The docs/megatron.md run: L=24, h=2048, s=2048, V=50304, B=4, 395.4 ms on 1 GPU -> 175.5 TFLOP/s.
  const double f = m::gpt_model_flop(4, 2048, 24, 2048, 50304);
  const double expect = 72.0 * 4 * 2048 * 24 * 2048.0 * 2048.0 *
                        (1 + 2048.0 / (12 * 2048) + 50304.0 / (12 * 24 * 2048));
  EXPECT_DOUBLE_EQ(f, expect);
  EXPECT_NEAR(f, 6.938520e13, 0.000001e13);
  EXPECT_NEAR(m::tflops_per_gpu(f, 0.3954, 1), 175.5, 0.1);
  EXPECT_DOUBLE_EQ(m::gpt_hardware_flop(f, true), f * 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(m::gpt_hardware_flop(f, false), f);
  // Selective recomputation repeats the forward attention core: of F's forward third
  // 24BsLh^2 (1 + s/(12h) + ...), the s/(12h) part, 2*B*s^2*L*h; by hand for B=2, s=4, L=3, h=5.
  EXPECT_DOUBLE_EQ(m::gpt_selective_recompute_flop(2, 4, 3, 5), 2.0 * 2 * 16 * 3 * 5);
  EXPECT_DOUBLE_EQ(m::gpt_selective_recompute_flop(2, 4, 3, 5),
                   m::gpt_model_flop(2, 4, 3, 5, 0) / 3 - 24.0 * 2 * 4 * 3 * 25);
  // The general form with GPT's 12h^2 block weights is the GPT formula.
  EXPECT_NEAR(m::transformer_model_flop(4, 2048, 24, 2048, 50304, 12.0 * 2048 * 2048), f,
              f * 1e-15);
  // Llama 3 8B, one 8192-token sequence, by hand: per block q,o 4096^2 each, k,v 4096*1024 each,
  // SwiGLU 3*4096*14336; the 4096 x 128256 head; attention core 6*s^2*L*h.
  const double block = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336;
  EXPECT_DOUBLE_EQ(m::transformer_model_flop(1, 8192, 32, 4096, 128256, block),
                   6.0 * 8192 * (32 * block + 4096.0 * 128256) + 6.0 * 8192 * 8192 * 32 * 4096);
  EXPECT_DOUBLE_EQ(m::tflops_per_gpu(8e15, 2.0, 4), 1000.0);
  EXPECT_DOUBLE_EQ(m::mfu(494.5, 989.0), 0.5);
  EXPECT_DOUBLE_EQ(m::tokens_per_s(4, 2048, 0.5), 16384.0);
}
