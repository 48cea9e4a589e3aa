// gpt4d issues exactly the collectives of gpt_collectives() (as a multiset: overlap flags change
// the order, never the set - except tp, which issues each forward output all-reduce in
// tp_chunks pieces), for several grids, recompute, weight-cache, ORS-window and
// sharded-optimizer and sharded-gradient options and every overlap-flag subset, each case also
// with tp added (1, 2, 4 or 16 row slices in turn); performs its
// issues and waits in exactly the order of gpt_schedule(), step by step (each issue's collective
// and dependencies, each wait's collective); and allocates exactly the memory gpt_memory()
// estimates, term by term.
// TrainerRun: mpirun -np 8 ovb-gpt4d-parallel-tests
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "model/layout.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/tp_chunks.hpp"
#include "ovb/tracked_memory.hpp"
#include "parallel_test_util.hpp"

using namespace ovb;
using namespace ovb::gpt;
using namespace ovb::gpt::testing;

namespace {
std::vector<std::string> described(const std::vector<CollOp>& ops) {
  std::vector<std::string> out;
  for (const CollOp& c : ops) out.push_back(describe(c));
  std::sort(out.begin(), out.end());
  return out;
}

// What gpt4d should issue: the plan's list, with tp each forward output all-reduce in chunks.
std::vector<std::string> planned(const Config& cfg) {
  return described(ovb::testing::with_tp_chunks(gpt_collectives(cfg.model, cfg.plan), cfg.plan));
}

// The row slices of the n-th case with tp: 2, 4, 16 (one token per slice where a rank holds 16),
// 1 (tp without chunks) in turn; every test rank holds a multiple of 16 tokens per micro-step.
int tp_chunks_of(int n) {
  static const int k[] = {2, 4, 16, 1};
  return k[n % 4];
}

std::string event_words(bool wait, int id, const CollOp& op, const std::vector<int>& deps) {
  std::string s =
      std::string(wait ? "wait c" : "issue c") + std::to_string(id) + " " + describe(op);
  for (std::size_t i = 0; i < deps.size(); ++i)
    s += (i == 0 ? " after c" : ",c") + std::to_string(deps[i]);
  return s;
}

// What gpt4d did, issue by issue and wait by wait, is the schedule's issue and wait steps in
// order; a failure names the first step that differs, with both sides and the step before.
void expect_schedule_order(const Trainer& t, const Config& cfg, const std::string& what) {
  const GptSchedule sched = gpt_schedule(cfg.model, cfg.plan);
  std::vector<std::string> want, got;
  for (const Step& s : sched.steps)
    if (s.kind == StepKind::issue || s.kind == StepKind::wait)
      want.push_back(event_words(s.kind == StepKind::wait, s.coll,
                                 sched.collectives[static_cast<std::size_t>(s.coll)], s.deps));
  const std::vector<CollOp>& log = t.collective_log();
  for (const CommEvent& e : t.comm_sequence())
    got.push_back(event_words(e.wait, e.id, log.at(static_cast<std::size_t>(e.id)), e.deps));
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const std::string w = i < want.size() ? want[i] : "(the schedule ends)";
    const std::string g = i < got.size() ? got[i] : "(gpt4d stops)";
    if (w == g) continue;
    ADD_FAILURE() << what << ": step " << i << " of " << want.size()
                  << " issues and waits differs\n  before:   " << (i > 0 ? want[i - 1] : "-")
                  << "\n  schedule: " << w << "\n  gpt4d:    " << g;
    return;
  }
  EXPECT_FALSE(want.empty() && cfg.plan.grid.world() > 1) << what;
}

// What the trainer allocated, category by category, is the plan's estimate.
void expect_plan_memory(const Trainer& t, const Config& cfg, const std::string& what) {
  const auto est = gpt_memory(cfg.model, cfg.plan).terms();
  const auto got = t.memory().as_gpt_memory().terms();
  ASSERT_EQ(got.size(), est.size());
  for (std::size_t i = 0; i < est.size(); ++i)
    EXPECT_EQ(got[i].second, est[i].second) << what << ": " << est[i].first;
}
// One iteration of case c, checked against the plan: gpt4d's issues and waits are the schedule's
// step by step, its collectives the plan's list (planned()), its memory gpt_memory()'s term by
// term. Returns the run for further checks.
std::unique_ptr<TrainerRun> checked_iteration(const Case& c) {
  auto run = std::make_unique<TrainerRun>(test_config(c, 1), MPI_COMM_WORLD);
  run->trainer.run_iteration(0);
  expect_schedule_order(run->trainer, run->cfg, c.str());
  EXPECT_EQ(described(run->trainer.collective_log()), planned(run->cfg)) << c.str();
  expect_plan_memory(run->trainer, run->cfg, c.str());
  return run;
}
}  // namespace

TEST(CollectiveLog, EqualsThePlanForEveryGridAndFlagSet) {
  const auto grids = grids_for(ovb::testing::launch().world);
  int checked = 0, run_cases = 0;
  for (std::size_t g = 0; g < grids.size(); ++g)
    for (bool rc : {false, true})
      for (bool cache : {true, false})
        for (const std::string& ov : overlap_subsets()) {
          // Every subset on the first three grids, a spread of them on the others.
          if ((g >= 3 || on_gpu()) && (checked++ % 5) != 0) continue;
          // Windows of 1 (and 4, the default) dW blocks in flight, alternately.
          // The optimizer sharded over data in every other case of each window.
          const int k = run_cases++;
          const Case base{grids[g], ov, rc,        cache, (k % 2) ? 1 : kDefaultOrsWindow,
                          false,    0,  k % 4 >= 2};
          for (const Case& c : {base, with_tp(base, tp_chunks_of(k))}) {
            const auto run = checked_iteration(c);
            const Config& cfg = run->cfg;
            if (cfg.plan.ors && cfg.plan.grid.gz > 1 && !on_gpu()) {
              // The ring of dW blocks holds the window, not every layer's block.
              EXPECT_EQ(run->trainer.memory().bytes(MemKind::grad_blocks),
                        dw_slots(cfg.model, cfg.plan) * 4.0 *
                            run->trainer.layout().head.lm_head.geom.block)
                  << c.str();  // the LM head's block is the tiny model's largest
            }
          }
        }
}

// With micro-batches: every micro-step's collectives (the reductions once) and the memory of one
// micro-step plus the accumulation buffers, on every grid whose rank batch allows two or more
// micro-steps, with and without the overlap flags.
TEST(CollectiveLog, MicroBatchesEqualThePlan) {
  const auto grids = grids_for(ovb::testing::launch().world);
  int n = 0;
  for (const std::string& grid : grids)
    for (std::int64_t mb : {1, 2}) {
      if (local_sequences(grid) % mb != 0 || local_sequences(grid) == mb) continue;
      // Every other case with the optimizer sharded over data as well.
      const Case base{grid,
                      n % 2 ? "oar,ors,oag" : "none",
                      n % 3 == 1,
                      n % 4 == 2,
                      n % 2 ? 1 : 4,
                      false,
                      mb,
                      n % 4 < 2};
      ++n;
      ASSERT_GT(micro_steps(test_config(base, 1).plan), 1) << base.str();
      for (const Case& c : {base, with_tp(base, tp_chunks_of(n))}) checked_iteration(c);
    }
  EXPECT_GT(n, 0);
}

// Uneven buckets (hidden 50, 2 heads on Gdata = 4 or 2): the plan's chunk counts are what gpt4d
// issues, and its padded buffers are what gpt_memory() counts.
TEST(CollectiveLog, ShardedUnevenChunksEqualThePlan) {
  const int world = ovb::testing::launch().world;
  if (world != 8 && world != 4) GTEST_SKIP() << "needs 4 or 8 ranks";
  for (const char* ov : {"none", "oar,ors,oag", "oar,ors,oag,tp"}) {
    Case c{world == 8 ? "2x1x1x4" : "1x2x1x2", ov, ov == std::string("none"), false};
    c.hidden = 50;
    c.heads = 2;
    c.shard = true;
    const auto run = checked_iteration(c);
    const Config& cfg = run->cfg;
    bool padded = false;
    for (const Bucket& b : run->trainer.layout().buckets) {
      padded = padded || b.count % cfg.plan.grid.gdata != 0;
      // The chunk is ceil(count / Gdata), the padding less than one element per data rank.
      EXPECT_EQ(b.own_count, (b.count + cfg.plan.grid.gdata - 1) / cfg.plan.grid.gdata);
      EXPECT_LT(b.extent - b.count, cfg.plan.grid.gdata);
    }
    EXPECT_TRUE(padded) << c.str();
  }
}

// Sharded gradients (ZeRO-2) on every grid with Gdata > 1, with and without micro-batches, ORS
// and uneven chunks: the plan's list (the reductions in every micro-step), its memory term by
// term, and the gradient memory by hand from the layout: the rank's chunks, the head bucket's
// buffer and one block-bucket buffer (two with ORS), fp32, padding included.
TEST(CollectiveLog, ShardedGradientsEqualThePlanAndItsMemory) {
  int n = 0, uneven = 0;
  for (const std::string& grid : grids_for(ovb::testing::launch().world)) {
    if (gdata_of(grid) == 1) continue;
    for (std::int64_t mb : {0, 1}) {
      if (mb > 0 && local_sequences(grid) < 2) continue;
      Case base{grid,
                n % 2 ? "oar,ors,oag" : "none",
                n % 3 == 1,
                n % 4 == 2,
                kDefaultOrsWindow,
                false,
                mb,
                true,
                true};
      const GridShape gs = GridShape::parse(grid);
      if (n % 2 == 0 && gs.gx * gs.gy <= 2) {  // hidden 50, 2 heads: chunks may be uneven
        base.hidden = 50;
        base.heads = 2;
      }
      ++n;
      for (const Case& c : {base, with_tp(base, tp_chunks_of(n))}) {
        const auto run = checked_iteration(c);
        const Config& cfg = run->cfg;
        const ParamLayout& p = run->trainer.layout();
        const double buffers =
            static_cast<double>(p.buckets.back().extent) +
            (cfg.plan.ors ? 2.0 : 1.0) * static_cast<double>(p.buckets[0].extent);
        EXPECT_EQ(run->trainer.memory().bytes(MemKind::grads),
                  4.0 * (static_cast<double>(p.shard_total) + buffers))
            << c.str();
        EXPECT_LT(p.shard_total, p.total) << c.str();
        for (const Bucket& b : p.buckets)
          if (b.count % cfg.plan.grid.gdata != 0) {
            ++uneven;
            break;
          }
        // Every micro-step reduce-scatters every bucket.
        int scatters = 0;
        for (const CollOp& op : run->trainer.collective_log())
          scatters += op.role == CollRole::data_grad_reduce ? 1 : 0;
        EXPECT_EQ(scatters, micro_steps(cfg.plan) * (cfg.model.layers + 1)) << c.str();
      }
    }
  }
  EXPECT_GT(n, 0);
  if (ovb::testing::launch().world == 8) {
    EXPECT_GT(uneven, 0) << "no case with uneven chunks";
  }
}

// The Llama test model: on every grid that keeps whole K/V groups, without and with every overlap
// flag (recompute and weight caching alternating), the same list and the same memory.
TEST(CollectiveLog, LlamaEqualsThePlanAndItsMemory) {
  int n = 0;
  for (const std::string& grid : grids_for(ovb::testing::launch().world)) {
    if (llama_test_model().kv() % GridShape::parse(grid).gy != 0) continue;
    for (const char* ov : {"none", "oar,ors,oag"}) {
      const Case base{grid, ov, n % 2 == 1, n % 3 != 1, (n % 4 == 3) ? 1 : kDefaultOrsWindow, true};
      ++n;
      for (const Case& c : {base, with_tp(base, tp_chunks_of(n))}) checked_iteration(c);
    }
  }
  EXPECT_GE(n, 2);
}

// The log is not trivially equal: a grid with every group > 1 issues every role.
TEST(CollectiveLog, CoversEveryRoleOnAFullGrid) {
  if (ovb::testing::launch().world != 8) GTEST_SKIP() << "needs 8 ranks";
  Case c{"2x2x1x2", "oar,ors,oag", true, false};
  Config cfg = test_config(c, 1);
  TrainerRun run(cfg, MPI_COMM_WORLD);
  run.trainer.run_iteration(0);
  expect_schedule_order(run.trainer, cfg, c.str());
  std::vector<bool> seen(static_cast<std::size_t>(CollRole::param_gather) + 1, false);
  for (const CollOp& op : run.trainer.collective_log())
    seen[static_cast<std::size_t>(op.role)] = true;
  // Gz = 1 here: no weight gathers or reduce-scatters, no Z parameter reduce.
  for (CollRole r :
       {CollRole::output_reduce, CollRole::input_grad_reduce, CollRole::ln_stats,
        CollRole::ln_grad_stats, CollRole::ce_stats, CollRole::data_grad_reduce, CollRole::scalars})
    EXPECT_TRUE(seen[static_cast<std::size_t>(r)]) << name_of(r);
  // Sharded: the data reduction is a reduce-scatter and the step all-gathers the weights.
  c.shard = true;
  Config sharded = test_config(c, 1);
  TrainerRun srun(sharded, MPI_COMM_WORLD);
  srun.trainer.run_iteration(0);
  expect_schedule_order(srun.trainer, sharded, c.str());
  int scatters = 0, gathers = 0;
  for (const CollOp& op : srun.trainer.collective_log()) {
    if (op.role == CollRole::data_grad_reduce) {
      EXPECT_EQ(op.kind, CollKind::reduce_scatter) << describe(op);
      ++scatters;
    }
    if (op.role == CollRole::param_gather) {
      EXPECT_EQ(op.kind, CollKind::all_gather) << describe(op);
      EXPECT_EQ(op.phase, Phase::step) << describe(op);
      ++gathers;
    }
  }
  EXPECT_EQ(scatters, sharded.model.layers + 1);  // a bucket per block and the head bucket
  EXPECT_EQ(gathers, sharded.model.layers + 1);
}
