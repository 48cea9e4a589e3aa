// The search's fast replay against the replay of the visited schedule: a schedule compiled once
// (compiled_schedule.hpp) and replayed with an order's collective costs must give that order's
// Timeline of replay_schedule(gpt_schedule()) bit for bit (the same additions in the same order:
// only steps that add nothing are dropped), and the same give-up verdict as simulate(); the
// per-variant replays of the search (order_replays.hpp), which reuse a replay for an order of equal
// costs, must answer every sequence of orders and give-up times as simulate() does. Over shapes
// (GPT, Llama), grids and their orders, overlap flags, tp chunks, micro-steps, sharding,
// recomputation and cached weights, on a machine with interference (and one with a blocking wait).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "compiled_schedule.hpp"
#include "helpers.hpp"
#include "order_replays.hpp"
#include "ovb/error.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Options {
  bool recompute, cache_weights, shard;
  int micro_batch;
};

const char* const kGrids[] = {"2x2x2x1", "1x2x2x2", "2x1x4x1", "1x1x2x4", "4x2x1x1", "2x2x1x2"};
const char* const kOverlaps[] = {"none", "oar", "ors", "oag", "oar,ors", "all", "tp", "all,tp"};
const int kTpChunks[] = {2, 4};
const Options kOptions[] = {{false, false, false, 0},
                            {true, false, false, 1},
                            {false, true, true, 2},
                            {true, false, true, 0}};

// Every plan of the product that is valid (a tp chunk count is tried only with tp).
template <class F>
void for_each_plan(const GptShape& m, F&& f) {
  for (const char* grid : kGrids)
    for (const char* overlap : kOverlaps)
      for (int chunks : kTpChunks)
        for (const Options& x : kOptions) {
          GptPlanOptions o = test::plan_on(grid, 8);
          o.act_dtype = DType::bf16;
          parse_overlap(overlap, o);
          if (!o.otp && chunks != kTpChunks[0]) continue;
          o.tp_chunks = chunks;
          o.recompute = x.recompute;
          o.cache_weights = x.cache_weights;
          o.shard_optimizer = x.shard;
          o.shard_gradients = x.shard && x.micro_batch > 0;
          o.micro_batch = x.micro_batch;
          try {
            validate_gpt_plan(m, o);
          } catch (const UsageError&) {
            continue;
          }
          f(o, std::string(grid) + " " + overlap + " tp_chunks " + std::to_string(chunks) +
                   " recompute " + std::to_string(x.recompute) + " cache " +
                   std::to_string(x.cache_weights) + " shard " + std::to_string(x.shard) +
                   " micro_batch " + std::to_string(x.micro_batch));
        }
}

// The synthetic machine with interference, so that stretched collectives and compute count.
Machine interfering_machine() {
  Machine mc = test::synthetic_machine();
  mc.compute_slowdown = 0.25;
  mc.comm_slowdown = 0.125;
  return mc;
}

// Give-up times around and below an iteration t: the replay must give up exactly when t >= it.
std::vector<double> give_ups(double t) {
  return {0.25 * t, 0.9 * t, std::nextafter(t, 0.0), t, std::nextafter(t, kInf), 2 * t, kInf};
}

void expect_same_verdict(const Timeline& got, const Timeline& want, double give_up,
                         const std::string& where) {
  if (std::isinf(want.iteration_us))
    EXPECT_TRUE(std::isinf(got.iteration_us)) << where << " give up at " << give_up;
  else
    test::expect_same_timeline(got, want, where + " give up at " + std::to_string(give_up));
}

}  // namespace

// Compiled on the grid's first order, replayed on each of its orders with that order's costs:
// the visited replay of the same order, to the bit; every give-up time as simulate() decides it.
TEST(TimelineCompiled, SameAsTheVisitedReplayOnEveryOrder) {
  Machine waiting = interfering_machine();  // and a blocking wait after compute (host ranks)
  waiting.blocking_wait = {{10, 4}, {1000, 400}};
  int plans = 0, orders = 0, replays_with_overlap = 0, blocking_waits = 0;
  for (const Machine& mc : {interfering_machine(), waiting})
    for (const GptShape& m : {test::small_gpt(), gpt_preset("llama-tiny")}) {
      for_each_plan(m, [&](const GptPlanOptions& first, const std::string& where) {
        ++plans;
        const Prediction p0 = predict(m, first, mc);
        const std::optional<CompiledSchedule> cs =
            compile_schedule(m, p0.compute, p0.comm, first, mc);
        ASSERT_TRUE(cs) << where;
        for (const GridShape& g : distinct_orders(first.grid)) {
          ++orders;
          GptPlanOptions o = first;
          o.grid = g;
          const Prediction p = predict(m, o, mc);
          const std::string at = where + " order " + g.str();
          const std::vector<LinkUse> us = price_collectives(*cs, m, p.compute, p.comm, o, mc);
          const Timeline want = replay_schedule(gpt_schedule(m, o), m, p.compute, p.comm, o, mc);
          const Timeline got = replay_compiled(*cs, us, mc);
          test::expect_same_timeline(got, want, at);
          if (want.interference_us > 0) ++replays_with_overlap;
          blocking_waits += want.blocking_waits;
          if (nothing_overlaps(p.comm, o)) continue;  // simulate() sums instead of replaying
          for (double give_up : give_ups(want.iteration_us))
            expect_same_verdict(replay_compiled(*cs, us, mc, give_up),
                                simulate(m, p.compute, p.comm, o, mc, give_up), give_up, at);
        }
      });
    }
  EXPECT_GT(plans, 400);
  EXPECT_GT(orders, plans);  // grids of several orders
  EXPECT_GT(replays_with_overlap, 100);
  EXPECT_GT(blocking_waits, 100);
}

// A schedule longer than max_steps is not compiled (the search then simulates); one of exactly
// max_steps steps is.
TEST(TimelineCompiled, LongerThanTheBudgetIsNotCompiled) {
  const Machine mc = interfering_machine();
  const GptShape m = test::small_gpt();
  GptPlanOptions o = test::plan_on("2x2x2x1", 8);
  parse_overlap("all", o);
  const Prediction p = predict(m, o, mc);
  const std::optional<CompiledSchedule> cs = compile_schedule(m, p.compute, p.comm, o, mc);
  ASSERT_TRUE(cs);
  ASSERT_GT(cs->steps.size(), 10u);
  EXPECT_TRUE(compile_schedule(m, p.compute, p.comm, o, mc, cs->steps.size()));
  EXPECT_FALSE(compile_schedule(m, p.compute, p.comm, o, mc, cs->steps.size() - 1));
  // Fewer steps than the visited schedule: slot steps and compute steps of no time are dropped.
  EXPECT_LT(cs->steps.size(), gpt_schedule(m, o).steps.size());
}

// One variant asked on its orders in turn, each order several times with give-up times that
// gave up before, finished, then gave up again (the reuse of a replay of equal costs, both ways),
// with a budget that compiles and one that does not: always simulate()'s answer.
TEST(TimelineCompiled, OrderReplaysAnswerAsSimulate) {
  const Machine mc = interfering_machine();
  int asked = 0;
  for (const GptShape& m : {test::small_gpt(), gpt_preset("llama-tiny")}) {
    for_each_plan(m, [&](const GptPlanOptions& first, const std::string& where) {
      const std::vector<GridShape> orders = distinct_orders(first.grid);
      for (std::size_t budget : {std::size_t{1} << 24, std::size_t{0}}) {
        OrderReplays replays;
        std::size_t left = budget;
        for (int round = 0; round < 2; ++round)
          for (const GridShape& g : orders) {
            GptPlanOptions o = first;
            o.grid = g;
            const Prediction p = predict(m, o, mc);
            const double t = simulate(m, p.compute, p.comm, o, mc).iteration_us;
            for (double give_up : {0.5 * t, t, std::nextafter(t, kInf), 0.75 * t, kInf}) {
              ++asked;
              const Timeline got = replays.replay(m, p.compute, p.comm, o, mc, give_up, left);
              const Timeline want = simulate(m, p.compute, p.comm, o, mc, give_up);
              expect_same_verdict(
                  got, want, give_up,
                  where + " order " + g.str() + " budget " + std::to_string(budget));
            }
          }
        EXPECT_LE(left, budget);
      }
    });
  }
  EXPECT_GT(asked, 1000);
}
