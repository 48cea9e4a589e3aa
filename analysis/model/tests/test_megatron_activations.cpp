// Megatron-LM activation memory of a Llama layer against byte counts worked out by hand, tensor by
// tensor (a small GQA shape; Llama 3 405B as published), the GPT formula left as it was, and the
// Megatron search on Llama 3 405B at 8,192 GPUs with each recompute mode.
#include <gtest/gtest.h>

#include "ovb/model/machine.hpp"
#include "ovb/model/megatron.hpp"
#include "ovb/model/megatron_activations.hpp"
#include "ovb/model/megatron_search.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

// s 16, micro-batch 2, h 64, 4 heads of 16, 2 K/V heads, ffn 96, tp 2.
LayerActivationShape small_llama_layer() {
  LayerActivationShape x;
  x.s = 16;
  x.b = 2;
  x.h = 64;
  x.ffn = 96;
  x.heads = 4;
  x.kv_heads = 2;
  x.t = 2;
  return x;
}

GptShape small_llama_model() {
  GptShape m;
  m.arch = Arch::llama;
  m.layers = 4;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 2;
  m.ffn_hidden = 96;
  m.seq = 16;
  m.vocab = 128;
  return m;
}

}  // namespace

TEST(MegatronActivations, LlamaLayerTensorByTensorByHand) {
  LayerActivationShape x = small_llama_layer();
  // 32 tokens, 16 per GPU under SP; per GPU 2 query heads, 1 K/V head, 48 ffn columns.
  //   RMSNorm 1 input [16 x 64] bf16 2048, 1/rms [16] fp32 64, QKV input [16 x 64] 2048
  //   Q [32 x 2 x 16] bf16 2048, K [32 x 1 x 16] 1024, V 1024, O [32 x 32] 2048,
  //   log-sum-exp [32 x 2] fp32 256
  //   RMSNorm 2 input 2048, 1/rms 64, gate|up input 2048
  //   gate|up output [32 x 96] bf16 6144, SwiGLU output [32 x 48] 3072
  const double none_sp =
      2048 + 64 + 2048 + 2048 + 1024 + 1024 + 2048 + 256 + 2048 + 64 + 2048 + 6144 + 3072;
  EXPECT_DOUBLE_EQ(none_sp, 23936);
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::none), none_sp);
  // Selective (the core attention checkpointed): no log-sum-exp (256); the checkpoint keeps V as
  // a view of the QKV output [32 x (2 + 1 + 1) x 16] bf16 4096, in place of V's copy (1024).
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::selective),
                   none_sp - 256 - 1024 + 4096);
  // Full: the layer's input, [16 x 64] bf16.
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::full), 2048);

  // Without SP the two norms' inputs, 1/rms and outputs cover all 32 tokens: 2 (4096 + 128 +
  // 4096) instead of 2 (2048 + 64 + 2048).
  x.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::none), none_sp + 8320);
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::selective),
                   none_sp + 8320 - 256 - 1024 + 4096);
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::full), 4096);

  // Without GQA (4 K/V heads): K and V [32 x 2 x 16] bf16 2048 each.
  x = small_llama_layer();
  x.kv_heads = 4;
  EXPECT_DOUBLE_EQ(llama_layer_activation_bytes(x, Recompute::none), none_sp + 2 * 1024);
}

TEST(MegatronActivations, TheMegatronMemoryUsesTheArchitecturesFormula) {
  MegatronConfig c;
  c.tp = 2;
  c.pp = 2;
  c.dp = 2;
  c.micro_batch = 2;
  c.batch = 16;
  c.act_dtype = DType::bf16;
  GptShape m = small_llama_model();
  MegatronMemory mem = megatron_memory(m, c);
  EXPECT_DOUBLE_EQ(mem.activation_per_layer, 23936);  // the hand count above
  EXPECT_DOUBLE_EQ(mem.activations, 4 * 23936.0);     // 2 micro-batches x 2 layers in flight
  c.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 2048);
  // The same dimensions as a GPT keep Korthikanti's formula with unfused attention:
  // sbh (34 + 5as/h)/t = 2048 * 39 / 2.
  m.arch = Arch::gpt;
  m.kv_heads = 0;
  m.ffn_hidden = 0;
  c.recompute = Recompute::none;
  EXPECT_DOUBLE_EQ(megatron_memory(m, c, false).activation_per_layer, 39936);
  EXPECT_DOUBLE_EQ(
      gpt_layer_activation_bytes(layer_activation_shape(m, c, false), Recompute::none), 39936);
  // Fused attention keeps no s x s tensors, only its fp32 log-sum-exp per head and token:
  // 34 sbh / t + 4 a s b / t = 34 * 2048 / 2 + 4 * 4 * 16 * 2 / 2 = 34816 + 256.
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 34816 + 256);
}

// Korthikanti et al. 2022 (arXiv 2205.05198), Figure 1: activation memory per GPU of the four
// models of its Table 3 (tp 8; pp 1, 8, 35, 64; micro-batch 4, 1, 1, 1; 175B and 530B with 3
// model chunks per stage), without recomputation on tensor parallelism alone ("none") and with
// sequence parallelism and selective recomputation ("seqsel"), in GiB as transcribed in
// Calculon's validation (calculon/llm/validation.py, seqsel_fig1). The paper's software had no
// fused attention. The model must come within 10 % of each.
TEST(MegatronActivations, KorthikantiFigure1WithinTenPercent) {
  struct Row {
    const char* name;
    std::int64_t layers, hidden, heads;
    int pp, micro_batch, v;
    std::int64_t batch;
    double none_gib, seqsel_gib;
  };
  const Row rows[] = {{"22B", 48, 6144, 64, 1, 4, 1, 4, 59.25, 9.5625},
                      {"175B", 96, 12288, 96, 8, 1, 3, 64, 66.84375, 12.3515625},
                      {"530B", 105, 20480, 128, 35, 1, 3, 280, 114.0234375, 23.076171875},
                      {"1T", 128, 25600, 160, 64, 1, 1, 512, 131.25, 26.5625}};
  for (const Row& r : rows) {
    GptShape m;
    m.layers = r.layers;
    m.hidden = r.hidden;
    m.heads = r.heads;
    m.seq = 2048;
    m.vocab = 51200;
    MegatronConfig c;
    c.tp = 8;
    c.pp = r.pp;
    c.dp = 1;
    c.micro_batch = r.micro_batch;
    c.virtual_stages = r.v;
    c.batch = r.batch;
    c.distributed_optimizer = false;
    c.sequence_parallel = false;
    c.recompute = Recompute::none;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    EXPECT_NEAR(megatron_memory(m, c, false).activations / gib, r.none_gib, 0.1 * r.none_gib)
        << r.name << " none";
    c.sequence_parallel = true;
    c.recompute = Recompute::selective;
    EXPECT_NEAR(megatron_memory(m, c, false).activations / gib, r.seqsel_gib, 0.1 * r.seqsel_gib)
        << r.name << " seqsel";
  }
}

TEST(MegatronActivations, Llama3_405BOn8192GpusPerRecomputeMode) {
  GptShape m = gpt_preset("llama3-405B");
  m.seq = 8192;
  const Machine mc = load_machine("dgx-h100");
  MegatronSearchOptions o;
  o.gpus = 8192;
  o.batch = 2048;
  o.tp = 8;
  o.pp = 16;
  o.first_stage_layers = 7;
  o.last_stage_layers = 7;
  // Per layer at micro-batch 1, by hand: 8192 tokens, 1024 per GPU under SP; h 16384, K/V
  // width 8 x 128 = 1024, ffn 53248, 128 heads; per GPU (t = 8) heads 16, K/V 128, ffn 6656.
  //   norms: 2 x 1024 x (2 x 16384 x 2 + 4)                        =  134,225,920
  //   Q, O: 2 x 8192 x 2048 x 2; K, V: 2 x 8192 x 128 x 2           =   71,303,168
  //   log-sum-exp 8192 x 16 x 4                                      =      524,288
  //   gate|up 8192 x 13312 x 2, SwiGLU 8192 x 6656 x 2               =  327,155,712
  const double none = 134225920.0 + 71303168 + 524288 + 327155712;
  EXPECT_DOUBLE_EQ(none, 533209088);
  // Selective: - log-sum-exp - V (8192 x 128 x 2) + QKV output 8192 x (2048 + 256) x 2.
  const double selective = none - 524288 - 2097152 + 37748736;
  const double full = 1024 * 16384 * 2.0;
  // Stage 1 holds 15 micro-batches of its 8 layers, x (1 + 15/64) with 4 virtual stages.
  const double inflight = 8 * 15 * (1 + 15.0 / 64);
  for (const auto& [mode, per_layer] :
       {std::pair{Recompute::none, none}, std::pair{Recompute::selective, selective},
        std::pair{Recompute::full, full}}) {
    o.recompute = {mode};
    o.micro_batch = 1;
    o.virtual_stages = 4;
    const MegatronSearchResult r = search_megatron(m, o, mc);
    ASSERT_EQ(r.ranked.size(), 1u) << name_of(mode);
    const MegatronMemory& mem = r.ranked.front().memory;
    EXPECT_DOUBLE_EQ(mem.activation_per_layer, per_layer) << name_of(mode);
    EXPECT_DOUBLE_EQ(mem.inflight_layers, inflight) << name_of(mode);
    // Searched over every micro-batch and interleaving: only full recomputation fits in the
    // 80 GB (none needs 98.7 GB, selective 103.9 GB at micro-batch 1, v = 4).
    o.micro_batch = 0;
    o.virtual_stages = 0;
    const MegatronSearchResult all = search_megatron(m, o, mc);
    EXPECT_EQ(all.ranked.front().fits, mode == Recompute::full) << name_of(mode);
    if (mode != Recompute::full) {
      EXPECT_EQ(all.unfit, all.configs) << name_of(mode);
    }
  }
  // With fused attention the core-attention checkpoint saves nothing: it keeps more than none.
  EXPECT_GT(selective, none);
}
