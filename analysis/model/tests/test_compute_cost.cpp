// Compute term: GEMM shapes per layer from the plan's geometry, throughput from peak x efficiency
// or the GEMM table (exact, interpolated, scaled below the table), attention FLOPs, memory-bound
// bytes, optimizer traffic, ranks sharing a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/gemm_chunks.hpp"

using namespace ovb;
using namespace ovb::model;

TEST(ComputeCost, GemmShapesOfEveryLayerAndPass) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();  // h 64, seq 16, vocab 128
  const GptPlanOptions o = test::plan_on("2x4x2x1", 4);
  const ComputeTerms ct = compute_terms(m, o, mc);
  const std::int64_t T = 4 / 2 * 16;  // batch / (Gdata*Gz) * seq
  EXPECT_EQ(ct.tokens, T);
  // qkv: h -> 3h normal: in over X (32), out over Y (48).
  const LinearCompute& qkv = ct.block.lin[0];
  EXPECT_EQ(qkv.fwd.m, T);
  EXPECT_EQ(qkv.fwd.n, 48);
  EXPECT_EQ(qkv.fwd.k, 32);
  EXPECT_EQ(qkv.dx.n, 32);
  EXPECT_EQ(qkv.dx.k, 48);
  EXPECT_EQ(qkv.dw.m, 48);
  EXPECT_EQ(qkv.dw.n, 32);
  EXPECT_EQ(qkv.dw.k, T);
  // mlp_down: 4h -> h transposed: in over Y (64), out over X (32).
  const LinearCompute& down = ct.block.lin[3];
  EXPECT_EQ(down.fwd.n, 32);
  EXPECT_EQ(down.fwd.k, 64);
  // lm_head: h -> V, normal: out over Y (32), in over X (32).
  EXPECT_EQ(ct.head.lm_head.fwd.n, 32);
  EXPECT_EQ(ct.head.lm_head.fwd.k, 32);
  // Time at peak 100 x efficiency 0.5 = 50 TFLOP/s = 5e7 FLOP/us.
  EXPECT_DOUBLE_EQ(qkv.fwd.flop, 2.0 * T * 48 * 32);
  EXPECT_DOUBLE_EQ(qkv.fwd.time_us, 2.0 * T * 48 * 32 / 5e7);
  EXPECT_EQ(qkv.fwd.source, GemmSource::peak_efficiency);
}

TEST(ComputeCost, GemmTableExactInterpolatedAndScaledBelow) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gemm_table"] = {{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"tflops", 40}, {"dtype", "bf16"}},
                     {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"tflops", 80}, {"dtype", "bf16"}},
                     {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"tflops", 5}, {"dtype", "fp32"}}};
  const Machine mc = machine_from_json(j, "t");
  GemmRate r = gemm_rate(mc, 4096, 4096, 4096, "bf16");
  EXPECT_EQ(r.source, GemmSource::table_exact);
  EXPECT_DOUBLE_EQ(r.tflops, 80);
  // 2048^3 is equally far from both bf16 points in log2 space: their mean.
  r = gemm_rate(mc, 2048, 2048, 2048, "bf16");
  EXPECT_EQ(r.source, GemmSource::table_interpolated);
  EXPECT_DOUBLE_EQ(r.tflops, 60);
  // Below the smallest GEMM the throughput falls with the FLOP count (constant time).
  r = gemm_rate(mc, 512, 512, 512, "bf16");
  const double w1 = 1.0 / 3, w2 = 1.0 / 27;  // inverse squared distances: 3*1^2, 3*3^2
  EXPECT_NEAR(r.tflops, (w1 * 40 + w2 * 80) / (w1 + w2) / 8, 1e-9);
  // The fp32 point is used for fp32 only (and 1024^3 is 64 times smaller than it).
  EXPECT_DOUBLE_EQ(gemm_rate(mc, 4096, 4096, 4096, "fp32").tflops, 5);
  EXPECT_DOUBLE_EQ(gemm_rate(mc, 1024, 1024, 1024, "fp32").tflops, 5.0 / 64);
}

// With SMs and tiles, a GEMM below the table's smallest takes the quantized rate (the table cannot
// say how the rate falls there; a chunked GEMM's pieces live there), by hand: peak 100 x
// efficiency 0.5 x waves. Above the smallest, the table as before.
TEST(ComputeCost, BelowTheTableAMachineWithTilesQuantizes) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["sms"] = 8;
  j["gpu"]["gemm_tiles"] = {{{"m", 128}, {"n", 128}}};
  j["gemm_table"] = {{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"tflops", 40}, {"dtype", "bf16"}},
                     {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"tflops", 80}, {"dtype", "bf16"}}};
  const Machine mc = machine_from_json(j, "t");
  // 256 x 384: 2 x 3 = 6 tiles on 8 SMs, one wave 6/8 full, no padding.
  GemmRate r = gemm_rate(mc, 256, 384, 1024, "bf16");
  EXPECT_EQ(r.source, GemmSource::quantized);
  EXPECT_DOUBLE_EQ(r.tflops, 100 * 0.5 * 6.0 / 8);
  // 200 x 128: 2 x 1 tiles (2/8 of a wave), padded to 256 x 128 (200/256 of the area).
  r = gemm_rate(mc, 200, 128, 4096, "bf16");
  EXPECT_EQ(r.source, GemmSource::quantized);
  EXPECT_DOUBLE_EQ(r.tflops, 100 * 0.5 * (2.0 / 8) * (200.0 / 256));
  EXPECT_EQ(gemm_rate(mc, 2048, 2048, 2048, "bf16").source, GemmSource::table_interpolated);
  EXPECT_DOUBLE_EQ(gemm_rate(mc, 2048, 2048, 2048, "bf16").tflops, 60);
  // The chunks of a GEMM (gemm_chunks.hpp): 4 pieces of 1024 x 256 x 1024 (8 x 2 tiles, 2 full
  // waves) at 50 TFLOP/s against the whole 1024^3 at the table's 40; no kernel overhead here.
  const ChunkedGemm c = chunked_gemm(mc, 1024, 1024, 1024, "bf16", 4, 'n');
  EXPECT_DOUBLE_EQ(c.chunk.tflops, 50);
  EXPECT_DOUBLE_EQ(c.whole.time_us, 2.0 * 1024 * 1024 * 1024 / 40e6);
  EXPECT_DOUBLE_EQ(c.chunks_us, 4 * (2.0 * 1024 * 256 * 1024 / 50e6));
  EXPECT_DOUBLE_EQ(c.loss_us, c.chunks_us - c.whole.time_us);
  EXPECT_THROW(chunked_gemm(mc, 1024, 1024, 1024, "bf16", 3, 'm'), UsageError);
  EXPECT_THROW(chunked_gemm(mc, 1024, 1024, 1024, "bf16", 2, 'k'), UsageError);
}

namespace {

// A device of peak 100 TFLOP/s, 8 SMs, 128 x 128 tiles and gemm_efficiency 0.9, with a GEMM table
// of two points: 1024^3 at 40 and 4096^3 at 80 TFLOP/s.
nlohmann::json two_point_table_machine() {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["sms"] = 8;
  j["gpu"]["gemm_tiles"] = {{{"m", 128}, {"n", 128}}};
  j["gpu"]["gemm_efficiency"] = 0.9;
  j["gemm_table"] = {{{"m", 1024}, {"n", 1024}, {"k", 1024}, {"tflops", 40}, {"dtype", "bf16"}},
                     {{"m", 4096}, {"n", 4096}, {"k", 4096}, {"tflops", 80}, {"dtype", "bf16"}}};
  return j;
}

}  // namespace

// gemm_max_efficiency caps every rate (table, interpolated, quantized, peak x efficiency) at
// peak x it, by hand: peak 100 x 0.7 = 70 TFLOP/s; rates below it are untouched; without it no
// cap; a value above 1 is an error naming the key.
TEST(ComputeCost, GemmMaxEfficiencyCapsEveryRate) {
  nlohmann::json j = two_point_table_machine();
  const Machine uncapped = machine_from_json(j, "t");
  EXPECT_DOUBLE_EQ(gemm_rate(uncapped, 4096, 4096, 4096, "bf16").tflops, 80);
  j["gpu"]["gemm_max_efficiency"] = 0.7;
  const Machine mc = machine_from_json(j, "t");
  GemmRate r = gemm_rate(mc, 4096, 4096, 4096, "bf16");  // table 80
  EXPECT_EQ(r.source, GemmSource::ceiling);
  EXPECT_DOUBLE_EQ(r.tflops, 70);
  r = gemm_rate(mc, 1024, 1024, 1024, "bf16");  // table 40: below the ceiling
  EXPECT_EQ(r.source, GemmSource::table_exact);
  EXPECT_DOUBLE_EQ(r.tflops, 40);
  r = gemm_rate(mc, 2048, 2048, 2048, "bf16");  // interpolated (40 + 80) / 2 = 60
  EXPECT_EQ(r.source, GemmSource::table_interpolated);
  EXPECT_DOUBLE_EQ(r.tflops, 60);
  // Below the table, 256 x 256: 4 tiles of 8 SMs, 100 x 0.9 x 0.5 = 45; 1024 x 128 (8 tiles, a
  // full wave) would be 90: capped.
  EXPECT_DOUBLE_EQ(gemm_rate(mc, 256, 256, 1024, "bf16").tflops, 45);
  r = gemm_rate(mc, 1024, 128, 512, "bf16");
  EXPECT_EQ(r.source, GemmSource::ceiling);
  EXPECT_DOUBLE_EQ(r.tflops, 70);
  // A GEMM term takes the capped rate; the machine writes the field back out.
  EXPECT_DOUBLE_EQ(gemm_term(mc, 4096, 4096, 4096, "bf16").time_us,
                   2.0 * 4096 * 4096 * 4096 / 70e6 + mc.kernel_overhead_us);
  EXPECT_DOUBLE_EQ(machine_from_json(machine_to_json(mc), "t").gemm_max_efficiency, 0.7);
  // Without a ceiling the peak is never asked for: a table on a device of unknown peak works.
  nlohmann::json unknown = test::synthetic_machine_json();
  unknown["gpu"].erase("peak_tflops");
  unknown["gpu"]["name"] = "a device without a peak";
  unknown["gemm_table"] = j["gemm_table"];
  EXPECT_DOUBLE_EQ(gemm_rate(machine_from_json(unknown, "t"), 4096, 4096, 4096, "bf16").tflops, 80);
  j["gpu"]["gemm_max_efficiency"] = 1.2;
  try {
    machine_from_json(j, "t");
    ADD_FAILURE() << "gemm_max_efficiency 1.2 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_max_efficiency"), std::string::npos) << e.what();
  }
}

// gemm_training_factor multiplies every rate below the ceiling (table, interpolated, quantized)
// before the cap, by hand: table 40 and 80, interpolated 60, quantized 100 x 0.9 x 0.5 = 45, each
// x 0.8 = 32, 64, 48, 36; with the ceiling at 70, 80 x 0.8 = 64 runs below it and 1024 x 128's
// 90 x 0.8 = 72 is capped. The field writes back out; 0 or above 1 is an error naming the key.
TEST(ComputeCost, GemmTrainingFactorScalesEveryRateBelowTheCeiling) {
  nlohmann::json j = two_point_table_machine();
  j["gpu"]["gemm_max_efficiency"] = 0.7;
  j["gpu"]["gemm_training_factor"] = 0.8;
  const Machine mc = machine_from_json(j, "t");
  struct Expected {
    std::int64_t m, n, k;
    GemmSource source;
    double tflops;
  };
  for (const Expected& e : {Expected{4096, 4096, 4096, GemmSource::table_exact, 64},
                            Expected{1024, 1024, 1024, GemmSource::table_exact, 32},
                            Expected{2048, 2048, 2048, GemmSource::table_interpolated, 48},
                            Expected{256, 256, 1024, GemmSource::quantized, 36},
                            Expected{1024, 128, 512, GemmSource::ceiling, 70}}) {
    const GemmRate r = gemm_rate(mc, e.m, e.n, e.k, "bf16");
    EXPECT_EQ(r.source, e.source) << e.m << "x" << e.n << "x" << e.k;
    EXPECT_DOUBLE_EQ(r.tflops, e.tflops) << e.m << "x" << e.n << "x" << e.k;
  }
  EXPECT_DOUBLE_EQ(machine_from_json(machine_to_json(mc), "t").gemm_training_factor, 0.8);
  // Absent: 1, and not written.
  j["gpu"].erase("gemm_training_factor");
  const Machine plain = machine_from_json(j, "t");
  EXPECT_DOUBLE_EQ(plain.gemm_training_factor, 1);
  EXPECT_FALSE(machine_to_json(plain)["gpu"].contains("gemm_training_factor"));
  for (const double bad : {0.0, 1.1}) {
    j["gpu"]["gemm_training_factor"] = bad;
    try {
      machine_from_json(j, "t");
      ADD_FAILURE() << "gemm_training_factor " << bad << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("gemm_training_factor"), std::string::npos) << e.what();
    }
  }
}

TEST(ComputeCost, AttentionMemoryBoundAndOptimizerByHand) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["kernel_overhead_us"] = 1.5;
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_gpt();
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const ComputeTerms ct = compute_terms(m, o, mc);
  const double T = 4 * 16, hx = 32, hy = 32, a = 2;
  // Layer norm: read + write [T, h/Gx]; 1000 GB/s = 1e6 bytes/us.
  EXPECT_DOUBLE_EQ(ct.block.ln1.bytes, 2 * T * hx * a);
  EXPECT_DOUBLE_EQ(ct.block.ln1.time_us, 2 * T * hx * a / 1e6 + 1.5);
  EXPECT_DOUBLE_EQ(ct.block.ln1.bwd_us, 4 * T * hx * a / 1e6 + 3);
  // Attention I/O (flash): q, k, v read, o written.
  EXPECT_DOUBLE_EQ(ct.block.attn_io.bytes, 4 * T * hy * a);
  // Attention FLOP: 4 sequences x 2 local heads x (QK^T + AV of 2*16*16*16 each) / 2 (causal).
  const double one = 2.0 * 16 * 16 * 16;
  EXPECT_DOUBLE_EQ(ct.block.attn_flop, 4 * 2 * one);
  EXPECT_DOUBLE_EQ(ct.block.attn_fwd_us, 4 * 2 * one / 5e7 + 1.5);
  // Flash backward: the four gradient products and the recomputed Q K^T, 2.5 x the forward's.
  EXPECT_DOUBLE_EQ(ct.block.attn_bwd_us, 2.5 * 4 * 2 * one / 5e7 + 1.5);
  Machine unfused = mc;
  unfused.flash_attention = false;  // the four gradient products only
  EXPECT_DOUBLE_EQ(compute_terms(m, o, unfused).block.attn_bwd_us, 2 * 4 * 2 * one / 5e7 + 1.5);
  // The unfused products (batched GEMMs) at their own efficiency where the machine gives one:
  // half the rate takes twice the time; the fused kernel keeps attention_efficiency.
  unfused.unfused_attention_efficiency = unfused.attention_efficiency / 2;
  EXPECT_DOUBLE_EQ(compute_terms(m, o, unfused).block.attn_fwd_us, 2 * 4 * 2 * one / 5e7 + 1.5);
  Machine fused = mc;
  fused.unfused_attention_efficiency = mc.attention_efficiency / 2;
  EXPECT_DOUBLE_EQ(compute_terms(m, o, fused).block.attn_fwd_us, ct.block.attn_fwd_us);
  // MLP-up epilogue: bias + GELU, 3 passes over [T, 4h/Gy]; mlp_down: bias + residual.
  EXPECT_DOUBLE_EQ(ct.block.lin[2].epilogue.bytes, 3 * T * 128 * a);
  EXPECT_DOUBLE_EQ(ct.block.lin[3].epilogue.bytes, 2 * T * 32 * a + 3 * T * hx * a);
  // Optimizer: every parameter element on the rank, 32 bytes + the bf16 working copy.
  const double params = gpt_memory(m, o).optimizer / 8;
  EXPECT_DOUBLE_EQ(ct.optimizer.params, params);
  EXPECT_DOUBLE_EQ(ct.optimizer.bytes, params * 34);
  // The total adds up the parts.
  EXPECT_DOUBLE_EQ(ct.total_us(m.layers, false), 4 * (ct.block.fwd_us + ct.block.bwd_us) +
                                                     ct.head.fwd_us + ct.head.bwd_us +
                                                     ct.optimizer.time_us);
  // Each total is a sum of fewer than 64 positive doubles, so it rounds to within gamma_64 of its
  // value (Higham, 2nd ed., (3.4); u = 2^-53): the difference of the two is exact to 2 gamma_64
  // of the larger.
  const double gamma64 = 64 * std::ldexp(1.0, -53) / (1 - 64 * std::ldexp(1.0, -53));
  EXPECT_NEAR(ct.total_us(m.layers, true) - ct.total_us(m.layers, false), 4 * ct.block.fwd_us,
              2 * gamma64 * ct.total_us(m.layers, true));
}

TEST(ComputeCost, RanksSharingADeviceShareItsThroughput) {
  nlohmann::json j = test::synthetic_machine_json();
  const Machine one = machine_from_json(j, "t");
  j["ranks_per_device"] = 4;
  const Machine four = machine_from_json(j, "t");
  const GptShape m = test::small_gpt();
  const GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  const ComputeTerms a = compute_terms(m, o, one), b = compute_terms(m, o, four);
  EXPECT_DOUBLE_EQ(b.block.lin[0].fwd.time_us, 4 * a.block.lin[0].fwd.time_us);
  EXPECT_DOUBLE_EQ(b.block.ln1.time_us, 4 * a.block.ln1.time_us);
  EXPECT_DOUBLE_EQ(b.total_us(4, false), 4 * a.total_us(4, false));
}

TEST(ComputeCost, ScoresGoThroughMemoryWithoutFlashAttention) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["flash_attention"] = false;
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_gpt();
  const ComputeTerms ct = compute_terms(m, test::plan_on("1x1x1x1", 2), mc);
  const double T = 32, a = 4;
  EXPECT_DOUBLE_EQ(ct.block.attn_io.bytes, 4 * T * 64 * a + 4 * 2 * 4 * 16.0 * 16 * a);
}

TEST(ComputeCost, LlamaCostsSwiglusThreeGemmsAndGqasSmallerKv) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["kernel_overhead_us"] = 0;
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_llama();  // h 64, 4 heads (d 16), seq 16, vocab 128
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const ComputeTerms ct = compute_terms(m, o, mc);
  const double T = 4 * 16, hx = 32, hy = 32, kvy = 16, a = 2;
  // QKV: q of 2 local heads (32) + k and v of one local K/V head (16 each) = 64 rows over Y.
  EXPECT_EQ(ct.block.lin[0].fwd.n, 64);
  EXPECT_EQ(ct.block.lin[0].fwd.k, 32);
  // The SwiGLU's three GEMMs: gate and up in one [T, 2*176/Gy] GEMM, down from 176/Gy.
  EXPECT_EQ(ct.block.lin[2].fwd.n, 176);
  EXPECT_EQ(ct.block.lin[3].fwd.k, 88);
  const double flop = 2 * T * (64 * 32 + 32 * 32 + 176 * 32 + 32 * 88);
  double sum = 0;
  for (const LinearCompute& c : ct.block.lin) sum += c.fwd.flop;
  EXPECT_DOUBLE_EQ(sum, flop);
  // Epilogues: RoPE reads and writes q and k; SwiGLU reads gate|up and writes half; no biases.
  EXPECT_DOUBLE_EQ(ct.block.lin[0].epilogue.bytes, 2 * T * (hy + kvy) * a);
  EXPECT_DOUBLE_EQ(ct.block.lin[1].epilogue.bytes, 3 * T * hx * a);
  EXPECT_DOUBLE_EQ(ct.block.lin[2].epilogue.bytes, 1.5 * T * 176 * a);
  // Attention reads q and the (fewer) k, v and writes o; its FLOP are those of 4 query heads.
  EXPECT_DOUBLE_EQ(ct.block.attn_io.bytes, 2 * T * hy * a + 2 * T * kvy * a);
  EXPECT_DOUBLE_EQ(ct.block.attn_flop, 4 * 2 * 2.0 * 16 * 16 * 16);
  // Token embedding only: one read, one write.
  EXPECT_DOUBLE_EQ(ct.head.embed.bytes, 2 * T * hx * a);
}

// GEMM wave and tile quantization against counts by hand: 4 SMs, tiles 128x128 and 256x64.
TEST(ComputeCost, WaveAndTileQuantizationByHand) {
  nlohmann::json j = test::synthetic_machine_json();
  Machine mc = machine_from_json(j, "t");
  EXPECT_DOUBLE_EQ(wave_efficiency(mc, 300, 300), 1);  // no SMs or tiles: no quantization
  j["gpu"]["sms"] = 4;
  j["gpu"]["gemm_tiles"] = nlohmann::json::array({{{"m", 128}, {"n", 128}}, {{"m", 256}, {"n", 64}}});
  mc = machine_from_json(j, "t");
  // 512 x 256: 128x128 gives 8 tiles = 2 full waves; exact.
  EXPECT_DOUBLE_EQ(wave_efficiency(mc, 512, 256), 1);
  // 640 x 128: 128x128 -> 5 tiles on 4 SMs = 1.25 of 2 waves; 256x64 -> 3 x 2 = 6 tiles
  // (1.5 of 2 waves) over a padded 768 x 128 area (640/768): 0.625 vs 0.75 x 0.8333 = 0.625.
  EXPECT_DOUBLE_EQ(wave_efficiency(mc, 640, 128), 0.625);
  // 100 x 100: one 128x128 tile (1/4 wave, area 10000/16384) or one 256x64 x 2 (2/4, area
  // 10000/32768): max(0.25 x 0.6104, 0.5 x 0.3052) = 0.152587890625.
  EXPECT_DOUBLE_EQ(wave_efficiency(mc, 100, 100), 0.25 * 10000 / 16384);
  // The rate without a table: peak x gemm_efficiency x the quantization.
  const GemmRate r = gemm_rate(mc, 640, 128, 1024, "bf16");
  EXPECT_DOUBLE_EQ(r.tflops, 100 * 0.5 * 0.625);
  EXPECT_EQ(r.source, GemmSource::quantized);
  // A round trip keeps SMs and tiles.
  const Machine back = machine_from_json(machine_to_json(mc), "t");
  EXPECT_EQ(back.sms, 4);
  ASSERT_EQ(back.gemm_tiles.size(), 2u);
  EXPECT_EQ(back.gemm_tiles[1][0], 256);
  EXPECT_EQ(back.gemm_tiles[1][1], 64);
}

// Each memory-bound piece is timed at its kernel class's measured efficiency: with layernorm at
// 0.5, bias_gelu at 0.25 and adamw at 0.8 (the rest at memory_efficiency 1), the layer norms take
// 2x, the MLP-up epilogue 4x, the optimizer 1.25x, and the other pieces are unchanged.
TEST(ComputeCost, MemoryBoundPiecesTakeTheirClasssEfficiency) {
  nlohmann::json j = test::synthetic_machine_json();
  const Machine base = machine_from_json(j, "t");
  j["gpu"]["memory_efficiency_by_class"] = {{"layernorm", 0.5}, {"bias_gelu", 0.25}, {"adamw", 0.8}};
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_gpt();
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const ComputeTerms a = compute_terms(m, o, base), b = compute_terms(m, o, mc);
  EXPECT_DOUBLE_EQ(b.block.ln1.time_us, 2 * a.block.ln1.time_us);  // no kernel overhead here
  EXPECT_DOUBLE_EQ(b.head.ln_f.bwd_us, 2 * a.head.ln_f.bwd_us);
  EXPECT_DOUBLE_EQ(b.block.lin[2].epilogue.time_us, 4 * a.block.lin[2].epilogue.time_us);
  EXPECT_DOUBLE_EQ(b.optimizer.time_us, 1.25 * a.optimizer.time_us);
  EXPECT_DOUBLE_EQ(b.block.lin[0].epilogue.time_us, a.block.lin[0].epilogue.time_us);
  EXPECT_DOUBLE_EQ(b.block.attn_io.time_us, a.block.attn_io.time_us);
  EXPECT_DOUBLE_EQ(b.head.ce.time_us, a.head.ce.time_us);
}

// GPT's MLP-up epilogue backward: GELU's gradient (read the pre-activation and dY, write dX: the
// forward's 3 passes, one tanh per element) at the bias_gelu rate plus the bias gradient (one
// read of dY) at the residual rate; not twice the forward. bias_gelu at 0.25 of 1000 GB/s
// (2.5e5 bytes/us), residual at 1 (1e6 bytes/us), no kernel overhead.
TEST(ComputeCost, GeluBackwardIsOneTanhPerElementPlusTheBiasGradient) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["memory_efficiency_by_class"] = {{"bias_gelu", 0.25}};
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_gpt();
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const MemTerm e = compute_terms(m, o, mc).block.lin[2].epilogue;
  const double out = 4 * 16 * 128 * 2.0;  // T x 4h/Gy x a
  EXPECT_DOUBLE_EQ(e.time_us, 3 * out / 2.5e5);
  EXPECT_DOUBLE_EQ(e.bwd_us, 3 * out / 2.5e5 + out / 1e6);
  EXPECT_DOUBLE_EQ(gelu_backward_us(mc, out), e.bwd_us);
}

// gpt4d's CUDA linears (gpu.fused_epilogues, linear.cpp): the bias inside every GEMM; GELU inside
// MLP-up's GEMM where its input dimension (X) is not split, writing the pre-activation (one pass),
// else its own pass after the all-reduce (read, write); backward the bias gradient (one read of
// dY), GELU's backward inside MLP-down's dX GEMM (a read of the pre-activation) where that dX
// (its output dimension, X) is not split, else its own pass; residual adds as unfused. 1000 GB/s
// (1e6 bytes/us), efficiency 1 for every class, no kernel overhead; small GPT h 64, 4 x 16 tokens.
TEST(ComputeCost, FusedEpiloguesAsGpt4dRunsThem) {
  const Machine mc = machine_from_json(test::synthetic_machine_json(), "t");
  const GptShape m = test::small_gpt();
  const double T = 4 * 16, a = 2, bw = 1e6;
  for (const char* grid : {"1x2x1x1", "2x2x1x1"}) {
    GptPlanOptions o = test::plan_on(grid, 4);
    o.act_dtype = DType::bf16;
    const int gx = grid[0] - '0';
    const double hx = 64.0 / gx;
    const BlockCompute f = compute_terms(m, o, mc, true).block;
    const BlockCompute u = compute_terms(m, o, mc, false).block;
    const double qkv = T * 96 * a, proj = T * hx * a, up = T * 128 * a, down = T * hx * a;
    const double residual = 3 * T * hx * a;
    EXPECT_DOUBLE_EQ(f.lin[0].epilogue.time_us, 0) << grid;
    EXPECT_DOUBLE_EQ(f.lin[0].epilogue.bwd_us, qkv / bw) << grid;
    EXPECT_DOUBLE_EQ(f.lin[1].epilogue.time_us, residual / bw) << grid;
    EXPECT_DOUBLE_EQ(f.lin[1].epilogue.bwd_us, proj / bw + 2 * residual / bw) << grid;
    EXPECT_DOUBLE_EQ(f.lin[3].epilogue.bwd_us, down / bw + 2 * residual / bw) << grid;
    if (gx == 1) {
      EXPECT_DOUBLE_EQ(f.lin[2].epilogue.time_us, up / bw);
      EXPECT_DOUBLE_EQ(f.lin[2].epilogue.bwd_us, 2 * up / bw);
    } else {
      EXPECT_DOUBLE_EQ(f.lin[2].epilogue.time_us, 2 * up / bw);
      EXPECT_DOUBLE_EQ(f.lin[2].epilogue.bwd_us, gelu_backward_us(mc, up));
    }
    // The GEMMs, norms and attention are the same; only the epilogues differ, and cost less.
    EXPECT_DOUBLE_EQ(f.attn_fwd_us, u.attn_fwd_us) << grid;
    EXPECT_DOUBLE_EQ(f.lin[2].fwd.time_us, u.lin[2].fwd.time_us) << grid;
    EXPECT_LT(f.fwd_us + f.bwd_us, u.fwd_us + u.bwd_us) << grid;
  }
  // The machine's setting is the three-argument form's; Llama has no bias and no GELU to fuse.
  Machine fused = mc;
  fused.fused_epilogues = true;
  const GptPlanOptions o = test::plan_on("1x2x1x1", 4);
  EXPECT_DOUBLE_EQ(compute_terms(m, o, fused).block.bwd_us,
                   compute_terms(m, o, mc, true).block.bwd_us);
  const GptShape llama = test::small_llama();
  EXPECT_DOUBLE_EQ(compute_terms(llama, o, fused).block.fwd_us + compute_terms(llama, o, fused).block.bwd_us,
                   compute_terms(llama, o, mc).block.fwd_us + compute_terms(llama, o, mc).block.bwd_us);
}

// Llama's MLP-up epilogue (the SwiGLU: read gate|up, write half) is timed at the swiglu class's
// efficiency, not at bias_gelu's (a tanh), and its backward at twice the forward; GPT's keeps
// bias_gelu. swiglu at 0.5 and bias_gelu at 0.25 of 1000 GB/s (1e6 bytes/us), no overhead.
TEST(ComputeCost, SwigluTakesItsOwnClasssEfficiency) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["memory_efficiency_by_class"] = {{"swiglu", 0.5}, {"bias_gelu", 0.25}};
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_llama();  // h 64, 4 heads (d 16), seq 16, vocab 128
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const MemTerm e = compute_terms(m, o, mc).block.lin[2].epilogue;
  const double bytes = 1.5 * (4 * 16) * 176 * 2.0;  // 1.5 T (2 ffn / Gy) a
  EXPECT_DOUBLE_EQ(e.bytes, bytes);
  EXPECT_DOUBLE_EQ(e.time_us, bytes / 5e5);
  EXPECT_DOUBLE_EQ(e.bwd_us, 2 * bytes / 5e5);
  const MemTerm g = compute_terms(test::small_gpt(), o, mc).block.lin[2].epilogue;
  EXPECT_DOUBLE_EQ(g.time_us, g.bytes / 2.5e5);  // GPT: bias + GELU at bias_gelu's rate
}

// Llama's QKV epilogue (RoPE on q and the local K heads, read and written) is timed at the rope
// class's efficiency, and its backward (dq, dk turned back) at one pass, not two. rope at 0.125
// of 1000 GB/s (1.25e5 bytes/us), residual at 1, no overhead.
TEST(ComputeCost, RopeTakesItsOwnClassAndOnePassBackward) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["memory_efficiency_by_class"] = {{"rope", 0.125}};
  const Machine mc = machine_from_json(j, "t");
  const GptShape m = test::small_llama();  // h 64, 4 heads (d 16), seq 16, vocab 128
  GptPlanOptions o = test::plan_on("2x2x1x1", 4);
  o.act_dtype = DType::bf16;
  const MemTerm e = compute_terms(m, o, mc).block.lin[0].epilogue;
  const double bytes = 2 * (4 * 16) * (32 + 16) * 2.0;  // 2 T (hy + kv d / Gy) a
  EXPECT_DOUBLE_EQ(e.bytes, bytes);
  EXPECT_DOUBLE_EQ(e.time_us, bytes / 1.25e5);
  EXPECT_DOUBLE_EQ(e.bwd_us, e.time_us);
  // GPT's QKV epilogue (the bias) stays a plain stream at the residual rate, backward 2 x.
  const MemTerm g = compute_terms(test::small_gpt(), o, mc).block.lin[0].epilogue;
  EXPECT_DOUBLE_EQ(g.time_us, g.bytes / 1e6);
  EXPECT_DOUBLE_EQ(g.bwd_us, 2 * g.time_us);
}
