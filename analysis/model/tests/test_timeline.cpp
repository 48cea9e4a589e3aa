// Overlap term: without flags every collective is exposed; iteration = compute + interference +
// exposed; OAR hides the dX all-reduce behind the dW GEMM (checked term by term); ORS and OAG
// hide reduce-scatters and all-gathers; interference stretches what overlaps; the sharded
// optimizer's step all-gathers.
#include <gtest/gtest.h>

#include <algorithm>

#include "helpers.hpp"
#include "ovb/model/predict.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

double total_comm(const Timeline& t) {
  double s = 0;
  for (const auto& g : t.comm_us)
    for (double v : g) s += v;
  return s;
}

GptPlanOptions flags(const char* grid, std::int64_t batch, const char* overlap) {
  GptPlanOptions o = test::plan_on(grid, batch);
  parse_overlap(overlap, o);
  return o;
}

}  // namespace

TEST(Timeline, WithoutFlagsEverythingIsExposed) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = test::small_gpt(3);
  for (const char* grid : {"2x2x2x1", "1x2x2x2", "4x1x1x2", "2x2x1x2:y,x,z"}) {
    GptPlanOptions o = flags(grid, 8, "none");
    for (bool rc : {false, true}) {
      o.recompute = rc;
      const Prediction p = predict(m, o, mc);
      const Timeline& t = p.timeline;
      EXPECT_NEAR(t.exposed_total_us(), total_comm(t), 1e-9 * total_comm(t)) << grid;
      EXPECT_DOUBLE_EQ(t.interference_us, 0);
      EXPECT_NEAR(t.compute_us, p.compute.total_us(m.layers, rc), 1e-6) << grid;
      EXPECT_NEAR(t.iteration_us, t.compute_us + total_comm(t), 1e-6) << grid;
    }
  }
}

// Micro-steps: compute and every collective but the once-per-iteration reductions run once per
// micro-step. Without flags nothing overlaps, so the iteration is S micro-steps of the one-step
// run minus (S - 1) times its reductions and step, plus the accumulation: an independent sum of
// the one-micro-step run's terms.
TEST(Timeline, MicroStepsRepeatEverythingButTheReductions) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = test::small_gpt(3);
  for (const char* grid : {"2x1x2x2", "1x2x1x2", "2x2x2x1"}) {
    const GridShape g = GridShape::parse(grid);
    const std::int64_t shards = static_cast<std::int64_t>(g.gdata) * g.gz;
    GptPlanOptions one = flags(grid, shards, "none");  // one sequence per rank: one step
    GptPlanOptions four = flags(grid, 4 * shards, "none");
    four.micro_batch = 1;  // four micro-steps of the same size
    const Prediction a = predict(m, one, mc), b = predict(m, four, mc);
    ASSERT_EQ(micro_steps(four), 4);
    EXPECT_EQ(b.compute.tokens, a.compute.tokens) << grid;
    double once_us = 0;  // reductions and the step's all-reduce
    for (const CostedOp& c : costed_collectives(m, one, mc))
      if (once_per_iteration(c.op)) once_us += c.cost.time_us;
    const double accumulate =
        3 * (b.compute.block.accumulate_us * m.layers + b.compute.head.accumulate_us);
    EXPECT_GT(accumulate, 0) << grid;
    const double opt = a.compute.optimizer.time_us;
    EXPECT_NEAR(b.timeline.compute_us, 4 * (a.timeline.compute_us - opt) + opt + accumulate,
                1e-6 * b.timeline.compute_us)
        << grid;
    EXPECT_NEAR(b.timeline.iteration_us,
                4 * (a.timeline.iteration_us - once_us - opt) + once_us + opt + accumulate,
                1e-6 * b.timeline.iteration_us)
        << grid;
    EXPECT_NEAR(b.timeline.compute_us, b.compute.total_us(m.layers, false), 1e-6) << grid;
    EXPECT_DOUBLE_EQ(b.memory.activations, a.memory.activations) << grid;
  }
}

TEST(Timeline, IterationIsComputePlusInterferencePlusExposed) {
  const Machine mc = load_machine("perlmutter-a100");  // interference 0.19 / 0.1
  const GptShape m = test::small_gpt(4);
  for (const char* ov : {"oar", "ors", "oag", "oar,ors", "all"})
    for (std::int64_t mb : {0, 1}) {  // one micro-step, two
      GptPlanOptions o = flags("2x2x2x2", 8, ov);
      o.micro_batch = mb;
      const Prediction p = predict(m, o, mc);
      const Timeline& t = p.timeline;
      EXPECT_NEAR(t.iteration_us, t.compute_us + t.interference_us + t.exposed_total_us(), 1e-6)
          << ov << " micro-batch " << mb;
      EXPECT_LE(t.exposed_total_us(), total_comm(t) * (1 + mc.comm_slowdown) + 1e-9) << ov;
    }
}

TEST(Timeline, OarHidesTheDxAllReduceBehindTheDwGemm) {
  // No interference: each backward dX all-reduce is exposed by max(0, t_allreduce - t_dW); every
  // other collective stays exposed in full.
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt(3);
  const GptPlanOptions none = flags("2x2x1x1", 4, "none"), oar = flags("2x2x1x1", 4, "oar");
  const Prediction a = predict(m, none, mc), b = predict(m, oar, mc);
  double saved = 0;
  auto hide = [&](const LinearComm& c, const LinearCompute& k, double times) {
    saved += times * std::min(c.in_grad.us(), k.dw.time_us);
  };
  for (int i = 0; i < 4; ++i) hide(b.comm.block(0).lin[i], b.compute.block.lin[i], m.layers);
  hide(b.comm.head.lm_head, b.compute.head.lm_head, 1);
  EXPECT_GT(saved, 0);
  EXPECT_NEAR(b.timeline.exposed_total_us(), a.timeline.exposed_total_us() - saved, 1e-6);
  EXPECT_NEAR(b.timeline.iteration_us, a.timeline.iteration_us - saved, 1e-6);
}

TEST(Timeline, OrsAndOagHideGradientReductionsAndGathers) {
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt(6);
  const Prediction none = predict(m, flags("2x1x2x2", 8, "none"), mc);
  const Prediction ors = predict(m, flags("2x1x2x2", 8, "ors"), mc);
  const Prediction oag = predict(m, flags("2x1x2x2", 8, "oag"), mc);
  auto exposed = [](const Prediction& p, Group g, CollKind k) {
    return p.timeline.exposed_us[static_cast<int>(g)][static_cast<int>(k)];
  };
  const double rs = exposed(none, Group::z, CollKind::reduce_scatter);
  const double dp = exposed(none, Group::data, CollKind::all_reduce);
  const double ag = exposed(none, Group::z, CollKind::all_gather);
  ASSERT_GT(rs, 0);
  ASSERT_GT(ag, 0);
  EXPECT_LT(exposed(ors, Group::z, CollKind::reduce_scatter), rs);
  EXPECT_LT(exposed(ors, Group::data, CollKind::all_reduce), dp);
  EXPECT_DOUBLE_EQ(exposed(ors, Group::z, CollKind::all_gather), ag);  // untouched
  EXPECT_LT(exposed(oag, Group::z, CollKind::all_gather), ag);
  // The first all-gather of the forward cannot be prefetched: it stays exposed.
  EXPECT_GE(exposed(oag, Group::z, CollKind::all_gather), oag.comm.block(0).lin[0].gather.us());
  EXPECT_DOUBLE_EQ(exposed(oag, Group::z, CollKind::reduce_scatter), rs);
}

TEST(Timeline, InterferenceStretchesOverlappedWork) {
  nlohmann::json j = test::synthetic_machine_json();
  const Machine clean = machine_from_json(j, "t");
  j["interference"] = {{"compute_slowdown", 0.3}, {"comm_slowdown", 0.5}};
  const Machine slowed = machine_from_json(j, "t");
  const GptShape m = test::small_gpt(4);
  const GptPlanOptions o = flags("2x2x2x1", 4, "all");
  const Prediction a = predict(m, o, clean), b = predict(m, o, slowed);
  EXPECT_DOUBLE_EQ(a.timeline.interference_us, 0);
  EXPECT_GT(b.timeline.interference_us, 0);
  EXPECT_GT(b.timeline.iteration_us, a.timeline.iteration_us);
  EXPECT_DOUBLE_EQ(b.timeline.compute_us, a.timeline.compute_us);
  // Without overlap flags interference never applies.
  const Prediction c = predict(m, flags("2x2x2x1", 4, "none"), slowed);
  EXPECT_DOUBLE_EQ(c.timeline.interference_us, 0);
}

// ORS with a ring of dW blocks: before each dW GEMM the compute stream waits for the reduce-scatter
// issued `ors_window` layers earlier. A window of every linear (4L+1) never waits, so any larger
// one predicts the same; smaller windows wait for more of the reduce-scatters. They are not
// always slower: the reduce-scatters left in flight share the NICs with the blocking Z
// all-gathers (Z spans nodes here), which then take longer than alone.
TEST(Timeline, OrsWindowBoundsTheReduceScattersInFlight) {
  const Machine mc = load_machine("perlmutter-a100");
  // Large weight blocks over a wide Z group: the reduce-scatters take longer than a layer's GEMMs.
  GptShape m;
  m.layers = 4;
  m.hidden = 8192;
  m.heads = 64;
  auto at = [&](int window) {
    GptPlanOptions o = flags("1x1x64x1", 64, "ors");
    o.ors_window = window;
    return predict(m, o, mc).timeline;
  };
  const int z = static_cast<int>(Group::z), rs = static_cast<int>(CollKind::reduce_scatter),
            ag = static_cast<int>(CollKind::all_gather);
  const Timeline all = at(static_cast<int>(4 * m.layers + 1));
  EXPECT_DOUBLE_EQ(at(1000).iteration_us, all.iteration_us);
  double previous = all.exposed_us[z][rs];
  for (int w : {16, 8, 4, 2, 1}) {
    const Timeline t = at(w);
    EXPECT_NEAR(t.iteration_us, t.compute_us + t.interference_us + t.exposed_total_us(), 1e-6) << w;
    EXPECT_GE(t.exposed_us[z][rs], previous - 1e-6) << "window " << w;
    previous = t.exposed_us[z][rs];
  }
  // The set of collectives (and their total time) does not depend on the window.
  EXPECT_DOUBLE_EQ(total_comm(at(1)), total_comm(all));
  // Window 1 makes each reduce-scatter finish before the next dW GEMM: more of it is exposed.
  EXPECT_GT(at(1).exposed_us[z][rs], all.exposed_us[z][rs]);
  // Without flags for them the all-gathers are waited for at their issue: exposed in full, and
  // more than alone while reduce-scatters are in flight beside them.
  EXPECT_GT(all.exposed_us[z][ag], all.comm_us[z][ag]);
}

// The sharded optimizer: AdamW on the rank's chunks (optimizer term divided by about Gdata), the
// data reduce-scatters in place of the all-reduces, and the step's all-gathers - blocking
// without ORS (every collective exposed), behind the following buckets' updates with it.
TEST(Timeline, ShardedOptimizerGathersTheUpdatedWeights) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = test::small_gpt(3);
  const int data = static_cast<int>(Group::data);
  const int rs = static_cast<int>(CollKind::reduce_scatter),
            ag = static_cast<int>(CollKind::all_gather),
            ar = static_cast<int>(CollKind::all_reduce);
  for (const char* ov : {"none", "all"}) {
    GptPlanOptions o = flags("1x2x1x4", 8, ov);
    const Prediction plain = predict(m, o, mc);
    o.shard_optimizer = true;
    const Prediction p = predict(m, o, mc);
    const Timeline& t = p.timeline;
    EXPECT_NEAR(p.compute.optimizer.params * 4, plain.compute.optimizer.params,
                0.001 * plain.compute.optimizer.params);
    EXPECT_EQ(t.count[data][ar], 0) << ov;
    EXPECT_EQ(t.count[data][rs], m.layers + 1) << ov;
    EXPECT_EQ(t.count[data][ag], m.layers + 1) << ov;
    EXPECT_EQ(plain.timeline.count[data][ag], 0) << ov;
    EXPECT_NEAR(t.iteration_us, t.compute_us + t.interference_us + t.exposed_total_us(), 1e-6)
        << ov;
    if (std::string(ov) == "none") {
      EXPECT_NEAR(t.exposed_total_us(), total_comm(t), 1e-9 * total_comm(t));
    } else {
      // Only AdamW (stretched by interference) hides the all-gathers, and some of it does.
      const double stretched = t.comm_us[data][ag] * (1 + mc.comm_slowdown);
      EXPECT_LT(t.exposed_us[data][ag], stretched);
      EXPECT_GE(t.exposed_us[data][ag],
                stretched - p.compute.optimizer.time_us - t.interference_us - 1e-9);
    }
  }
}

// Sharded gradients (ZeRO-2) with 4 micro-steps: every micro-step issues each bucket's Z
// small-parameter all-reduce and data reduce-scatter (4x the ZeRO-1 count, 4x its time), and
// adds each bucket's chunk into the shard in the 3 later ones instead of the per-layer
// accumulation; without overlap everything is exposed, and the timeline's compute is the
// compute term's.
TEST(Timeline, ShardedGradientsReduceEveryMicroStep) {
  const Machine mc = load_machine("perlmutter-a100");
  // 8 blocks: enough that the two ring buffers of ORS weigh less than the chunks save.
  const GptShape m = test::small_gpt(8);
  const int data = static_cast<int>(Group::data), z = static_cast<int>(Group::z);
  const int rs = static_cast<int>(CollKind::reduce_scatter),
            ar = static_cast<int>(CollKind::all_reduce);
  for (const char* ov : {"none", "all"}) {
    GptPlanOptions o = flags("1x1x2x2", 16, ov);
    o.micro_batch = 1;
    o.shard_optimizer = true;
    const Prediction zero1 = predict(m, o, mc);
    o.shard_gradients = true;
    const Prediction zero2 = predict(m, o, mc);
    ASSERT_EQ(micro_steps(o), 4);
    const Timeline &t1 = zero1.timeline, &t2 = zero2.timeline;
    EXPECT_EQ(t1.count[data][rs], m.layers + 1) << ov;
    EXPECT_EQ(t2.count[data][rs], 4 * (m.layers + 1)) << ov;
    EXPECT_EQ(t2.count[z][ar], 4 * t1.count[z][ar]) << ov;
    EXPECT_NEAR(t2.comm_us[data][rs], 4 * t1.comm_us[data][rs], 1e-9 * t2.comm_us[data][rs]) << ov;
    // The chunk additions: a block bucket's chunk and the head bucket's, fp32, read two write one.
    const double chunk_us =
        mem_term(mc, 12.0 * data_chunk(block_bucket_count(m, o.grid), o), MemClass::grad_accum)
            .time_us;
    EXPECT_DOUBLE_EQ(zero2.compute.block.accumulate_us, chunk_us);
    for (const LinearCompute& c : zero2.compute.block.lin) EXPECT_EQ(c.accumulate.time_us, 0);
    EXPECT_NEAR(t2.compute_us, zero2.compute.total_us(m.layers, false), 1e-6) << ov;
    EXPECT_NEAR(t2.iteration_us, t2.compute_us + t2.interference_us + t2.exposed_total_us(), 1e-6)
        << ov;
    if (std::string(ov) == "none") {
      EXPECT_NEAR(t2.exposed_total_us(), total_comm(t2), 1e-9 * total_comm(t2));
    }
    // Memory: the gradients shrink to the chunks and the bucket buffers, nothing else changes.
    EXPECT_LT(zero2.memory.grads, zero1.memory.grads) << ov;
    EXPECT_DOUBLE_EQ(zero2.memory.optimizer, zero1.memory.optimizer);
  }
}
