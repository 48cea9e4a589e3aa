// The Megatron-LM strategy term by term, worked out by hand on the synthetic machine (4 GPUs per
// node; intra 2 ranks 100 GB/s, 4 ranks 200 GB/s; node 50 GB/s; latency 2 us per rank; memory
// 1000 GB/s): memory per recompute mode (Korthikanti et al. 2022), in-flight micro-batches and
// interleaving, the pipeline bubble, p2p sends, sequence-parallel collectives, distributed-
// optimizer traffic, uneven first/last stages, tensor parallelism across nodes when allowed,
// the FLOP report, the search against predict_megatron, and the code paths of each era.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include <algorithm>

#include "ovb/error.hpp"
#include "ovb/model/comm_cost.hpp"
#include "ovb/model/flops.hpp"
#include "ovb/model/megatron.hpp"
#include "ovb/model/megatron_overlap.hpp"
#include "ovb/model/megatron_search.hpp"
#include "ovb/metrics.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

// L=4, h=64, 4 heads, s=16, V=128; tp=2, pp=2, dp=2, micro-batch 2, batch 16 -> 4 micro-batches.
MegatronConfig base_config() {
  MegatronConfig c;
  c.tp = 2;
  c.pp = 2;
  c.dp = 2;
  c.micro_batch = 2;
  c.batch = 16;
  c.act_dtype = DType::bf16;
  return c;
}

MegatronConfig base_with_v2() {
  MegatronConfig c = base_config();
  c.virtual_stages = 2;
  return c;
}

}  // namespace

TEST(Megatron, WeightsGradientsOptimizerByHand) {
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  // First stage: 2 layers of (12 h^2 + 13 h) / tp + V h / tp + s h
  //   = 2 * 49984 / 2 + 4096 + 1024 = 55104 elements.
  const MegatronMemory mem = megatron_memory(m, c);
  EXPECT_DOUBLE_EQ(mem.params_local, 55104);
  EXPECT_DOUBLE_EQ(mem.weights, 2 * 55104.0);
  EXPECT_DOUBLE_EQ(mem.gradients, 4 * 55104.0);
  EXPECT_DOUBLE_EQ(mem.optimizer, 12 * 55104.0 / 2);  // distributed over dp = 2
  c.distributed_optimizer = false;
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).optimizer, 12 * 55104.0);
}

TEST(Megatron, EmbeddingsTiedOrUntiedByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  // One stage: 4 layers of 49984 / tp + the word embeddings V h / tp = 4096 + positions s h =
  // 1024; tied, the output layer uses the embeddings, untied it has its own 4096.
  c.pp = 1;
  c.batch = 8;
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).params_local, 4 * 49984 / 2 + 4096 + 1024);
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, mc).time.embedding_grads_us, 0);
  c.untie_embeddings = true;
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).params_local, 4 * 49984 / 2 + 2 * 4096 + 1024);
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, mc).time.embedding_grads_us, 0);
  // Llama's head is untied whatever the flag says: 4 layers of its block / tp, embedding, head.
  const GptShape l = test::small_llama();
  c.untie_embeddings = false;
  const double llama_block = megatron_block_params(l) / 2;
  EXPECT_DOUBLE_EQ(megatron_memory(l, c).params_local, 4 * llama_block + 2 * 4096);
  // Two stages: the last holds the output weight either way (a copy when tied), so the stages
  // weigh the same; only tied weights have the gradient all-reduce between them.
  c = base_config();
  const MegatronPrediction tied = predict_megatron(m, c, mc);
  c.untie_embeddings = true;
  const MegatronPrediction untied = predict_megatron(m, c, mc);
  EXPECT_DOUBLE_EQ(untied.memory.params_local, tied.memory.params_local);
  EXPECT_GT(tied.time.embedding_grads_us, 0);
  EXPECT_DOUBLE_EQ(untied.time.embedding_grads_us, 0);
  EXPECT_NEAR(tied.time.iteration_us - untied.time.iteration_us, tied.time.embedding_grads_us,
              1e-9);
}

TEST(Megatron, ActivationsPerRecomputeModeByHand) {
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  // s*b*h = 16*2*64 = 2048; a*s/h = 4*16/64 = 1.
  // none + SP, unfused attention: 2048 (34 + 5) / 2 = 39936 per layer; 2 micro-batches in
  // flight x 2 layers.
  MegatronMemory mem = megatron_memory(m, c, false);
  EXPECT_DOUBLE_EQ(mem.activation_per_layer, 39936);
  EXPECT_DOUBLE_EQ(mem.inflight_layers, 4);
  EXPECT_DOUBLE_EQ(mem.activations, 4 * 39936.0);
  c.recompute = Recompute::selective;  // 34 sbh / t
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 34 * 2048 / 2.0);
  c.recompute = Recompute::full;  // 2 sbh / t
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 2 * 2048 / 2.0);
  c.sequence_parallel = false;  // 2 sbh
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 2 * 2048.0);
  c.recompute = Recompute::selective;  // sbh (10 + 24/t)
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 2048 * 22.0);
  c.recompute = Recompute::none;  // sbh (10 + 24/t + 5as/(ht)) = 2048 * 24.5
  EXPECT_DOUBLE_EQ(megatron_memory(m, c, false).activation_per_layer, 2048 * 24.5);
  EXPECT_DOUBLE_EQ(megatron_memory(m, c, false).total(),
                   2 * 55104.0 + 4 * 55104.0 + 6 * 55104.0 + 4 * 2048 * 24.5);
}

// Megatron-Core's block recomputation (--recompute-method block --recompute-num-layers N): the
// first N layers of each chunk keep their input only, the others everything; time and hardware
// FLOPs count the recomputed share of a full recomputation.
TEST(Megatron, BlockRecomputationByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  c.pp = 1;
  c.dp = 4;  // 4 layers in one chunk; 16 / (4 x 2) = 2 micro-batches
  c.recompute = Recompute::full;
  c.recompute_layers = 1;
  EXPECT_EQ(chunk_layers(m, c), 4);
  EXPECT_DOUBLE_EQ(recompute_share(m, c), 0.25);
  EXPECT_EQ(recompute_words(m, c), "block 1/4");
  // With SP, fused attention: none 34 sbh/t + the fp32 log-sum-exp 4 a s b/t = 34816 + 256,
  // full 2 sbh/t = 2048 per layer.
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).activation_per_layer, 0.25 * 2048 + 0.75 * 35072);
  MegatronConfig full = c, none = c;
  full.recompute_layers = 0;
  none.recompute = Recompute::none;
  none.recompute_layers = 0;
  const MegatronTime tb = predict_megatron(m, c, mc).time;
  const MegatronTime tf = predict_megatron(m, full, mc).time;
  const MegatronTime tn = predict_megatron(m, none, mc).time;
  EXPECT_GT(tf.recompute_us, 0);
  EXPECT_NEAR(tb.recompute_us, 0.25 * tf.recompute_us, 1e-12);
  EXPECT_NEAR(tb.tp_bwd_us - tn.tp_bwd_us, 0.25 * (tf.tp_bwd_us - tn.tp_bwd_us), 1e-12);
  EXPECT_LT(tn.iteration_us, tb.iteration_us);
  EXPECT_LT(tb.iteration_us, tf.iteration_us);
  const double F = m.model_flop(c.batch);
  EXPECT_NEAR(hardware_flop(m, c.batch, Recompute::full, 0.25) - F,
              0.25 * (hardware_flop(m, c.batch, Recompute::full) - F), 1e-6 * F);
  // Invalid: not with selective, not a whole chunk or more, not negative.
  c.recompute_layers = 4;
  EXPECT_THROW(validate_megatron(m, c, mc), UsageError);
  c.recompute_layers = -1;
  EXPECT_THROW(validate_megatron(m, c, mc), UsageError);
  c.recompute_layers = 1;
  c.recompute = Recompute::selective;
  EXPECT_THROW(validate_megatron(m, c, mc), UsageError);
}

// Where no recomputation does not fit and full recomputation does, the search adds the block
// recomputation of the fewest layers that fits (brute force over every count as the reference),
// only from the 2022 release on.
TEST(Megatron, SearchAddsTheFewestRecomputedLayersThatFit) {
  Machine mc = test::synthetic_machine();
  GptShape m = test::small_gpt();
  m.layers = 8;  // one chunk of 8 layers at pp 1
  MegatronConfig c = base_config();
  c.pp = 1;
  c.dp = 2;  // 4 GPUs
  c.micro_batch = 2;
  c.recompute = Recompute::none;
  const double none_total = megatron_memory(m, c).total();
  c.recompute = Recompute::full;
  const double full_total = megatron_memory(m, c).total();
  // A limit 30 % of the way from full to none: a few layers must be recomputed, not all.
  mc.memory_bytes = (full_total + 0.3 * (none_total - full_total)) / mc.memory_usable_fraction;
  int want = 0;
  for (int n = 1; n < 8 && !want; ++n) {
    c.recompute_layers = n;
    if (predict_megatron(m, c, mc).fits) want = n;
  }
  ASSERT_GT(want, 1);
  MegatronSearchOptions o;
  o.gpus = 4;
  o.batch = 16;
  o.tp = 2;
  o.pp = 1;
  o.micro_batch = 2;
  for (const char* era : {"core", "2022", "sc21"}) {
    o.features = megatron_era(era);
    const MegatronSearchResult r = search_megatron(m, o, mc);
    std::vector<int> block;
    for (const MegatronPrediction& p : r.ranked)
      if (p.config.block_recompute()) {
        block.push_back(p.config.recompute_layers);
        EXPECT_TRUE(p.fits);
        EXPECT_DOUBLE_EQ(p.time.iteration_us, predict_megatron(m, p.config, mc).time.iteration_us);
      }
    EXPECT_EQ(block, std::string(era) == "sc21" ? std::vector<int>{} : std::vector<int>{want})
        << era;
  }
}

TEST(Megatron, InFlightMicroBatchesAndInterleaving) {
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  c.virtual_stages = 2;  // 1 + (pp-1)/(pp v) = 1.25 of the L layers
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).inflight_layers, 5);
  c.virtual_stages = 1;
  c.batch = 4;  // one micro-batch: only it is in flight, 2 layers' worth
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).inflight_layers, 2);
  c.pp = 1;
  c.batch = 16;  // no pipeline: one micro-batch of all 4 layers
  EXPECT_DOUBLE_EQ(megatron_memory(m, c).inflight_layers, 4);
  // ... and, the only stage being the last, one micro-batch's logits: 16 tokens x 2 sequences x
  // 128 / tp = 64 local vocabulary, bf16 and fp32 (6 bytes each).
  const MegatronMemory one = megatron_memory(m, c);
  EXPECT_DOUBLE_EQ(one.logits, 16 * 2 * 64 * 6.0);
  EXPECT_DOUBLE_EQ(one.activations, 4 * one.activation_per_layer + 16 * 2 * 64 * 6.0);
  // Two stages, 4 micro-batches: the first holds 2 of its 2 layers (4 layers' worth), the last 1
  // of its 2 plus the logits; the larger counts.
  c.pp = 2;
  const MegatronMemory two = megatron_memory(m, c);
  EXPECT_DOUBLE_EQ(two.activations, std::max(4 * two.activation_per_layer,
                                             2 * two.activation_per_layer + 16 * 2 * 64 * 6.0));
}

// Megatron-LM runs bias + GELU and bias-dropout-add as kernels of their own: a machine whose 4D
// trainer fuses its epilogues (gpu.fused_epilogues) predicts the same Megatron iteration.
TEST(Megatron, EpiloguesAreSeparatePassesWhateverTheMachineSays) {
  const Machine mc = test::synthetic_machine();
  Machine fused = mc;
  fused.fused_epilogues = true;
  const GptShape m = test::small_gpt();
  const MegatronConfig c = base_config();
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, fused).time.iteration_us,
                   predict_megatron(m, c, mc).time.iteration_us);
  EXPECT_DOUBLE_EQ(megatron_compute_terms(m, c, fused).block.fwd_us,
                   compute_terms(m, megatron_layer_options(c), mc, false).block.fwd_us);
  // ... where the 4D costing of the same layer differs.
  EXPECT_LT(compute_terms(m, megatron_layer_options(c), fused).block.fwd_us,
            compute_terms(m, megatron_layer_options(c), mc).block.fwd_us);
}

TEST(Megatron, PipelineBubbleP2pAndDataParallelByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  const MegatronConfig c = base_config();
  const MegatronPrediction p = predict_megatron(m, c, mc);
  const MegatronTime& t = p.time;
  const ComputeTerms ct = compute_terms(m, megatron_layer_options(c), mc);
  EXPECT_EQ(t.microbatches, 4);
  // SP in a 2-rank TP group: 4096-byte activation; all-gather / reduce-scatter move 2048 B at
  // 100 GB/s (0.02048 us) + 2 us * 2 latency; two of each per layer and direction.
  const double coll = 4 + 0.02048;
  EXPECT_NEAR(t.tp_fwd_us, 4 * coll, 1e-9);
  EXPECT_NEAR(t.tp_bwd_us, 4 * coll, 1e-9);
  const double fwd = 2 * (ct.block.fwd_us + 4 * coll), bwd = 2 * (ct.block.bwd_us + 4 * coll);
  EXPECT_NEAR(t.stage_fwd_us, fwd, 1e-9);
  EXPECT_NEAR(t.stage_bwd_us, bwd, 1e-9);
  // Bubble (pp-1)/v micro-batch times.
  EXPECT_NEAR(t.bubble_us, fwd + bwd, 1e-9);
  // p2p: the next stage is tp*dp = 4 ranks away: across nodes, the 4 GPUs of a node share its
  // 50 GB/s; 2048 bytes (1/tp of the activation) -> 0.16384 us + 4 us; 2 (v m + pp - 1) sends.
  EXPECT_NEAR(t.p2p_one_us, 4.16384, 1e-9);
  EXPECT_NEAR(t.p2p_us, 2 * (4 + 1) * 4.16384, 1e-9);
  // Distributed optimizer over dp = 2, ranks 2 apart (inside a node, 100 GB/s): fp32 gradients
  // 220416 B reduce-scattered (moves half: 1.10208 us) + 4 us; bf16 parameters 110208 B
  // all-gathered (0.55104 us) + 4 us. Both hide under one micro-batch's stage but the bucket
  // of the embeddings (V h / tp + s h = 4096 + 1024 elements), the last reduced and the first
  // gathered: 20480 B reduce-scattered (0.1024 us) + 4 us and 10240 B gathered (0.0512 us) + 4.
  EXPECT_NEAR(t.dp_rs_us, 5.10208, 1e-9);
  EXPECT_NEAR(t.dp_ag_us, 4.55104, 1e-9);
  EXPECT_NEAR(t.dp_tail_rs_us, 4.1024, 1e-9);
  EXPECT_NEAR(t.dp_tail_ag_us, 4.0512, 1e-9);
  EXPECT_NEAR(t.dp_exposed_us, 4.1024 + 4.0512, 1e-9);
  // AdamW on 27552 shard elements x 30 bytes at 1000 GB/s.
  EXPECT_NEAR(t.optimizer_us, 27552 * 30 / 1e6, 1e-9);
  // Tied embeddings over 2 stages: the fp32 word-embedding gradient (V h / tp = 4096 elements,
  // 16384 B) all-reduced between the stages, tp * dp = 4 ranks apart, after the flush: a 2-rank
  // all-reduce moves S per rank, across nodes at 12.5 GB/s (as the p2p above): 1.31072 us +
  // 2 steps x 2 us.
  EXPECT_NEAR(t.embedding_grads_us, 16384 / 12.5e3 + 4, 1e-9);
  // The loss as Megatron-LM computes it replaces the 4D model's one pass (2 bytes a logit
  // forward, 4 backward): 2 sequences x 16 tokens x 64 local vocabulary = 2048 logits, cast to
  // fp32 and passed over (2 + 36 bytes a logit forward, 12 + 2 backward) at 1000 GB/s.
  EXPECT_NEAR(ct.head.ce.time_us + ct.head.ce.bwd_us, 6 * 2048 / 1e6, 1e-12);
  EXPECT_NEAR(t.cross_entropy_us, (38 + 14) * 2048 / 1e6, 1e-12);
  const double head = ct.head.fwd_us + ct.head.bwd_us - 6 * 2048 / 1e6 + (38 + 14) * 2048 / 1e6;
  EXPECT_NEAR(t.head_us, head, 1e-9);
  // The passes over the gradients (Megatron.GradientPassesByHand): 991872 B at 1000 GB/s.
  EXPECT_NEAR(t.iteration_us, 4 * (fwd + bwd + head) + (fwd + bwd) + 10 * 4.16384 +
                                  27552 * 30 / 1e6 + 16384 / 12.5e3 + 4 + 4.1024 + 4.0512 +
                                  991872 / 1e6,
              1e-6);
}

// The passes over the gradients outside the layers, by hand for each data-parallel
// implementation. small_gpt on tp 2: a block holds 12 h^2 + 13 h = 49984 parameters, 24992 per
// GPU. pp 2: the first stage 2 blocks + the word embedding (V h / tp = 4096) + the positions
// (s h = 1024) = 55104, the last 2 blocks + its copy of the tied word embedding = 54080.
TEST(Megatron, GradientPassesByHand) {
  const Machine mc = test::synthetic_machine();  // 1000 GB/s, no kernel overhead
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();  // core, tp 2, pp 2, dp 2, distributed optimizer
  const MegatronMemory mem = predict_megatron(m, c, mc).memory;
  EXPECT_DOUBLE_EQ(mem.params_first, 55104);
  // Megatron-Core: the optimizer's gradient norm over its shard (27552 x 4 B), the first
  // stage's zeroing (55104 x 4 B) and its buckets' NaN check (4 B) and 1/dp scaling (8 B); the
  // last stage's run beside the drain (its reduction launched one backward step later).
  const double norm = 27552 * 4, zero = 55104 * 4;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.grad_passes_us,
              (norm + zero + 12.0 * 55104) / 1e6, 1e-12);
  // dp 1: nothing to scale (gradient_scaling_factor 1); the whole stage is the shard.
  MegatronConfig one = c;
  one.dp = 1;
  one.batch = 8;
  EXPECT_NEAR(predict_megatron(m, one, mc).time.grad_passes_us,
              (55104 * 4 + zero + 4.0 * 55104) / 1e6, 1e-12);
  // Local DDP (2022): zeroing, then `main_grad /= dp` on every stage at once after the flush
  // (the larger stage, 8 B), and the norm; no NaN check.
  c.features = megatron_era("2022");
  EXPECT_NEAR(predict_megatron(m, c, mc).time.grad_passes_us,
              (norm + zero + 8.0 * 55104) / 1e6, 1e-12);
  // Megatron-Core with 16-bit gradients (NeMo's grad_reduce_in_fp32 = False): zeroing, NaN
  // check and scaling over 2-byte gradients (2 + 2 + 4 B of the first stage), and the
  // optimizer's copy of its shard's to fp32 (6 B) before the norm.
  c.features = megatron_era("core");
  c.features.grad_buffer_fp32 = false;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.grad_passes_us,
              (27552 * (4 + 6) + 55104 * (2 + 2 + 4)) / 1e6, 1e-12);
  // sc21 with a pipeline: its launcher's local DDP without a buffer or fp32 accumulation
  // flattens, divides and copies back the fp16 gradients of the larger stage (4 + 4 + 4 B), no
  // zeroing; the optimizer copies its shard's to fp32 (6 B), unscales and checks them (8 B) and
  // takes their norm (4 B).
  c.features = megatron_era("sc21");
  EXPECT_NEAR(predict_megatron(m, c, mc).time.grad_passes_us,
              (27552 * (6 + 8 + 4) + 12.0 * 55104) / 1e6, 1e-12);
  // PyTorch DDP (sc21 without a pipeline): the optimizer copies the 16-bit gradients of its
  // shard (the one stage: 4 blocks of 24992 + 5120 = 105088, over 4 ranks) to fp32 (6 B), then
  // the norm (4 B) and, fp16 with loss scaling in that era, the unscale-and-check (8 B).
  c.pp = 1;
  c.dp = 4;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.grad_passes_us,
              (105088.0 / 4 * (4 + 8 + 6)) / 1e6, 1e-12);
}

TEST(Megatron, TensorParallelOverlapPairsEachCollectiveWithItsGemm) {
  Machine mc = test::synthetic_machine();
  mc.comm_slowdown = 0.5;
  mc.compute_slowdown = 0.25;
  // A pair by hand: the GEMM 64 x 32 x 32 in 4 row chunks of 16 x 32 x 32, at the synthetic
  // machine's quantized peak (no launch overhead); the collective 1.5 x longer when overlapped.
  const GemmTerm g = gemm_term(mc, 64, 32, 32, "bf16");
  const double whole = g.time_us, chunks = 4 * gemm_term(mc, 16, 32, 32, "bf16").time_us;
  for (double comm : {0.0, 0.1 * whole, 0.7 * whole, 10 * whole}) {
    const double c = 1.5 * comm;
    // Pipelined reduce-scatter: each chunk's slice reduced while the next chunk computes.
    const TpOverlap pipe = tp_overlap_pair(mc, g, comm, TpMethod::pipeline, 4, "bf16");
    EXPECT_NEAR(pipe.exposed_us, std::max(chunks, c) + std::min(chunks, c) / 4 - whole, 1e-12)
        << comm;
    EXPECT_NEAR(pipe.hidden_us, std::min(chunks, c), 1e-12) << comm;
    // Ring exchange, 4 ranks: chunk 0 is the rank's own; 3 exchanges of c / 3, each before the
    // next chunk's GEMM: the step-by-step schedule, GEMM k starting when GEMM k - 1 has ended
    // and exchange k - 1 (back to back from the start) has arrived.
    const TpOverlap ring = tp_overlap_pair(mc, g, comm, TpMethod::ring_exchange, 4, "bf16");
    // The collective's time under the GEMM: the exchanges' intervals intersected with the GEMM
    // chunks'.
    double t = 0, under = 0;
    for (int k = 0; k < 4; ++k) {
      const double start = std::max(t, k * c / 3);
      t = start + chunks / 4;
      for (int x = 0; x < 3; ++x)
        under += std::max(0.0, std::min(t, (x + 1) * c / 3) - std::max(start, x * c / 3));
    }
    EXPECT_NEAR(ring.exposed_us, t - whole, 1e-12) << comm;
    EXPECT_NEAR(ring.hidden_us, under, 1e-12) << comm;
    const TpOverlap bulk = tp_overlap_pair(mc, g, comm, TpMethod::bulk, 1, "bf16");
    EXPECT_NEAR(bulk.exposed_us, std::max(whole, c) - whole, 1e-12) << comm;  // beside the GEMM
    EXPECT_NEAR(bulk.hidden_us, std::min(whole, c), 1e-12) << comm;
  }
  // 5 splits do not divide 64 rows: the GEMM runs whole beside the collective.
  EXPECT_NEAR(tp_overlap_pair(mc, g, 10 * whole, TpMethod::pipeline, 5, "bf16").exposed_us,
              15 * whole - whole, 1e-12);

  // A configuration: forward, the four collectives each with its GEMM (all-gathers in tp = 2
  // ring steps, reduce-scatters in 4 pipeline splits); backward, six (two gradient all-gathers
  // ring-exchanged under dgrad, two input all-gathers beside dgrad, two reduce-scatters beside
  // wgrad), each costing what it leaves exposed plus the GEMM's slowdown under it.
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  const ComputeTerms ct = compute_terms(m, megatron_layer_options(c), mc);
  const MegatronTime off = predict_megatron(m, c, mc).time;
  c.tp_comm_overlap = true;
  const MegatronTime on = predict_megatron(m, c, mc).time;
  const double coll = 4 + 0.02048;  // as PipelineBubbleP2pAndDataParallelByHand's
  const auto pair = [&](const GemmTerm& gemm, TpMethod method, int n) {
    const TpOverlap o = tp_overlap_pair(mc, gemm, coll, method, n, "bf16");
    return o.exposed_us + 0.25 * o.hidden_us;
  };
  const TpMethod ring = TpMethod::ring_exchange, pipe = TpMethod::pipeline, bulk = TpMethod::bulk;
  const auto& L = ct.block.lin;
  EXPECT_NEAR(on.tp_fwd_us, pair(L[0].fwd, ring, 2) + pair(L[1].fwd, pipe, 4) +
                                pair(L[2].fwd, ring, 2) + pair(L[3].fwd, pipe, 4),
              1e-9);
  EXPECT_NEAR(on.tp_bwd_us, pair(L[3].dx, ring, 2) + pair(L[2].dx, bulk, 1) +
                                pair(L[2].dw, bulk, 1) + pair(L[1].dx, ring, 2) +
                                pair(L[0].dx, bulk, 1) + pair(L[0].dw, bulk, 1),
              1e-9);
  EXPECT_NEAR(off.tp_fwd_us, 4 * coll, 1e-9);  // not overlapped: the collectives alone
  // Megatron-LM refuses the overlap without sequence parallelism; so does the model.
  c.sequence_parallel = false;
  EXPECT_THROW(predict_megatron(m, c, mc), UsageError);
  MegatronSearchOptions o;
  o.gpus = 8;
  o.batch = 16;
  o.tp_comm_overlap = true;
  o.sequence_parallel = false;
  EXPECT_THROW(search_megatron(m, o, mc), UsageError);
  o.sequence_parallel = true;
  EXPECT_GT(search_megatron(m, o, mc).configs, 0);
}

TEST(Megatron, DataParallelReductionPerModelChunkByHand) {
  // One chunk: what the window does not cover.
  EXPECT_DOUBLE_EQ(chunked_reduction_exposed_us(1, 10, 4, 0), 6);
  EXPECT_DOUBLE_EQ(chunked_reduction_exposed_us(1, 3, 4, 0), 0);
  EXPECT_DOUBLE_EQ(chunked_gather_exposed_us(1, 10, 4, 0), 6);
  // Reduce-scatter, 3 chunks of 10 us, windows of 2 us, chunk ends 5 us apart: chunk 2 starts at
  // -12 and ends at -2, chunk 1 (ready at -7) at 8, chunk 0 (ready at -2) at 18: 18 us exposed.
  EXPECT_DOUBLE_EQ(chunked_reduction_exposed_us(3, 10, 2, 5), 18);
  // Far apart (gap 20): each ends before the next is ready; only chunk 0's 10 - 2 is exposed.
  EXPECT_DOUBLE_EQ(chunked_reduction_exposed_us(3, 10, 2, 20), 8);
  // All-gather, 3 chunks of 10 us, window 2, first forwards 5 us apart: chunk 0 ends at 10
  // (needed by 2: delay 8); chunk 1, issued at 0, ends at 20 (needed by 5 + 8 + 2 = 15: delay 5);
  // chunk 2, issued at chunk 1's start 5 + 13 = 18, ends at 30 (needed by 10 + 13 + 2 = 25:
  // delay 5). 18 us in all.
  EXPECT_DOUBLE_EQ(chunked_gather_exposed_us(3, 10, 2, 5), 18);
  // Far apart (gap 40): chunk 1 and 2 hide under the forwards before theirs.
  EXPECT_DOUBLE_EQ(chunked_gather_exposed_us(3, 10, 2, 40), 8);
}

TEST(Megatron, InterleavingShrinksTheBubbleAndMultipliesSends) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  const MegatronTime t1 = predict_megatron(m, c, mc).time;
  c.virtual_stages = 2;
  const MegatronTime t2 = predict_megatron(m, c, mc).time;
  EXPECT_NEAR(t2.bubble_us, (t1.stage_fwd_us + t1.stage_bwd_us) / 2, 1e-9);
  // Eras before Megatron-Core block on every exchange: all 2 (v m + pp - 1) on the critical path.
  EXPECT_FALSE(megatron_era("2022").overlap_p2p);
  EXPECT_FALSE(megatron_era("sc21").overlap_p2p);
  c.features.overlap_p2p = false;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.p2p_us, 2 * (2 * 4 + 1) * 4.16384, 1e-9);
  // Megatron-Core overlaps them: the fill and drain still wait for theirs, one at each of the
  // pp v - 1 virtual stage boundaries the first micro-batch crosses (stage 0 -> 1, then 1 -> 0
  // from chunk 0 to chunk 1, then 0 -> 1: 3 here), each way; each of the 2 v m exchanges
  // exposes what it takes beyond the shorter pass of a chunk (none here: a chunk's forward is
  // longer than one send) and slows that compute by compute_slowdown for its time.
  EXPECT_GT(t2.stage_fwd_us / 2, 4.16384);
  EXPECT_NEAR(t2.p2p_us, 2 * (2 * 2 - 1) * 4.16384, 1e-9);
  EXPECT_NEAR(t2.p2p_hidden_us, 2 * 2 * 4 * 4.16384, 1e-9);
  Machine slow = mc;
  slow.compute_slowdown = 0.5;
  slow.comm_slowdown = 1e4;  // a send far longer than a chunk: the excess is exposed
  const MegatronTime t3 = predict_megatron(m, base_with_v2(), slow).time;
  const double one = 4.16384 * (1 + 1e4), chunk = std::min(t3.stage_fwd_us, t3.stage_bwd_us) / 2;
  EXPECT_NEAR(t3.p2p_us, 2 * 3 * 4.16384 + 2 * 2 * 4 * (one - chunk), 1e-6);
  EXPECT_NEAR(t3.p2p_hidden_us, 2 * 2 * 4 * chunk, 1e-6);
}

// Interleaved, each model chunk's reduce-scatter starts with its last backward and its
// all-gather is waited for before its first forward; a stage's chunks come round pp chunk-passes
// and pp pipeline exchanges apart (results/model/interleaved-schedule.py replays the order).
// A slow network makes the reduction long enough that the spacing shows.
TEST(Megatron, InterleavedReductionChunksComeRoundWithTheirExchanges) {
  Machine slow = test::synthetic_machine();
  slow.comm_slowdown = 50;
  const GptShape m = test::small_gpt();
  const MegatronConfig c = base_with_v2();
  const MegatronTime t = predict_megatron(m, c, slow).time;
  ASSERT_GT(t.p2p_one_us, 0);
  const int v = c.virtual_stages;
  const double k = 1 + slow.comm_slowdown, rs = t.dp_rs_us * k, ag = t.dp_ag_us * k;
  const auto exposed = [&](double exchange) {
    const double gap_b = c.pp * (t.stage_bwd_us / v + exchange);
    const double gap_f = c.pp * (t.stage_fwd_us / v + exchange);
    return std::max(std::min(rs, t.dp_tail_rs_us),
                    chunked_reduction_exposed_us(v, rs / v, t.stage_bwd_us / v, gap_b)) +
           std::max(std::min(ag, t.dp_tail_ag_us),
                    chunked_gather_exposed_us(v, ag / v, t.stage_fwd_us / v, gap_f));
  };
  EXPECT_NEAR(t.dp_exposed_us, exposed(t.p2p_one_us), 1e-6);
  EXPECT_GT(std::abs(exposed(t.p2p_one_us) - exposed(0)), 1e-3) << "the exchanges do not show";
}

// Each collective call pays its latency: Megatron-Core reduces (and gathers) the first stage's
// first model chunk in buckets of max(4e7, 1e6 dp) parameters and each other chunk whole;
// PyTorch DDP in 25 MiB buckets; Megatron's local DDP in one call.
TEST(Megatron, DataParallelCollectivesPayTheirLatencyPerCall) {
  const Machine mc = test::synthetic_machine();
  GptShape m = test::small_gpt(8);
  m.hidden = 1024;
  m.heads = 8;
  m.seq = 128;
  m.vocab = 1024;
  MegatronConfig c = base_config();
  c.tp = 1;
  c.pp = 1;
  c.dp = 4;
  c.micro_batch = 1;
  c.batch = 8;
  const auto calls_of = [&](const MegatronConfig& cc, CollKind kind, double bytes_per_param,
                            int calls) {
    const double params = predict_megatron(m, cc, mc).memory.params_local;
    return calls * cost_collective(mc, kind, Group::data, cc.dp, cc.tp,
                                   params * bytes_per_param / calls).time_us;
  };
  // About 102M parameters a GPU (8 layers of 12 h^2 + 13 h, the embeddings): 3 buckets of
  // 4e7 (more than 1e6 dp), the last one short.
  const MegatronPrediction p = predict_megatron(m, c, mc);
  ASSERT_GT(p.memory.params_local, 8e7);
  ASSERT_LT(p.memory.params_local, 1.2e8);
  EXPECT_NEAR(p.time.dp_rs_us, calls_of(c, CollKind::reduce_scatter, 4, 3), 1e-9);
  EXPECT_NEAR(p.time.dp_ag_us, calls_of(c, CollKind::all_gather, 2, 3), 1e-9);
  EXPECT_GT(p.time.dp_rs_us, calls_of(c, CollKind::reduce_scatter, 4, 1));  // the latencies show
  // Interleaved (16 layers, pp 2, 2 chunks): the first stage's first chunk (half of its 8
  // layers and the embeddings, about 51M parameters) in 2 buckets, the other chunk whole.
  m.layers = 16;
  c.pp = 2;
  c.dp = 2;
  c.virtual_stages = 2;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.dp_rs_us,
              calls_of(c, CollKind::reduce_scatter, 4, 2 + 1), 1e-9);
  m.layers = 8;
  // 2021's PyTorch DDP without a pipeline: 16-bit gradients in 25 MiB buckets (8 of them).
  c = base_config();
  c.tp = 1;
  c.pp = 1;
  c.dp = 4;
  c.micro_batch = 1;
  c.batch = 8;
  c.features = megatron_era("sc21");
  c.distributed_optimizer = false;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.dp_rs_us,
              calls_of(c, CollKind::all_reduce, 2, 8), 1e-9);
  // Megatron's local DDP (2022, with a pipeline): its contiguous buffer in one call.
  c.features = megatron_era("2022");
  c.pp = 2;
  c.dp = 2;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.dp_rs_us,
              calls_of(c, CollKind::all_reduce, 4, 1), 1e-9);
}

TEST(Megatron, SequenceParallelAndRecomputeCollectivesByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  c.tp = 4;
  c.dp = 1;
  // 4 ranks in a node: 200 GB/s, latency 8 us. All-gather / reduce-scatter move 3/4 of 4096 B.
  const double ag = 8 + 3072 / 200e3, ar = 8 + 6144 / 200e3;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.tp_fwd_us, 4 * ag, 1e-9);
  c.sequence_parallel = false;  // two all-reduces of the activation
  EXPECT_NEAR(predict_megatron(m, c, mc).time.tp_fwd_us, 2 * ar, 1e-9);
  c.recompute = Recompute::full;  // the recomputed forward repeats them in backward
  EXPECT_NEAR(predict_megatron(m, c, mc).time.tp_bwd_us, 4 * ar, 1e-9);
  c.recompute = Recompute::selective;  // attention core recomputed, no communication
  const MegatronPrediction p = predict_megatron(m, c, mc);
  EXPECT_NEAR(p.time.tp_bwd_us, 2 * ar, 1e-9);
  EXPECT_NEAR(p.time.recompute_us,
              compute_terms(m, megatron_layer_options(c), mc).block.attn_fwd_us, 1e-9);
}

TEST(Megatron, ReplicatedOptimizerAllReducesFp32Gradients) {
  const Machine mc = test::synthetic_machine();
  MegatronConfig c = base_config();
  c.distributed_optimizer = false;
  // 220416 B all-reduced over 2 ranks: moves 220416 B at 100 GB/s = 2.20416 us + 4 us.
  const MegatronTime t = predict_megatron(test::small_gpt(), c, mc).time;
  EXPECT_NEAR(t.dp_rs_us, 6.20416, 1e-9);
  EXPECT_DOUBLE_EQ(t.dp_ag_us, 0);
  EXPECT_NEAR(t.optimizer_us, 55104 * 30 / 1e6, 1e-9);
}

TEST(Megatron, InvalidConfigurationsAreNamed) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  auto err = [&](MegatronConfig c, GptShape shape = test::small_gpt()) {
    try {
      validate_megatron(shape, c, mc);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  MegatronConfig c = base_config();
  EXPECT_EQ(err(c), "");
  c.tp = 8;  // more than a node (8 heads so that only the node rule fails)
  GptShape eight = m;
  eight.heads = 8;
  EXPECT_NE(err(c, eight).find("inside a node"), std::string::npos);
  c = base_config();
  c.tp = 3;
  EXPECT_NE(err(c).find("heads 4 not divisible by tp"), std::string::npos);
  c = base_config();
  c.pp = 3;
  EXPECT_NE(err(c).find("layers 4 not divisible"), std::string::npos);
  c = base_config();
  c.batch = 12;
  c.micro_batch = 4;
  EXPECT_NE(err(c).find("not divisible by dp * micro-batch"), std::string::npos);
  c = base_config();
  c.pp = 1;
  c.virtual_stages = 2;
  EXPECT_NE(err(c).find("interleaving needs pp >= 2"), std::string::npos);
}

TEST(Megatron, FlopReportByHand) {
  const GptShape m = test::small_gpt();
  const double F = 72.0 * 16 * 16 * 4 * 64 * 64 * (1 + 16 / (12.0 * 64) + 128 / (12.0 * 4 * 64));
  EXPECT_DOUBLE_EQ(hardware_flop(m, 16, Recompute::none), F);
  EXPECT_DOUBLE_EQ(hardware_flop(m, 16, Recompute::full), F * 4 / 3);
  EXPECT_DOUBLE_EQ(hardware_flop(m, 16, Recompute::selective), F + 2.0 * 16 * 16 * 16 * 4 * 64);
  // 1 ms on 8 GPUs of peak 100: TFLOP/s = F / 1e-3 / 8 / 1e12.
  const FlopReport f = flop_report(m, 16, Recompute::full, 1000, 8, 100);
  EXPECT_DOUBLE_EQ(f.model_tflops_per_gpu, F / 1e-3 / 8 / 1e12);
  EXPECT_DOUBLE_EQ(f.hardware_tflops_per_gpu, F * 4 / 3 / 1e-3 / 8 / 1e12);
  EXPECT_DOUBLE_EQ(f.mfu, f.model_tflops_per_gpu / 100);
  EXPECT_DOUBLE_EQ(f.hfu, f.hardware_tflops_per_gpu / 100);
}

TEST(Megatron, SearchEqualsPredictionsAndRanksFittingFirst) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronSearchOptions o;
  o.gpus = 8;
  o.batch = 16;
  const MegatronSearchResult r = search_megatron(m, o, mc);
  // Brute force: tp in {1,2,4} (heads 4, node 4), pp | 4 and | 8/tp, mb powers of two | 16/dp,
  // v | L/pp (v > 1 needs pp > 1 and micro-batches % pp == 0), three recompute modes.
  std::int64_t expected = 0;
  for (int tp : {1, 2, 4})
    for (int pp : {1, 2, 4}) {
      if ((8 / tp) % pp) continue;
      const int dp = 8 / (tp * pp);
      for (int mb = 1; mb <= 16 / dp; mb *= 2) {
        if ((16 / dp) % mb) continue;
        for (int v = 1; v <= 4 / pp; ++v) {
          if ((4 / pp) % v || (v > 1 && pp < 2) || (v > 1 && (16 / dp / mb) % pp)) continue;
          expected += 3;
        }
      }
    }
  EXPECT_EQ(r.configs, expected);
  ASSERT_FALSE(r.ranked.empty());
  for (std::size_t i = 0; i < r.ranked.size(); i += 7) {
    const MegatronPrediction& a = r.ranked[i];
    EXPECT_DOUBLE_EQ(a.time.iteration_us, predict_megatron(m, a.config, mc).time.iteration_us);
  }
  for (std::size_t i = 1; i < r.ranked.size(); ++i) {
    if (r.ranked[i - 1].fits == r.ranked[i].fits)
      EXPECT_LE(r.ranked[i - 1].time.iteration_us, r.ranked[i].time.iteration_us);
    else
      EXPECT_TRUE(r.ranked[i - 1].fits);
  }
  // Pinned sizes restrict the search to them.
  o.tp = 2;
  o.pp = 2;
  for (const MegatronPrediction& p : search_megatron(m, o, mc).ranked) {
    EXPECT_EQ(p.config.tp, 2);
    EXPECT_EQ(p.config.pp, 2);
  }
}

TEST(Megatron, WithoutPipelineTheHeadStillRunsEveryMicroBatch) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();  // tp 2, micro-batch 2: the layer terms of the pp 2 case
  const MegatronPrediction staged = predict_megatron(m, c, mc);
  const double f = staged.time.stage_fwd_us / 2, b = staged.time.stage_bwd_us / 2;
  c.pp = 1;
  c.dp = 4;  // 16 / (4 * 2) = 2 micro-batches of all 4 layers, then the LM head and loss
  const MegatronPrediction p = predict_megatron(m, c, mc);
  const double rest = p.time.p2p_us + p.time.dp_exposed_us + p.time.interference_us +
                      p.time.optimizer_us + p.time.grad_passes_us;
  EXPECT_DOUBLE_EQ(p.time.bubble_us, 0);
  EXPECT_NEAR(p.time.iteration_us - rest, 2 * (4 * (f + b) + p.time.head_us), 1e-6);
  EXPECT_GT(p.time.head_us, 0);
}

TEST(Megatron, UnevenStagesSplitTheRestEvenly) {
  auto split = [](std::int64_t L, int pp, int f, int l) {
    const auto s = split_stages(L, pp, f, l);
    return s ? std::to_string(s->first) + "," + std::to_string(s->middle) + "," +
                   std::to_string(s->last)
             : std::string("none");
  };
  EXPECT_EQ(split(126, 16, 7, 7), "7,8,7");  // Llama 3 405B (arXiv 2407.21783, Section 3.3.2)
  EXPECT_EQ(split(128, 16, 0, 0), "8,8,8");
  EXPECT_EQ(split(126, 16, 0, 0), "none");  // 16 does not divide 126
  EXPECT_EQ(split(10, 3, 2, 0), "2,4,4");   // the last stage as the middle ones
  EXPECT_EQ(split(4, 2, 1, 3), "1,0,3");
  EXPECT_EQ(split(4, 2, 1, 2), "none");  // the ends do not add up to the layers
  EXPECT_EQ(split(9, 4, 2, 2), "none");  // 5 left over 2 stages
  EXPECT_EQ(split(5, 4, 2, 2), "none");  // 1 left for 2 stages: one would be empty
  EXPECT_EQ(split(4, 1, 1, 0), "none");  // one stage cannot be uneven
}

TEST(Megatron, UnevenStagesTimeAndMemoryByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();  // pp 2, 4 micro-batches
  const MegatronPrediction even = predict_megatron(m, c, mc);
  c.first_stage_layers = 1;
  c.last_stage_layers = 3;
  const MegatronPrediction p = predict_megatron(m, c, mc);
  // One layer's forward and backward (with its TP collectives) from the even stage of 2 layers.
  const double f = even.time.stage_fwd_us / 2, b = even.time.stage_bwd_us / 2;
  const double head = p.time.head_us;
  EXPECT_NEAR(p.time.stage_fwd_us, 3 * f, 1e-9);  // the stage with the most layers
  EXPECT_NEAR(p.time.stage_bwd_us, 3 * b, 1e-9);
  // The last stage (3 layers + head) is the slowest: it runs all 4 micro-batches, the first
  // stage's 1 layer fills and drains.
  EXPECT_NEAR(p.time.bubble_us, f + b, 1e-9);
  const double rest = p.time.p2p_us + p.time.dp_exposed_us + p.time.embedding_grads_us +
                      p.time.interference_us + p.time.optimizer_us + p.time.grad_passes_us;
  EXPECT_NEAR(p.time.iteration_us - rest, 4 * (3 * (f + b) + head) + (f + b), 1e-6);
  // Memory: the last stage's 3 layers and its copy of the tied word embeddings outweigh the
  // first stage's 1 layer + embeddings: 3 * 49984 / 2 + 4096 = 79072 > 49984 / 2 + 4096 + 1024.
  EXPECT_DOUBLE_EQ(p.memory.params_local, 79072);
  // Activations: stage 0 holds 2 micro-batches of 1 layer, stage 1 one of 3: 3 layers' worth.
  EXPECT_DOUBLE_EQ(p.memory.inflight_layers, 3);
  // The same ends as the even split predict exactly the even configuration.
  c.first_stage_layers = c.last_stage_layers = 2;
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, mc).time.iteration_us, even.time.iteration_us);
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, mc).memory.total(), even.memory.total());
}

TEST(Megatron, UnevenStagesInvalidAreNamedAndSearched) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt(6);
  auto err = [&](MegatronConfig c) {
    try {
      validate_megatron(m, c, mc);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  MegatronConfig c = base_config();
  c.first_stage_layers = 2;  // 6 layers, pp 2: the last stage takes the other 4
  EXPECT_EQ(err(c), "");
  c.pp = 1;
  c.dp = 4;
  EXPECT_NE(err(c).find("uneven stages (first/last stage layers) need pp >= 2"), std::string::npos);
  c = base_config();
  c.first_stage_layers = 2;
  c.last_stage_layers = 3;  // 2 + 3 != 6 with no middle stage
  EXPECT_NE(err(c).find("do not split evenly"), std::string::npos) << err(c);
  c = base_config();
  c.first_stage_layers = -1;
  EXPECT_NE(err(c).find("must be >= 0"), std::string::npos);
  c = base_config();
  c.first_stage_layers = 2;
  c.virtual_stages = 4;  // the first stage has only 2 layers
  EXPECT_NE(err(c).find("virtual stages 4 must divide"), std::string::npos) << err(c);

  // Search: only pp whose rest splits, every configuration keeps the ends and predicts as
  // predict_megatron; v at most the ends' layers.
  MegatronSearchOptions o;
  o.gpus = 8;
  o.batch = 16;
  o.first_stage_layers = 1;
  const MegatronSearchResult r = search_megatron(m, o, mc);
  ASSERT_FALSE(r.ranked.empty());
  for (const MegatronPrediction& p : r.ranked) {
    // pp | 8: the 5 layers after the first stage split over 1 other stage, not over 3 or 7.
    EXPECT_EQ(p.config.pp, 2);
    EXPECT_EQ(p.config.first_stage_layers, 1);
    EXPECT_EQ(p.config.virtual_stages, 1);  // the first stage's single layer is one chunk
    EXPECT_DOUBLE_EQ(p.time.iteration_us, predict_megatron(m, p.config, mc).time.iteration_us);
  }
}

TEST(Megatron, TensorParallelAcrossNodesByHand) {
  const Machine mc = test::synthetic_machine();
  GptShape m = test::small_gpt();
  m.heads = 8;  // tp = 8 divides heads and hidden: only the node rule stands in the way
  MegatronConfig c = base_config();
  c.tp = 8;
  c.pp = 1;
  c.dp = 1;
  EXPECT_THROW(validate_megatron(m, c, mc), UsageError);
  c.tp_across_nodes = true;
  EXPECT_NO_THROW(validate_megatron(m, c, mc));
  // 8 ranks, stride 1, over 2 nodes of 4: the ring crosses the network at the node's 50 GB/s
  // (one rank per node on each crossing, no sharing); latency 2 us x 8 ranks. All-gather and
  // reduce-scatter move 7/8 of the 4096 B activation (s 16 x micro-batch 2 x h 64 x 2 B).
  const double coll = 16 + 3584 / 50e3;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.tp_fwd_us, 4 * coll, 1e-9);
}

// Megatron-Core hides the data-parallel reduce-scatter (all-gather) under a micro-batch's
// backward (forward); when the tensor-parallel group spans nodes, its collectives in that window
// use the same NICs, so the reduction only has the window less their time.
TEST(Megatron, TensorParallelAcrossNodesSharesTheNicsWithTheDataReduction) {
  const Machine mc = test::synthetic_machine();  // 4 GPUs per node
  GptShape m = test::small_gpt();
  m.heads = 8;
  MegatronConfig c = base_config();
  c.pp = 1;
  c.dp = 2;
  c.batch = 4;  // one micro-batch of 2 per data rank
  for (const int tp : {4, 8}) {
    c.tp = tp;
    c.tp_across_nodes = tp > 4;
    const MegatronTime t = predict_megatron(m, c, mc).time;
    ASSERT_GT(t.dp_rs_us, 0);
    ASSERT_GT(t.tp_bwd_us, 0);
    const double layers = m.layers, slow = 1 + mc.comm_slowdown;
    const double nic_bwd = tp > 4 ? layers * t.tp_bwd_us : 0;
    const double nic_fwd = tp > 4 ? layers * t.tp_fwd_us : 0;
    EXPECT_NEAR(t.dp_exposed_us,
                std::max(t.dp_tail_rs_us, t.dp_rs_us * slow - (t.stage_bwd_us - nic_bwd)) +
                    std::max(t.dp_tail_ag_us, t.dp_ag_us * slow - (t.stage_fwd_us - nic_fwd)),
                1e-9)
        << "tp " << tp;
    if (tp > 4) {  // across nodes the reduction is exposed where it was hidden under the window
      EXPECT_GT(t.dp_rs_us * slow, t.stage_bwd_us - nic_bwd);
      EXPECT_GT(t.dp_exposed_us, 0);
    }
  }
}

TEST(Megatron, SearchAcrossNodesAddsTheLargerTensorParallelSizes) {
  const Machine mc = test::synthetic_machine();
  GptShape m = test::small_gpt();
  m.heads = 8;
  MegatronSearchOptions o;
  o.gpus = 8;
  o.batch = 16;
  // Brute force as above, tp among the given sizes.
  auto count = [](std::initializer_list<int> tps) {
    std::int64_t n = 0;
    for (int tp : tps)
      for (int pp : {1, 2, 4}) {
        if ((8 / tp) % pp) continue;
        const int dp = 8 / (tp * pp);
        for (int mb = 1; mb <= 16 / dp; mb *= 2) {
          if ((16 / dp) % mb) continue;
          for (int v = 1; v <= 4 / pp; ++v)
            if (!((4 / pp) % v || (v > 1 && pp < 2) || (v > 1 && (16 / dp / mb) % pp))) n += 3;
        }
      }
    return n;
  };
  EXPECT_EQ(search_megatron(m, o, mc).configs, count({1, 2, 4}));
  o.tp_across_nodes = true;
  const MegatronSearchResult r = search_megatron(m, o, mc);
  EXPECT_EQ(r.configs, count({1, 2, 4, 8}));
  bool eight = false;
  for (const MegatronPrediction& p : r.ranked) {
    if (p.config.tp != 8) continue;
    eight = true;
    EXPECT_TRUE(p.config.tp_across_nodes);
    EXPECT_DOUBLE_EQ(p.time.iteration_us, predict_megatron(m, p.config, mc).time.iteration_us);
  }
  EXPECT_TRUE(eight);
}

// The code paths of each Megatron-LM era (megatron_era), term by term on the base configuration
// (pp 2, dp 2, 4 micro-batches, distributed optimizer) of the synthetic machine.
TEST(Megatron, EraCodePathsByHand) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  const MegatronTime core = predict_megatron(m, c, mc).time;
  c.features = megatron_era("sc21");
  const MegatronTime sc21 = predict_megatron(m, c, mc).time;
  // Unfused accumulation, sc21's local DDP without a buffer: autograd adds each micro-batch's
  // fp16 gradient into param.grad from the second of the 4 on (read 2 + 2, write 2), 6 x 3/4
  // bytes per parameter of a layer ((12 h^2 + 13 h) / tp = 24992) at 1000 GB/s.
  EXPECT_DOUBLE_EQ(core.grad_accumulation_us, 0);
  EXPECT_NEAR(sc21.grad_accumulation_us, 4.5 * 24992 / 1e6, 1e-12);
  EXPECT_NEAR(sc21.stage_bwd_us, core.stage_bwd_us + 2 * 4.5 * 24992 / 1e6, 1e-9);
  // With the fp32 buffer (--accumulate-allreduce-grads-in-fp32): main_grad += grad, 10 bytes
  // every micro-batch.
  MegatronConfig fp32 = c;
  fp32.features.grad_buffer_fp32 = true;
  EXPECT_NEAR(predict_megatron(m, fp32, mc).time.grad_accumulation_us, 249920 / 1e6, 1e-12);
  // Local DDP: the reduce-scatter and all-gather after the flush, all exposed, both of fp16
  // (55104 x 2 B each: 4 us + 55104 B at 100 GB/s); Megatron-Core's only the embeddings' bucket
  // (PipelineBubbleP2pAndDataParallelByHand); with the fp32 buffer the reduce-scatter of 4 B.
  EXPECT_NEAR(sc21.dp_exposed_us, 4.55104 + 4.55104, 1e-9);
  EXPECT_NEAR(predict_megatron(m, fp32, mc).time.dp_exposed_us, 5.10208 + 4.55104, 1e-9);
  // Memory: the gradients in the buffer's dtype, 2 B a parameter of the larger stage, not 4.
  EXPECT_DOUBLE_EQ(predict_megatron(m, c, mc).memory.gradients, 2.0 * 55104);
  EXPECT_DOUBLE_EQ(predict_megatron(m, fp32, mc).memory.gradients, 4.0 * 55104);
  EXPECT_NEAR(core.dp_exposed_us, 4.1024 + 4.0512, 1e-9);
  // With SP the activation is sent sharded and nothing is gathered, in every era.
  EXPECT_NEAR(sc21.p2p_one_us, core.p2p_one_us, 1e-12);
  // Without SP: the era's scatter-gather sends 2048 B and all-gathers the 4096-byte activation
  // over the 2-rank TP group (4 us + 2048 B at 100 GB/s); Megatron-Core sends all 4096 B.
  c.sequence_parallel = false;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.p2p_one_us, 4.16384 + 4.02048, 1e-9);
  c.features = megatron_era("core");
  EXPECT_NEAR(predict_megatron(m, c, mc).time.p2p_one_us, 4 + 4096 / 12.5e3, 1e-9);
  // 2022: fused accumulation, but still the reduction after the flush.
  c.sequence_parallel = true;
  c.features = megatron_era("2022");
  const MegatronTime y22 = predict_megatron(m, c, mc).time;
  EXPECT_DOUBLE_EQ(y22.grad_accumulation_us, 0);
  EXPECT_NEAR(y22.dp_exposed_us, 5.10208 + 4.55104, 1e-9);
  // SC21 without a pipeline: torch DDP all-reduces 16-bit gradients under the backward but
  // the embeddings' bucket, the last (its reverse registration order, as Megatron-Core's), and
  // autograd accumulates from the second of 4 micro-batches on: 6 * 3/4 bytes per parameter.
  c.features = megatron_era("sc21");
  c.pp = 1;
  c.dp = 4;  // 8 GPUs: the 4-rank data group, tp = 2 apart, spans two nodes
  c.batch = 32;
  c.distributed_optimizer = false;
  const MegatronPrediction p1 = predict_megatron(m, c, mc);
  const double params = p1.memory.params_local;
  EXPECT_NEAR(p1.time.grad_accumulation_us, 4.5 * 24992 / 1e6, 1e-12);
  const double ar = cost_collective(mc, CollKind::all_reduce, Group::data, 4, 2, params * 2).time_us;
  EXPECT_NEAR(p1.time.dp_rs_us, ar, 1e-9);
  const double tail = cost_collective(mc, CollKind::all_reduce, Group::data, 4, 2,
                                      (128.0 * 64 / 2 + 16 * 64) * 2).time_us;
  EXPECT_NEAR(p1.time.dp_tail_rs_us, tail, 1e-9);
  EXPECT_DOUBLE_EQ(p1.time.dp_tail_ag_us, 0);
  EXPECT_DOUBLE_EQ(p1.time.dp_exposed_us, std::max(tail, ar - p1.time.stage_bwd_us));
  // Interleaving at pp = 2 did not exist before mid-2024.
  c = base_config();
  c.virtual_stages = 2;
  c.features = megatron_era("2022");
  EXPECT_THROW(validate_megatron(m, c, mc), UsageError);
  EXPECT_THROW(megatron_era("2019"), UsageError);
}

// Megatron's unfused attention (no flash): the full s x s products, i.e. the causal half costed
// by compute_terms once more, and GPT's attention dropout, (2a + 1) bytes per score element each
// way; selective recomputation repeats products, scores and dropout.
TEST(Megatron, UnfusedAttentionByHand) {
  Machine mc = test::synthetic_machine();
  mc.flash_attention = false;
  const GptShape m = test::small_gpt();
  MegatronConfig c = base_config();
  const ComputeTerms ct = compute_terms(m, megatron_layer_options(c), mc);
  const MegatronTime t = predict_megatron(m, c, mc).time;
  // Scores: micro-batch 2 x 2 local heads x 16 x 16 = 1024 elements; dropout 5 B each.
  const double gemm = ct.block.attn_fwd_us;  // kernel overhead 0 on this machine
  EXPECT_NEAR(t.layer_fwd_us, ct.block.fwd_us + gemm + 5120 / 1e6, 1e-12);
  EXPECT_NEAR(t.layer_bwd_us, ct.block.bwd_us + 2 * gemm + 2 * 5120 / 1e6, 1e-12);
  c.recompute = Recompute::selective;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.recompute_us, 2 * gemm + (8 * 1024 + 5120) / 1e6,
              1e-12);
  c.recompute = Recompute::full;
  EXPECT_NEAR(predict_megatron(m, c, mc).time.recompute_us, t.layer_fwd_us, 1e-12);
}
