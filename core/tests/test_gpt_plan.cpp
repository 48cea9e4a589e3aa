// The GPT plan: presets, per-rank layer geometry, validation messages and the collective list of
// one iteration, checked against counts worked out by hand from docs/algorithm.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ovb/error.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/metrics.hpp"

using namespace ovb;

namespace {

GptShape tiny() {
  GptShape m = gpt_preset("tiny");  // 2 layers, hidden 64, 4 heads
  m.seq = 32;
  m.vocab = 256;
  return m;
}

GptPlanOptions opts(const char* grid, std::int64_t batch) {
  GptPlanOptions o;
  o.grid = GridShape::parse(grid);
  o.batch = batch;
  return o;
}

std::string message_of(const GptShape& m, const GptPlanOptions& o) {
  try {
    validate_gpt_plan(m, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const CollOp& find(const std::vector<CollOp>& ops, Phase ph, int layer, const char* op,
                   CollRole role) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const CollOp& c) {
    return c.phase == ph && c.layer == layer && c.op == op && c.role == role && !c.recompute;
  });
  if (it == ops.end()) throw std::runtime_error(std::string("no op ") + op);
  return *it;
}

}  // namespace

TEST(GptPlan, PresetsAndParameterCount) {
  const GptShape m = gpt_preset("gpt-1.3b");
  EXPECT_EQ(m.layers, 24);
  EXPECT_EQ(m.hidden, 2048);
  EXPECT_EQ(m.heads, 16);
  EXPECT_EQ(m.preset, "1.3B");
  // 24*(12h^2 + 13h) + 2*V*h + S*h + 2h with h=2048, V=50304, S=2048.
  EXPECT_EQ(m.parameter_count(), 24LL * (12LL * 2048 * 2048 + 13 * 2048) + 2LL * 50304 * 2048 +
                                     2048LL * 2048 + 2 * 2048);
  EXPECT_THROW(gpt_preset("7B"), UsageError);
}

TEST(GptPlan, GeometryOfNormalAndTransposedLayers) {
  const GptShape m = tiny();
  const GridShape g = GridShape::parse("2x4x2x1");
  const auto specs = block_linears(m);
  const LinearGeom qkv = linear_geom(specs[0], g);
  EXPECT_EQ(qkv.in_dim, Dim::x);
  EXPECT_EQ(qkv.in_local, 32);   // 64 / Gx
  EXPECT_EQ(qkv.out_local, 48);  // 192 / Gy
  EXPECT_EQ(qkv.block, 32 * 48);
  EXPECT_EQ(qkv.shard, 32 * 48 / 2);  // / Gz
  EXPECT_EQ(qkv.bias_local, 48);
  const LinearGeom down = linear_geom(specs[3], g);  // 4h -> h, transposed
  EXPECT_EQ(down.in_dim, Dim::y);
  EXPECT_EQ(down.in_local, 256 / 4);
  EXPECT_EQ(down.out_local, 64 / 2);
  EXPECT_EQ(down.bias_local, 32);
  EXPECT_EQ(linear_geom(lm_head_linear(m), g).bias_local, 0);
}

TEST(GptPlan, ValidationNamesTheFailedCondition) {
  const GptShape m = tiny();
  EXPECT_EQ(message_of(m, opts("2x2x2x1", 4)), "");
  EXPECT_NE(message_of(m, opts("1x8x1x1", 8)).find("heads 4 is not divisible by Gy = 8"),
            std::string::npos);
  EXPECT_NE(message_of(m, opts("2x2x2x2", 6)).find("batch 6 is not divisible by Gdata*Gz = 4"),
            std::string::npos);
  GptShape odd = m;
  odd.hidden = 60;
  odd.heads = 4;
  EXPECT_NE(message_of(odd, opts("8x1x1x1", 1)).find("hidden 60 is not divisible by Gx*Gy = 8"),
            std::string::npos);
  GptShape v = m;
  v.vocab = 255;
  EXPECT_NE(message_of(v, opts("1x2x1x1", 1)).find("vocab 255 is not divisible by Gy = 2"),
            std::string::npos);
  GptShape h = m;
  h.heads = 5;
  EXPECT_NE(message_of(h, opts("1x1x1x1", 1)).find("hidden 64 is not divisible by heads 5"),
            std::string::npos);
  // qkv block 64*192 = 12288 is not divisible by Gz = 5.
  EXPECT_NE(message_of(m, opts("1x1x5x1", 5)).find("qkv weight block of 12288 elements"),
            std::string::npos);
}

TEST(GptPlan, OneRankIssuesNoCollectives) {
  EXPECT_TRUE(gpt_collectives(tiny(), opts("1x1x1x1", 4)).empty());
}

TEST(GptPlan, CollectivesOf2x2x2ByHand) {
  const GptShape m = tiny();
  GptPlanOptions cached = opts("2x2x2x1", 4);
  cached.cache_weights = true;  // no gathers in backward (counted below)
  const auto ops = gpt_collectives(m, cached);
  const std::int64_t T = 4 / 2 * 32;  // batch / (Gdata*Gz) * seq
  // Per block forward 10 (2 LN, 4 gathers, 4 reduces), head forward 4 (LN, gather, reduce, CE),
  // head backward 4 (dX reduce, RS, LN, Z param reduce), per block backward 11 (4 dX reduces,
  // 4 RS, 2 LN, 1 Z param reduce), step 1; Gdata = 1, so no data buckets.
  EXPECT_EQ(ops.size(), 2u * 10 + 4 + 4 + 2 * 11 + 1);

  const auto& ar = find(ops, Phase::forward, 1, "qkv", CollRole::output_reduce);
  EXPECT_EQ(ar.kind, CollKind::all_reduce);
  EXPECT_EQ(ar.group, Group::x);
  EXPECT_EQ(ar.count, T * 192 / 2);
  const auto& ag = find(ops, Phase::forward, 0, "mlp_up", CollRole::weight_gather);
  EXPECT_EQ(ag.kind, CollKind::all_gather);
  EXPECT_EQ(ag.group, Group::z);
  EXPECT_EQ(ag.count, 64 * 256 / 4 / 2);
  EXPECT_DOUBLE_EQ(ag.bytes(), 64.0 * 256 / 4 * 4);  // the gathered block, fp32
  const auto& rs = find(ops, Phase::backward, 0, "attn_out", CollRole::weight_grad_scatter);
  EXPECT_EQ(rs.count, 64 * 64 / 4 / 2);
  const auto& ln = find(ops, Phase::backward, 0, "ln1", CollRole::ln_grad_stats);
  EXPECT_EQ(ln.count, 2 * T);
  const auto& ce = find(ops, Phase::forward, -1, "loss", CollRole::ce_stats);
  EXPECT_EQ(ce.kind, CollKind::all_gather);
  EXPECT_EQ(ce.group, Group::y);
  EXPECT_EQ(ce.count, 3 * T);
  const auto& head = find(ops, Phase::forward, -1, "lm_head", CollRole::output_reduce);
  EXPECT_EQ(head.count, T * 256 / 2);
  const auto& small = find(ops, Phase::backward, 1, "block", CollRole::param_grad_reduce);
  EXPECT_EQ(small.count, 4 * 64 / 2 + 3 * 64 / 2 + 64 / 2 + 4 * 64 / 2 + 64 / 2);
  const auto& scal = ops.back();
  EXPECT_EQ(scal.group, Group::world);
  EXPECT_EQ(scal.group_size, 8);
  EXPECT_EQ(scal.count, 2);
}

TEST(GptPlan, TransposedFourHToHLayerPutsTheFactorOnTheRightAllReduce) {
  // docs/model-costs.md ("Communication"): forward over Y carries T*h/Gx, backward over X carries
  // T*4h/Gy.
  const GptShape m = tiny();
  const auto ops = gpt_collectives(m, opts("2x4x1x1", 4));
  const std::int64_t T = 4 * 32;
  const auto& fwd = find(ops, Phase::forward, 0, "mlp_down", CollRole::output_reduce);
  EXPECT_EQ(fwd.group, Group::y);
  EXPECT_EQ(fwd.count, T * 64 / 2);
  const auto& bwd = find(ops, Phase::backward, 0, "mlp_down", CollRole::input_grad_reduce);
  EXPECT_EQ(bwd.group, Group::x);
  EXPECT_EQ(bwd.count, T * 4 * 64 / 4);
}

TEST(GptPlan, RecomputeAndWeightCachingChangeTheGathers) {
  const GptShape m = tiny();
  auto count = [&](GptPlanOptions o, CollRole role, Phase ph) {
    const auto ops = gpt_collectives(m, o);
    return std::count_if(ops.begin(), ops.end(),
                         [&](const CollOp& c) { return c.role == role && c.phase == ph; });
  };
  GptPlanOptions o = opts("1x1x2x1", 2);
  const int L = 2;
  EXPECT_EQ(count(o, CollRole::weight_gather, Phase::backward), 4 * L + 1);  // default: not cached
  o.cache_weights = true;
  EXPECT_EQ(count(o, CollRole::weight_gather, Phase::backward), 0);  // cached
  o.cache_weights = false;
  EXPECT_EQ(count(o, CollRole::weight_gather, Phase::backward), 4 * L + 1);
  o.recompute = true;  // the recomputed forward gathers; the LM head is not recomputed
  EXPECT_EQ(count(o, CollRole::weight_gather, Phase::backward), 4 * L + 1);
  o.cache_weights = true;
  EXPECT_EQ(count(o, CollRole::weight_gather, Phase::backward), 0);
  GptPlanOptions x = opts("2x1x1x1", 2);
  x.recompute = true;  // forward reduces over X (QKV, MLP-up; Gy = 1) and LN stats again
  EXPECT_EQ(count(x, CollRole::output_reduce, Phase::backward), 2 * L);
  EXPECT_EQ(count(x, CollRole::ln_stats, Phase::backward), 2 * L);
}

TEST(GptPlan, DataBucketsHoldEveryGradientShardOnce) {
  const GptShape m = tiny();
  const GridShape g = GridShape::parse("2x2x2x2");
  GptPlanOptions o = opts("2x2x2x2", 8);
  const auto ops = gpt_collectives(m, o);
  std::int64_t data_total = 0;
  for (const CollOp& c : ops)
    if (c.role == CollRole::data_grad_reduce) data_total += c.count;
  // Sum of every shard of every linear plus the small parameters: the rank's whole gradient.
  std::int64_t expect = 0;
  for (const auto& s : block_linears(m)) expect += m.layers * linear_geom(s, g).shard;
  expect += linear_geom(lm_head_linear(m), g).shard;
  expect += m.layers * block_small_params(m, g) + head_small_params(m, g);
  EXPECT_EQ(data_total, expect);
}

TEST(GptPlan, MemoryTermsByHand) {
  GptShape m = tiny();  // L=2, h=64, heads 4, seq 32, V 256
  GptPlanOptions o = opts("1x1x1x1", 2);
  o.gemm_workspace_bytes = 0;
  const GptMemory mem = gpt_memory(m, o);
  const double params = m.parameter_count();  // one rank holds everything
  EXPECT_DOUBLE_EQ(mem.params, params * 4);
  EXPECT_DOUBLE_EQ(mem.grads, params * 4);
  EXPECT_DOUBLE_EQ(mem.optimizer, params * 8);
  EXPECT_DOUBLE_EQ(mem.gathered, 0);
  EXPECT_DOUBLE_EQ(mem.grad_blocks, 0);
  const double T = 64;
  // Saved per block: 3 [T,h] + qkv [T,3h] + attention [T,h] + 2 [T,4h] (fp32), then (2+2) LN
  // statistics and 4 log-sum-exp values per token.
  const double per_block = T * ((3 * 64 + 3 * 64 + 64 + 8 * 64) * 4.0 + (4 + 4) * 4.0);
  const double residual = 3 * T * 64 * 4.0;  // res[0..L]
  EXPECT_DOUBLE_EQ(mem.activations, residual + 2 * per_block);
  // LN_f out + logits + dres + dtmp + two [T,4h]; fp32 scratch 10T + 3T*Gy + T*heads; 2 scalars.
  EXPECT_DOUBLE_EQ(mem.workspace, T * (3 * 64 + 256 + 8 * 64) * 4.0 + T * (10 + 3 + 4) * 4.0 + 8);
  o.recompute = true;
  EXPECT_DOUBLE_EQ(gpt_memory(m, o).activations, residual + per_block);
  GptPlanOptions z = opts("1x1x2x1", 2);
  z.act_dtype = DType::bf16;
  z.cache_weights = true;
  const GptMemory mz = gpt_memory(m, z);
  // Cached: every block (12 h^2 per layer) and the LM head 64 x 256, bf16.
  EXPECT_DOUBLE_EQ(mz.gathered, (2 * 12.0 * 64 * 64 + 64 * 256) * 2);
  EXPECT_DOUBLE_EQ(mz.grad_blocks, 64.0 * 256 * 4);  // without ORS: the largest block, fp32
  z.ors = true;  // a ring of ors_window slots of the largest block (here MLP = LM head = 16384)
  EXPECT_EQ(dw_slots(m, z), kDefaultOrsWindow);
  EXPECT_DOUBLE_EQ(gpt_memory(m, z).grad_blocks, kDefaultOrsWindow * 16384.0 * 4);
  z.ors_window = 2;
  EXPECT_DOUBLE_EQ(gpt_memory(m, z).grad_blocks, 2 * 16384.0 * 4);
  z.ors_window = 100;  // never more slots than linears: 4 per block + the LM head
  EXPECT_EQ(dw_slots(m, z), 9);
  EXPECT_DOUBLE_EQ(gpt_memory(m, z).grad_blocks, 9 * 16384.0 * 4);
  z.ors_window = 0;
  EXPECT_THROW(validate_gpt_plan(m, z), UsageError);
  z.ors_window = kDefaultOrsWindow;
  z.ors = false;
  EXPECT_EQ(dw_slots(m, z), 1);
  EXPECT_EQ(dw_slots(m, o), 0);  // Gz = 1: dW goes straight into the gradient shard
  z.ors = true;
  // The terms by name, and the largest: what search reports for configurations that do not fit.
  const GptMemory mt = gpt_memory(m, z);
  double sum = 0;
  for (const auto& [name, bytes] : mt.terms()) sum += bytes;
  EXPECT_DOUBLE_EQ(sum, mt.total());
  EXPECT_EQ(mt.terms()[4].first, "grad_blocks");
  GptMemory big;
  big.activations = 2;
  big.params = 1;
  EXPECT_EQ(big.largest_term(), "activations");
  z.cache_weights = false;  // head + 1 slot of the MLP block (4h x h)
  EXPECT_DOUBLE_EQ(gpt_memory(m, z).gathered, (64.0 * 256 + 4 * 64 * 64) * 2);
  z.oag = true;
  z.recompute = true;  // head + (4 + 1) slots
  EXPECT_DOUBLE_EQ(gpt_memory(m, z).gathered, (64.0 * 256 + 5 * 4 * 64 * 64) * 2);
}

// Micro-batches: the geometry, the validation rule, the collective list (every micro-step's
// forward and backward, the reductions once) and the memory (activations and workspace of one
// micro-step, the iteration's tokens, the accumulation buffers), worked out by hand.
TEST(GptPlan, MicroBatches) {
  const GptShape m = tiny();               // L=2, h=64, heads 4, seq 32, V 256
  GptPlanOptions o = opts("1x1x2x2", 16);  // 4 sequences per data-and-Z shard
  EXPECT_EQ(local_batch(o), 4);
  EXPECT_EQ(micro_batch(o), 4);  // 0: the whole local batch
  EXPECT_EQ(micro_steps(o), 1);
  o.micro_batch = 1;
  EXPECT_EQ(micro_steps(o), 4);
  EXPECT_EQ(tokens_per_rank(m, o), 32);
  o.micro_batch = 3;
  EXPECT_NE(message_of(m, o).find("batch 16 is not divisible by micro-batch x Gdata x Gz = 3 x 4"),
            std::string::npos)
      << message_of(m, o);
  o.micro_batch = -1;
  EXPECT_NE(message_of(m, o).find("micro-batch must be >= 1"), std::string::npos);

  // The list: S copies of one micro-step's ops, then the reductions of the last and the step.
  GptPlanOptions one = opts("2x1x2x2", 4);  // one sequence per shard, one micro-step
  GptPlanOptions four = opts("2x1x2x2", 16);
  four.micro_batch = 1;
  four.ors = true;
  one.ors = true;
  const auto a = gpt_collectives(m, one), b = gpt_collectives(m, four);
  std::map<CollRole, int> na, nb;
  for (const CollOp& c : a) ++na[c.role];
  for (const CollOp& c : b) ++nb[c.role];
  for (const auto& [role, n] : na) {
    const bool once = role == CollRole::param_grad_reduce || role == CollRole::data_grad_reduce ||
                      role == CollRole::scalars;
    EXPECT_EQ(nb[role], once ? n : 4 * n) << name_of(role);
  }
  EXPECT_EQ(nb.size(), na.size());
  for (const CollOp& c : b) {
    if (c.role == CollRole::data_grad_reduce || c.role == CollRole::param_grad_reduce) {
      EXPECT_EQ(c.micro_step, 3) << describe(c);  // in the last micro-step
    }
    if (c.phase == Phase::step) {
      EXPECT_EQ(c.micro_step, 0);
    }
  }
  // The same counts as one micro-step: T is per micro-step.
  EXPECT_EQ(find(b, Phase::forward, 0, "qkv", CollRole::output_reduce).count,
            find(a, Phase::forward, 0, "qkv", CollRole::output_reduce).count);
  const std::size_t per_step =
      a.size() - static_cast<std::size_t>(na[CollRole::param_grad_reduce] +
                                          na[CollRole::data_grad_reduce] + na[CollRole::scalars]);
  EXPECT_EQ(std::count_if(b.begin(), b.end(), [](const CollOp& c) { return c.micro_step == 2; }),
            static_cast<std::ptrdiff_t>(per_step));
  EXPECT_EQ(describe(b.front()).rfind("forward", 0), 0u);
  EXPECT_EQ(describe(b[per_step]).rfind("m1 forward", 0), 0u) << describe(b[per_step]);

  // Memory: activations as for one sequence per shard; workspace too, but for the iteration's
  // tokens and targets (4 x 32 int32 each instead of 32) and the bias scratch (4h floats).
  one.gemm_workspace_bytes = four.gemm_workspace_bytes = 0;
  const GptMemory ma = gpt_memory(m, one), mb = gpt_memory(m, four);
  EXPECT_DOUBLE_EQ(mb.activations, ma.activations);
  EXPECT_DOUBLE_EQ(mb.workspace, ma.workspace + 2 * (4 - 1) * 32 * 4.0 + 4 * 64 * 4.0);
  EXPECT_DOUBLE_EQ(mb.grad_blocks, ma.grad_blocks);  // Gz > 1: the ring as before
  EXPECT_DOUBLE_EQ(mb.params + mb.grads + mb.optimizer, ma.params + ma.grads + ma.optimizer);
  // Gz = 1: one slot of the largest block (the LM head's 64 x 256 here) for the dW to be added.
  GptPlanOptions flat = opts("1x1x1x2", 8);
  EXPECT_EQ(dw_slots(m, flat), 0);
  flat.micro_batch = 2;
  EXPECT_EQ(dw_slots(m, flat), 1);
  EXPECT_DOUBLE_EQ(gpt_memory(m, flat).grad_blocks, 64.0 * 256 * 4);
}

// The sharded optimizer on tiny (L = 2, h = 64, seq 32, V = 256) over Gdata = 3: a block bucket
// holds 12 h^2 + 13 h = 49984 elements (3 does not divide it: chunks of 16662, 2 of padding),
// the head bucket 2 V h + 2 h + seq h = 34944 (chunks of 11648, no padding).
TEST(GptPlan, ShardedOptimizerByHand) {
  const GptShape m = tiny();
  GptPlanOptions o = opts("1x1x1x3", 3);
  o.gemm_workspace_bytes = 0;
  EXPECT_EQ(block_bucket_count(m, o.grid), 49984);
  EXPECT_EQ(head_bucket_count(m, o.grid), 34944);
  const GptMemory plain = gpt_memory(m, o);
  o.shard_optimizer = true;
  EXPECT_TRUE(optimizer_sharded(o));
  EXPECT_EQ(data_chunk(49984, o), 16662);
  EXPECT_EQ(bucket_extent(49984, o), 49986);
  EXPECT_EQ(data_chunk(34944, o), 11648);
  EXPECT_EQ(bucket_extent(34944, o), 34944);
  const double flat = 2 * 49986.0 + 34944, own = 2 * 16662.0 + 11648;
  const GptMemory mem = gpt_memory(m, o);
  EXPECT_DOUBLE_EQ(mem.params, flat * 4);  // fp32: the working copy, all of it, is the master
  EXPECT_DOUBLE_EQ(mem.grads, flat * 4);
  EXPECT_DOUBLE_EQ(mem.optimizer, own * 8);
  EXPECT_DOUBLE_EQ(plain.optimizer, (2 * 49984.0 + 34944) * 8);
  EXPECT_DOUBLE_EQ(mem.activations, plain.activations);
  EXPECT_DOUBLE_EQ(mem.workspace, plain.workspace);
  o.act_dtype = DType::bf16;  // bf16 working copy of every bucket + fp32 master of the chunks
  EXPECT_DOUBLE_EQ(gpt_memory(m, o).params, flat * 2 + own * 4);

  // Collectives: each bucket reduce-scattered over data, then all-gathered in the step.
  o.act_dtype = DType::f32;
  const auto ops = gpt_collectives(m, o);
  const CollOp& rs = find(ops, Phase::backward, 1, "block", CollRole::data_grad_reduce);
  EXPECT_EQ(rs.kind, CollKind::reduce_scatter);
  EXPECT_EQ(rs.count, 16662);
  EXPECT_EQ(rs.group, Group::data);
  EXPECT_EQ(find(ops, Phase::backward, -1, "head", CollRole::data_grad_reduce).count, 11648);
  int gathers = 0;
  for (const CollOp& c : ops)
    if (c.role == CollRole::param_gather) {
      EXPECT_EQ(c.phase, Phase::step);
      EXPECT_EQ(c.kind, CollKind::all_gather);
      EXPECT_EQ(c.count, c.layer < 0 ? 11648 : 16662);
      ++gathers;
    }
  EXPECT_EQ(gathers, 3);
  // The step's all-gathers come after the scalars, buckets in layout order.
  EXPECT_EQ(ops.back().op, "head");
  EXPECT_EQ(ops[ops.size() - 4].role, CollRole::scalars);

  // Gdata = 1: nothing to split, the plan is the unsharded one.
  GptPlanOptions one = opts("1x1x1x1", 3);
  one.shard_optimizer = true;
  EXPECT_FALSE(optimizer_sharded(one));
  EXPECT_EQ(gpt_collectives(m, one), gpt_collectives(m, opts("1x1x1x1", 3)));
  EXPECT_DOUBLE_EQ(gpt_memory(m, one).total(), gpt_memory(m, opts("1x1x1x1", 3)).total());
}

// Sharded gradients (ZeRO-2) on the same tiny model over Gz = 2, Gdata = 3 (batch 12, micro-batch
// 1: 2 micro-steps). Per rank a block bucket holds 12 h^2 / 2 + 13 h = 25408 elements (chunks of
// 8470, 2 of padding: extent 25410), the head bucket the LM head's shard V h / 2 = 8192 + final
// LN 2 h + wte V h + wpe seq h = 8192 + 128 + 16384 + 2048 = 26752 (chunks of 8918, 2 of
// padding: extent 26754). The rank keeps its chunks, 2 * 8470 + 8918 = 25858
// floats, plus the head bucket's buffer (26754) and one block-bucket buffer (25410; two with ORS).
TEST(GptPlan, ShardedGradientsByHand) {
  const GptShape m = tiny();
  GptPlanOptions o = opts("1x1x2x3", 12);
  o.micro_batch = 1;
  o.gemm_workspace_bytes = 0;
  o.shard_optimizer = true;
  EXPECT_EQ(block_bucket_count(m, o.grid), 25408);
  EXPECT_EQ(head_bucket_count(m, o.grid), 26752);
  EXPECT_EQ(micro_steps(o), 2);
  const GptMemory zero1 = gpt_memory(m, o);
  EXPECT_DOUBLE_EQ(zero1.grads, (2 * 25410.0 + 26754) * 4);  // every bucket, padded
  o.shard_gradients = true;
  EXPECT_TRUE(gradients_sharded(o));
  EXPECT_EQ(grad_bucket_slots(o), 1);
  const GptMemory zero2 = gpt_memory(m, o);
  EXPECT_DOUBLE_EQ(zero2.grads, (25858.0 + 26754 + 25410) * 4);
  o.ors = true;
  EXPECT_EQ(grad_bucket_slots(o), 2);
  EXPECT_DOUBLE_EQ(gpt_memory(m, o).grads, (25858.0 + 26754 + 2 * 25410) * 4);
  o.ors = false;
  // Everything else as with the sharded optimizer alone (Gz > 1: the dW ring is unchanged; the
  // bias scratch is gone: nothing is accumulated in full).
  EXPECT_DOUBLE_EQ(zero2.params, zero1.params);
  EXPECT_DOUBLE_EQ(zero2.optimizer, zero1.optimizer);
  EXPECT_DOUBLE_EQ(zero2.grad_blocks, zero1.grad_blocks);
  EXPECT_DOUBLE_EQ(zero2.activations, zero1.activations);
  EXPECT_DOUBLE_EQ(zero2.workspace, zero1.workspace - 4 * 64 * 4.0);  // MLP-up bias, 4h floats
  EXPECT_FALSE(accumulates_full_gradients(o));

  // Collectives: the Z small-parameter all-reduce and the data reduce-scatter of every bucket in
  // both micro-steps (with ZeRO-1 in the last only); the rest is the same list.
  const auto ops2 = gpt_collectives(m, o);
  GptPlanOptions o1 = o;
  o1.shard_gradients = false;
  const auto ops1 = gpt_collectives(m, o1);
  using Key = std::pair<CollRole, int>;
  std::map<Key, int> n1, n2;
  for (const CollOp& c : ops1) ++n1[Key(c.role, c.micro_step)];
  for (const CollOp& c : ops2) ++n2[Key(c.role, c.micro_step)];
  for (CollRole r : {CollRole::data_grad_reduce, CollRole::param_grad_reduce}) {
    EXPECT_EQ(n1[Key(r, 0)], 0) << name_of(r);
    EXPECT_EQ(n1[Key(r, 1)], 3) << name_of(r);  // 2 blocks and the head
    EXPECT_EQ(n2[Key(r, 0)], 3) << name_of(r);
    EXPECT_EQ(n2[Key(r, 1)], 3) << name_of(r);
  }
  EXPECT_EQ(ops2.size(), ops1.size() + 6);
  for (const CollOp& c : ops2)
    if (c.role == CollRole::data_grad_reduce) {
      EXPECT_EQ(c.kind, CollKind::reduce_scatter);
      EXPECT_EQ(c.count, c.layer < 0 ? 8918 : 8470) << describe(c);
    }

  // Gz = 1 with micro-steps: no dW slot to accumulate through.
  GptPlanOptions flat = opts("1x1x1x2", 8);
  flat.micro_batch = 2;
  flat.shard_optimizer = flat.shard_gradients = true;
  EXPECT_EQ(dw_slots(m, flat), 0);
  // Without the sharded optimizer: refused, naming both options.
  GptPlanOptions bad = opts("1x1x1x2", 8);
  bad.shard_gradients = true;
  EXPECT_NE(message_of(m, bad).find("--shard-gradients"), std::string::npos) << message_of(m, bad);
  EXPECT_NE(message_of(m, bad).find("--shard-optimizer"), std::string::npos);
  // Gdata = 1: nothing to split.
  GptPlanOptions one = opts("1x1x2x1", 4);
  one.shard_optimizer = one.shard_gradients = true;
  EXPECT_FALSE(gradients_sharded(one));
  EXPECT_EQ(gpt_collectives(m, one), gpt_collectives(m, opts("1x1x2x1", 4)));
}

// ---- Llama ----

namespace {

// Parameters of a Llama as published (weights only: no biases), from the architecture's formula,
// written out here independently of GptShape: per block the Q, K, V, O projections
// (h*h + 2*h*kv*d + h*h), the SwiGLU's gate, up and down (3*h*f) and two RMSNorm gains; the
// token embedding, the final gain and the untied output layer.
std::int64_t llama_params(std::int64_t L, std::int64_t h, std::int64_t heads, std::int64_t kv,
                          std::int64_t f, std::int64_t V) {
  const std::int64_t d = h / heads;
  const std::int64_t attention = h * h + 2 * h * kv * d + h * h;
  return L * (attention + 3 * h * f + 2 * h) + V * h + h + h * V;
}

GptShape llama_tiny() {
  GptShape m = gpt_preset("llama-tiny");  // 2 layers, hidden 64, 4 heads, 2 K/V heads, ffn 176
  m.seq = 32;
  m.vocab = 256;
  return m;
}

}  // namespace

TEST(GptPlan, Llama3PresetsHaveThePublishedShapesAndParameterCounts) {
  struct Published {
    const char* name;
    std::int64_t L, h, heads, f;
    double billions;  // the published size, rounded as Meta reports it
  };
  for (const Published& p : {Published{"llama3-8B", 32, 4096, 32, 14336, 8.03},
                             Published{"llama3-70B", 80, 8192, 64, 28672, 70.6},
                             Published{"llama3-405B", 126, 16384, 128, 53248, 405.9}}) {
    const GptShape m = gpt_preset(p.name);
    EXPECT_EQ(m.arch, Arch::llama) << p.name;
    EXPECT_EQ(m.layers, p.L) << p.name;
    EXPECT_EQ(m.hidden, p.h) << p.name;
    EXPECT_EQ(m.heads, p.heads) << p.name;
    EXPECT_EQ(m.kv(), 8) << p.name;
    EXPECT_EQ(m.ffn(), p.f) << p.name;
    EXPECT_EQ(m.vocab, 128256) << p.name;
    EXPECT_EQ(m.rope_theta, 500000.0) << p.name;
    EXPECT_EQ(m.head_dim(), 128) << p.name;
    const std::int64_t n = m.parameter_count();
    EXPECT_EQ(n, llama_params(p.L, p.h, p.heads, 8, p.f, 128256)) << p.name;
    // Rounds to the published figure (8.03B, 70.6B, 405.9B).
    const double scale = p.billions < 10 ? 100 : 10;
    EXPECT_EQ(std::round(static_cast<double>(n) / 1e9 * scale) / scale, p.billions) << p.name;
    validate_gpt_shape(m);
  }
  // The model FLOP uses the Llama block's weights (q, o h^2; k, v h*kv*d; 3 h f).
  const GptShape m8 = gpt_preset("llama3-8B");
  EXPECT_EQ(m8.block_linear_params(), 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 3LL * 4096 * 14336);
  EXPECT_DOUBLE_EQ(m8.model_flop(2),
                   metrics::transformer_model_flop(2, 2048, 32, 4096, 128256,
                                                   static_cast<double>(m8.block_linear_params())));
  // The exact 8B count (the released checkpoint's 8,030,261,248).
  EXPECT_EQ(gpt_preset("llama3-8b").parameter_count(), 8030261248LL);
}

TEST(GptPlan, LlamaLinearsAndGeometry) {
  const GptShape m = llama_tiny();  // d = 16, q 64 + k 32 + v 32 = 128 rows
  const auto specs = block_linears(m);
  EXPECT_EQ(specs[0].out, 128);
  EXPECT_EQ(specs[0].in, 64);
  EXPECT_EQ(specs[1].out, 64);
  EXPECT_EQ(specs[2].out, 2 * 176);  // gate and up
  EXPECT_EQ(specs[3].in, 176);
  for (const LinearSpec& s : specs) EXPECT_FALSE(s.bias);
  EXPECT_EQ(m.block_linear_params(), 64 * 128 + 64 * 64 + 3 * 64 * 176);
  const GridShape g = GridShape::parse("2x2x2x1");
  const LinearGeom qkv = linear_geom(specs[0], g);
  EXPECT_EQ(qkv.out_local, 64);  // one K/V group per Y rank: 2 q heads + k + v, 16 each
  EXPECT_EQ(qkv.bias_local, 0);
  EXPECT_EQ(linear_geom(specs[2], g).out_local, 176);  // 88 (gate, up) pairs
  EXPECT_EQ(linear_geom(specs[3], g).in_local, 88);
  EXPECT_EQ(block_small_params(m, g), 2 * 32);        // two RMSNorm gains
  EXPECT_EQ(head_small_params(m, g), 32 + 256 * 32);  // final gain, token embedding
}

TEST(GptPlan, LlamaValidationNamesTheFailedCondition) {
  const GptShape m = llama_tiny();
  EXPECT_EQ(message_of(m, opts("2x2x2x1", 4)), "");
  EXPECT_NE(message_of(m, opts("1x4x1x1", 4))
                .find("kv-heads 2 is not divisible by Gy = 4 (Y splits whole K/V groups"),
            std::string::npos);
  GptShape k = m;
  k.kv_heads = 3;
  EXPECT_NE(message_of(k, opts("1x1x1x1", 1)).find("heads 4 is not divisible by kv-heads 3"),
            std::string::npos);
  GptShape f = m;
  f.ffn_hidden = 177;
  EXPECT_NE(message_of(f, opts("1x2x1x1", 2)).find("ffn-hidden 177 is not divisible by Gy = 2"),
            std::string::npos);
  f.ffn_hidden = 0;
  EXPECT_NE(message_of(f, opts("1x1x1x1", 1)).find("give the SwiGLU width with --ffn-hidden"),
            std::string::npos);
  GptShape odd = m;  // head dim 64/64 = 1: RoPE needs pairs
  odd.heads = 64;
  odd.kv_heads = 64;
  EXPECT_NE(message_of(odd, opts("1x1x1x1", 1)).find("head dimension 1 is odd"), std::string::npos);
  GptShape gpt = tiny();
  gpt.kv_heads = 2;
  EXPECT_NE(message_of(gpt, opts("1x1x1x1", 1)).find("needs --arch llama"), std::string::npos);
  gpt.kv_heads = 0;
  gpt.ffn_hidden = 100;
  EXPECT_NE(message_of(gpt, opts("1x1x1x1", 1)).find("differs from 4*hidden"), std::string::npos);
}

TEST(GptPlan, LlamaCollectivesOf2x2x2ByHand) {
  const GptShape m = llama_tiny();
  const auto ops = gpt_collectives(m, opts("2x2x2x1", 4));
  const std::int64_t T = 4 / 2 * 32;  // 64 tokens per rank
  // RMSNorm: one statistic per token, forward and backward.
  EXPECT_EQ(find(ops, Phase::forward, 0, "ln1", CollRole::ln_stats).count, T);
  EXPECT_EQ(find(ops, Phase::backward, 1, "ln2", CollRole::ln_grad_stats).count, T);
  EXPECT_EQ(find(ops, Phase::forward, -1, "ln_f", CollRole::ln_stats).count, T);
  // QKV: 64 local output rows (q of 2 heads + k + v), reduced over X; its dX [T, 32] over Y.
  EXPECT_EQ(find(ops, Phase::forward, 0, "qkv", CollRole::output_reduce).count, T * 64);
  EXPECT_EQ(find(ops, Phase::backward, 0, "qkv", CollRole::input_grad_reduce).count, T * 32);
  EXPECT_EQ(find(ops, Phase::forward, 0, "qkv", CollRole::weight_gather).count, 32 * 64 / 2);
  // MLP-up: gate|up 176 local rows; MLP-down's dX [T, 88] over Y.
  EXPECT_EQ(find(ops, Phase::forward, 0, "mlp_up", CollRole::output_reduce).count, T * 176);
  EXPECT_EQ(find(ops, Phase::backward, 0, "mlp_down", CollRole::input_grad_reduce).count, T * 88);
  // Buckets: weight shards + 2 gains; head: LM head shard + final gain + token embedding.
  const std::int64_t shards = (32 * 64 + 32 * 32 + 32 * 176 + 88 * 32) / 2;
  EXPECT_EQ(find(ops, Phase::backward, 0, "block", CollRole::param_grad_reduce).count, 64);
  const auto data = gpt_collectives(m, opts("2x2x1x2", 4));
  EXPECT_EQ(find(data, Phase::backward, 0, "block", CollRole::data_grad_reduce).count,
            2 * shards + 64);
  EXPECT_EQ(find(data, Phase::backward, -1, "head", CollRole::data_grad_reduce).count,
            32 * 128 + 32 + 256 * 32);
}

TEST(GptPlan, LlamaMemoryTermsByHand) {
  GptShape m = llama_tiny();  // L=2, h=64, heads 4, kv 2, ffn 176, seq 32, V 256
  GptPlanOptions o = opts("1x1x1x1", 2);
  o.gemm_workspace_bytes = 0;
  const GptMemory mem = gpt_memory(m, o);
  EXPECT_DOUBLE_EQ(mem.params, m.parameter_count() * 4.0);
  const double T = 64;
  // Saved per block: 3 [T,h] + qkv [T,128] + attention [T,h] + gate|up [T,352] + SwiGLU [T,176]
  // (fp32), then 2 norm slots of 2 floats and 4 log-sum-exp values per token.
  const double per_block = T * ((3 * 64 + 128 + 64 + 352 + 176) * 4.0 + (4 + 4) * 4.0);
  EXPECT_DOUBLE_EQ(mem.activations, 3 * T * 64 * 4.0 + 2 * per_block);
  // LN_f out + logits + dres + dtmp + [T, max(352, 128)] + [T, max(176, 64)].
  EXPECT_DOUBLE_EQ(mem.workspace,
                   T * (3 * 64 + 256 + 352 + 176) * 4.0 + T * (10 + 3 + 4) * 4.0 + 8);
}
