// The costed collectives are exactly gpt_collectives(): as a multiset, op by op; the aggregated
// (one block x layers) costs equal the op-by-op costs; the transposed 4h->h layer's all-reduces
// carry the right sizes (not AxoNN's published ones).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "helpers.hpp"
#include "ovb/model/plan_comm.hpp"
#include "ovb/model/predict.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

std::vector<std::string> sorted_descriptions(const std::vector<CollOp>& ops) {
  std::vector<std::string> d;
  for (const CollOp& op : ops) d.push_back(describe(op));
  std::sort(d.begin(), d.end());
  return d;
}

struct Case {
  const char* grid;
  std::int64_t batch;
  bool recompute, cache, oar, ors, oag;
  bool shard = false;  // optimizer sharded over data
  bool grads = false;  // gradients too (ZeRO-2)
};

const Case kCases[] = {
    {"2x2x2x1", 4, false, true, false, false, false},
    {"2x2x2x2", 8, true, true, true, true, true},
    {"2x1x2x2", 4, false, false, false, true, true},
    {"1x4x2x1", 2, true, false, true, false, true},
    {"4x2x1x1", 2, false, true, true, true, false},
    {"2x2x2x1:z,y,x", 2, false, false, false, false, false},
    {"1x1x1x1", 1, false, true, false, false, false},
    {"2x2x2x2", 8, true, false, true, true, true, true},
    {"1x2x1x4", 8, false, true, false, false, false, true},
    {"2x1x2x2", 8, true, false, true, true, true, true, true},
    {"1x2x1x4", 8, false, true, false, false, false, true, true},
};

GptPlanOptions options_of(const Case& c) {
  GptPlanOptions o = test::plan_on(c.grid, c.batch);
  o.recompute = c.recompute;
  o.cache_weights = c.cache;
  o.oar = c.oar;
  o.ors = c.ors;
  o.oag = c.oag;
  o.shard_optimizer = c.shard;
  o.shard_gradients = c.grads;
  o.act_dtype = DType::bf16;
  return o;
}

}  // namespace

TEST(PlanComm, CostedListIsGptCollectives) {
  const Machine mc = test::synthetic_machine();
  for (const Case& c : kCases) {
    const GptPlanOptions o = options_of(c);
    for (std::int64_t layers : {1, 2, 5}) {
      const GptShape m = test::small_gpt(layers);
      const PlanComm pc = plan_comm(m, o, mc);
      EXPECT_EQ(pc.aggregated(), layers > 1) << c.grid;
      EXPECT_EQ(sorted_descriptions(expand(pc)), sorted_descriptions(gpt_collectives(m, o)))
          << c.grid << " layers " << layers;
    }
  }
}

// With micro-steps the tables hold one micro-step (checked against the others) and expand() gives
// back every micro-step's ops: the multiset of gpt_collectives() again.
TEST(PlanComm, MicroStepsExpandToGptCollectives) {
  const Machine mc = test::synthetic_machine();
  for (const Case& c : kCases) {
    GptPlanOptions o = options_of(c);
    o.batch *= 4;
    for (std::int64_t mb : {1, 2}) {
      o.micro_batch = mb;
      const GptShape m = test::small_gpt(3);
      const PlanComm pc = plan_comm(m, o, mc);
      EXPECT_EQ(pc.micro_steps, micro_steps(o)) << c.grid;
      EXPECT_GT(pc.micro_steps, 1) << c.grid;
      EXPECT_EQ(sorted_descriptions(expand(pc)), sorted_descriptions(gpt_collectives(m, o)))
          << c.grid << " micro-batch " << mb;
    }
  }
}

TEST(PlanComm, AggregatedCostsEqualOpByOpCosts) {
  const Machine mc = load_machine("perlmutter-a100");
  for (const Case& c : kCases) {
    const GptPlanOptions o = options_of(c);
    const GptShape m = test::small_gpt(6);
    // Per (group, kind): total time and count, from the full list op by op ...
    std::map<std::pair<int, int>, std::pair<double, int>> by_op, agg;
    for (const CostedOp& co : costed_collectives(m, o, mc)) {
      auto& v = by_op[{static_cast<int>(co.op.group), static_cast<int>(co.op.kind)}];
      v.first += co.cost.time_us;
      v.second += 1;
    }
    // ... from the aggregated tables, and from the timeline's accounting.
    const PlanComm pc = plan_comm(m, o, mc);
    for_each_slot(pc, [&](const CommSlot& s, double mult) {
      auto& v = agg[{static_cast<int>(s.op.group), static_cast<int>(s.op.kind)}];
      v.first += s.cost.time_us * mult;
      v.second += static_cast<int>(mult);
    });
    const Prediction p = predict(m, o, mc);
    ASSERT_EQ(by_op.size(), agg.size()) << c.grid;
    for (const auto& [key, v] : by_op) {
      EXPECT_NEAR(agg[key].first, v.first, 1e-9 * v.first) << c.grid;
      EXPECT_EQ(agg[key].second, v.second) << c.grid;
      EXPECT_NEAR(p.timeline.comm_us[key.first][key.second], v.first, 1e-9 * v.first) << c.grid;
      EXPECT_EQ(p.timeline.count[key.first][key.second], v.second) << c.grid;
    }
  }
}

TEST(PlanComm, TransposedMlpDownCarriesTheRightSizes) {
  // mlp_down is 4h -> h, transposed: in (4h) over Y, out (h) over X. Forward all-reduce of the
  // partial output over Y: T * h/Gx elements; backward all-reduce of dX over X: T * 4h/Gy.
  // (AxoNN's published model puts the 4x on the forward one: T*4h/Gx over Y, T*h/Gy over X.)
  const Machine mc = test::synthetic_machine();
  const GptShape m = test::small_gpt(2);  // h = 64, seq 16
  GptPlanOptions o = test::plan_on("2x4x1x1", 2);
  o.act_dtype = DType::bf16;
  const std::int64_t T = 2 * 16, h = 64;
  const PlanComm pc = plan_comm(m, o, mc);
  const LinearComm& down = pc.block(0).lin[3];
  EXPECT_EQ(down.out_reduce.op.group, Group::y);
  EXPECT_EQ(down.out_reduce.op.count, T * h / 2);
  EXPECT_EQ(down.in_grad.op.group, Group::x);
  EXPECT_EQ(down.in_grad.op.count, T * 4 * h / 4);
  // Costs by hand: forward over Y (4 ranks, stride 2: 8 > 4 ranks per node -> inter, 2 groups
  // share the 50 GB/s node): S = T*h/2*2 bytes, moved 2*3/4 S, bw 25 GB/s, alpha 2*4 us.
  const double S_fwd = T * h / 2 * 2.0, S_bwd = T * 4 * h / 4 * 2.0;
  EXPECT_DOUBLE_EQ(down.out_reduce.cost.time_us, 8 + 1.5 * S_fwd / 25e3);
  // Backward over X (2 ranks, stride 1, inside a node at 100 GB/s): moved 2*1/2 S.
  EXPECT_DOUBLE_EQ(down.in_grad.cost.time_us, 4 + 1.0 * S_bwd / 100e3);
  // The normal MLP-up (h -> 4h): forward over X carries T*4h/Gy, backward over Y T*h/Gx.
  const LinearComm& up = pc.block(0).lin[2];
  EXPECT_EQ(up.out_reduce.op.group, Group::x);
  EXPECT_EQ(up.out_reduce.op.count, T * 4 * h / 4);
  EXPECT_EQ(up.in_grad.op.group, Group::y);
  EXPECT_EQ(up.in_grad.op.count, T * h / 2);
}
