// Configuration search: enumeration counts checked by brute force, distinct placement orders,
// validity and memory filtering, the search's fast path agreeing with predict() config by
// config, and its choice of micro-batch and sharding against an enumeration done here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

bool pow2(int v) {
  return (v & (v - 1)) == 0;
}

// Brute force: every (gx, gy, gz, gdata) in [1, G]^4 with product G.
int brute_force_grids(int G, bool only_pow2) {
  int n = 0;
  for (int a = 1; a <= G; ++a)
    for (int b = 1; b <= G; ++b)
      for (int c = 1; c <= G; ++c)
        for (int d = 1; d <= G; ++d)
          if (static_cast<long long>(a) * b * c * d == G &&
              (!only_pow2 || (pow2(a) && pow2(b) && pow2(c) && pow2(d))))
            ++n;
  return n;
}

}  // namespace

TEST(Search, GridCountsMatchBruteForce) {
  for (int G = 1; G <= 36; ++G)
    for (bool p2 : {false, true}) {
      const std::vector<GridShape> grids = enumerate_grids(G, p2);
      EXPECT_EQ(static_cast<int>(grids.size()), brute_force_grids(G, p2)) << G << " pow2 " << p2;
      std::set<std::array<int, 4>> distinct;
      for (const GridShape& g : grids) {
        EXPECT_EQ(g.world(), G);
        distinct.insert({g.gx, g.gy, g.gz, g.gdata});
      }
      EXPECT_EQ(distinct.size(), grids.size());
    }
  // 2^16: the number of ways to split 16 factors of two over 4 dimensions, C(19, 3).
  EXPECT_EQ(enumerate_grids(65536, false).size(), 969u);
  EXPECT_EQ(enumerate_grids(65536, true).size(), 969u);
  EXPECT_EQ(enumerate_grids(12, true).size(), 0u);  // 12 is not a power of two
  EXPECT_THROW(enumerate_grids(0, false), UsageError);
}

TEST(Search, DistinctOrdersIgnoreDimensionsOfSizeOne) {
  EXPECT_EQ(distinct_orders(GridShape::parse("2x2x2x1")).size(), 6u);
  EXPECT_EQ(distinct_orders(GridShape::parse("1x2x2x1")).size(), 2u);  // y,z or z,y
  EXPECT_EQ(distinct_orders(GridShape::parse("1x1x4x2")).size(), 1u);
  EXPECT_EQ(distinct_orders(GridShape::parse("2x2x2x1")).front().order,
            (std::array<Dim, 3>{Dim::x, Dim::y, Dim::z}));
}

TEST(Search, CountsAndRankingAgreeWithPredictForEveryConfiguration) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = test::small_gpt(3);
  SearchOptions so;
  so.gpus = 16;
  so.base = test::plan_on("1x1x1x1", 8);
  parse_overlap("all", so.base);
  const SearchResult r = search(m, so, mc);
  // Brute force the same filter with validate_gpt_plan and distinct orders.
  int invalid = 0, configs = 0;
  for (const GridShape& g : enumerate_grids(16, false)) {
    GptPlanOptions o = so.base;
    o.grid = g;
    try {
      validate_gpt_plan(m, o);
    } catch (const UsageError&) {
      ++invalid;
      continue;
    }
    configs += static_cast<int>(distinct_orders(g).size());
  }
  EXPECT_EQ(r.grids, brute_force_grids(16, false));
  EXPECT_EQ(r.invalid, invalid);
  EXPECT_EQ(r.configs, configs);
  ASSERT_EQ(static_cast<int>(r.ranked.size()), configs);
  double last = 0;
  for (const Candidate& c : r.ranked) {
    GptPlanOptions o = so.base;
    o.grid = c.grid;
    const Prediction p = predict(m, o, mc);
    EXPECT_NEAR(c.timeline.iteration_us, p.timeline.iteration_us, 1e-9 * p.timeline.iteration_us)
        << c.grid.str();
    EXPECT_DOUBLE_EQ(c.memory_bytes, p.memory.total());
    EXPECT_EQ(c.fits, p.fits);
    if (c.fits) {
      EXPECT_GE(c.timeline.iteration_us, last);
      last = c.timeline.iteration_us;
    }
  }
}

TEST(Search, ConfigurationsThatDoNotFitAreSetApart) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"]["memory_bytes"] = 2.1e8;  // 0.9 x 2.1e8: room for some grids only (0.17 to 0.3 GB)
  const Machine mc = machine_from_json(j, "t");
  GptShape m = test::small_gpt(8);
  m.hidden = 512;
  m.heads = 8;
  m.seq = 256;
  SearchOptions so;
  so.gpus = 8;
  so.base = test::plan_on("1x1x1x1", 8);
  so.base.act_dtype = DType::bf16;
  const SearchResult r = search(m, so, mc);
  ASSERT_GT(r.unfit, 0);
  ASSERT_LT(r.unfit, r.configs);
  bool seen_unfit = false;
  for (const Candidate& c : r.ranked) {
    if (!c.fits)
      seen_unfit = true;
    else
      EXPECT_FALSE(seen_unfit) << "a fitting configuration after one that does not fit";
    EXPECT_EQ(c.fits, c.memory_bytes <= r.memory_limit_bytes);
  }
  // Why they do not fit: each unfit configuration counted once, under its largest memory term.
  std::map<std::string, std::int64_t> by_term;
  for (const Candidate& c : r.ranked)
    if (!c.fits) {
      EXPECT_DOUBLE_EQ(c.memory.total(), c.memory_bytes);
      ++by_term[std::string(c.memory.largest_term())];
    }
  EXPECT_EQ(by_term, r.unfit_by_term);
  std::int64_t counted = 0;
  for (const auto& [term, n] : r.unfit_by_term) counted += n;
  EXPECT_EQ(counted, r.unfit);
}

namespace {

// The model of the choice tests: big enough that activations matter next to the weights.
GptShape choice_gpt() {
  GptShape m = test::small_gpt(4);
  m.hidden = 512;
  m.heads = 8;
  m.seq = 256;
  m.vocab = 1024;
  return m;
}

GptPlanOptions choice_base(std::int64_t batch) {
  GptPlanOptions o = test::plan_on("1x1x1x1", batch);
  o.act_dtype = DType::bf16;
  o.gemm_workspace_bytes = 0;  // a constant that would only shift every total
  parse_overlap("all", o);
  return o;
}

Machine with_limit(Machine mc, double limit_bytes) {
  mc.memory_bytes = limit_bytes / mc.memory_usable_fraction * mc.ranks_per_device;
  return mc;
}

}  // namespace

// The search's pick per configuration against an enumeration written here: every grid, order,
// micro-batch (0 and each divisor of the local batch below it, found by trial division) and
// sharding, each through predict(); the best by "fits, then fastest, else smallest".
TEST(Search, ChosenMicroBatchAndShardingMatchExhaustiveEnumeration) {
  const GptShape m = choice_gpt();
  SearchOptions so;
  so.gpus = 8;
  so.base = choice_base(48);  // local batches 48 to 3: divisors that are no power of two
  so.choose.micro_batch = so.choose.shard_optimizer = true;
  // A limit that some configurations meet only with micro-batches or sharding, and some not at
  // all: the middle of the grids' smallest memories (micro-batch 1, sharded).
  const Machine big = load_machine("perlmutter-a100");
  std::vector<double> least;
  for (const GridShape& g : enumerate_grids(so.gpus, false)) {
    GptPlanOptions o = so.base;
    o.grid = g;
    o.micro_batch = 1;
    o.shard_optimizer = true;
    try {
      least.push_back(predict(m, o, big).memory.total());
    } catch (const UsageError&) {
    }
  }
  std::sort(least.begin(), least.end());
  const Machine mc = with_limit(big, least[least.size() / 2]);
  const SearchResult r = search(m, so, mc);

  struct Best {
    Prediction p;
    bool set = false;
  };
  std::int64_t configs = 0, unfit = 0;
  bool chose_micro = false, chose_shard = false;
  for (const Candidate& c : r.ranked) {
    Best best;
    GptPlanOptions o = so.base;
    o.grid = c.grid;
    const std::int64_t b = so.base.batch / (c.grid.gdata * c.grid.gz);
    for (bool shard : {false, true})
      for (std::int64_t mb = 0; mb < b; ++mb) {
        if (mb > 0 && b % mb != 0) continue;
        o.micro_batch = mb;
        o.shard_optimizer = shard;
        const Prediction p = predict(m, o, mc);
        const bool better =
            !best.set || (p.fits != best.p.fits ? p.fits
                          : p.fits ? p.timeline.iteration_us < best.p.timeline.iteration_us
                                   : p.memory.total() < best.p.memory.total());
        if (better) best = {p, true};
      }
    ASSERT_TRUE(best.set);
    const Prediction& e = best.p;
    EXPECT_EQ(c.fits, e.fits) << c.grid.str();
    EXPECT_NEAR(c.timeline.iteration_us, e.timeline.iteration_us, 1e-9 * e.timeline.iteration_us)
        << c.grid.str();
    EXPECT_DOUBLE_EQ(c.memory_bytes, e.memory.total()) << c.grid.str();
    EXPECT_EQ(micro_batch(c.options), micro_batch(e.options)) << c.grid.str();
    EXPECT_EQ(c.options.shard_optimizer && c.grid.gdata > 1, e.options.shard_optimizer)
        << c.grid.str();
    ++configs;
    unfit += e.fits ? 0 : 1;
    chose_micro |= c.fits && micro_steps(c.options) > 1;
    chose_shard |= c.fits && c.options.shard_optimizer;
  }
  EXPECT_EQ(r.configs, configs);
  EXPECT_EQ(r.unfit, unfit);
  // The case exercises both choices and leaves some configurations out.
  EXPECT_TRUE(chose_micro);
  EXPECT_TRUE(chose_shard);
  EXPECT_GT(r.unfit, 0);
  // Every valid grid and order is there once.
  std::int64_t expected_configs = 0;
  for (const GridShape& g : enumerate_grids(so.gpus, false)) {
    GptPlanOptions o = so.base;
    o.grid = g;
    try {
      validate_gpt_plan(m, o);
    } catch (const UsageError&) {
      continue;
    }
    expected_configs += static_cast<std::int64_t>(distinct_orders(g).size());
  }
  EXPECT_EQ(r.configs, expected_configs);
}

// One GPU, batch 8, a limit between the memory of micro-batch 2 and 4. With one rank there is no
// communication, and the GEMM rate is one number: the only time micro-steps add is the fp32
// accumulation after the first, so fewer micro-steps are faster and the pick is the largest
// micro-batch that fits: 2 (4 micro-steps). Pinned at the default, it does not fit.
TEST(Search, MicroBatchesFitWhatDoesNotFitWithout) {
  const GptShape m = choice_gpt();
  const Machine big = test::synthetic_machine();
  GptPlanOptions o = choice_base(8);
  std::vector<double> mem, time;  // micro-batch 1, 2, 4, 8 (= 0)
  for (std::int64_t mb : {1, 2, 4, 8}) {
    o.micro_batch = mb;
    const Prediction p = predict(m, o, big);
    mem.push_back(p.memory.total());
    time.push_back(p.timeline.iteration_us);
  }
  for (std::size_t i = 1; i < mem.size(); ++i) {
    ASSERT_LT(mem[i - 1], mem[i]);
    ASSERT_GT(time[i - 1], time[i]);
  }
  const Machine mc = with_limit(big, (mem[1] + mem[2]) / 2);
  SearchOptions so;
  so.gpus = 1;
  so.base = choice_base(8);
  const SearchResult pinned = search(m, so, mc);
  ASSERT_EQ(pinned.ranked.size(), 1u);
  EXPECT_FALSE(pinned.ranked[0].fits);
  so.choose.micro_batch = true;
  const SearchResult chosen = search(m, so, mc);
  ASSERT_EQ(chosen.ranked.size(), 1u);
  const Candidate& c = chosen.ranked[0];
  EXPECT_TRUE(c.fits);
  EXPECT_EQ(c.options.micro_batch, 2);
  EXPECT_EQ(micro_steps(c.options), 4);
  EXPECT_DOUBLE_EQ(c.memory_bytes, mem[1]);
  EXPECT_DOUBLE_EQ(c.timeline.iteration_us, time[1]);
  EXPECT_EQ(chosen.variants, 4);  // 0, 4, 2, 1 (8 is 0)
  // explain's choice is the same.
  const Prediction p = choose(m, so.base, so.choose, mc);
  EXPECT_EQ(p.options.micro_batch, 2);
  // Nothing fits: the smallest variant stands for the configuration.
  const SearchResult none = search(m, so, with_limit(big, mem[0] / 2));
  EXPECT_FALSE(none.ranked[0].fits);
  EXPECT_EQ(none.ranked[0].options.micro_batch, 1);
}

TEST(Search, MicroBatchCandidatesAreEveryDivisor) {
  EXPECT_EQ(micro_batch_candidates(12), (std::vector<std::int64_t>{0, 6, 4, 3, 2, 1}));
  EXPECT_EQ(micro_batch_candidates(1), (std::vector<std::int64_t>{0}));
  // Sharding is tried only where there is a data group to shard over.
  GptPlanOptions o = test::plan_on("1x1x2x1", 8);
  Choices c;
  c.shard_optimizer = true;
  EXPECT_EQ(plan_variants(test::small_gpt(), o, c).size(), 1u);
  o.grid = GridShape::parse("1x1x1x2");
  EXPECT_EQ(plan_variants(test::small_gpt(), o, c).size(), 2u);
  c.micro_batch = true;
  EXPECT_EQ(plan_variants(test::small_gpt(), o, c).size(), 6u);  // local batch 4: 0, 2, 1, twice
  // With --shard-gradients a third level, ZeRO-2; every variant valid (no sharded gradients
  // without the sharded optimizer).
  o.shard_optimizer = o.shard_gradients = true;
  const std::vector<GptPlanOptions> v = plan_variants(test::small_gpt(), o, c);
  ASSERT_EQ(v.size(), 9u);
  int zero2 = 0;
  for (const GptPlanOptions& x : v) {
    EXPECT_TRUE(!x.shard_gradients || x.shard_optimizer);
    zero2 += gradients_sharded(x) ? 1 : 0;
  }
  EXPECT_EQ(zero2, 3);
  c.shard_optimizer = false;  // not chosen: o's own sharding, ZeRO-2
  for (const GptPlanOptions& x : plan_variants(test::small_gpt(), o, c))
    EXPECT_TRUE(gradients_sharded(x));
}

// The search's shortcut: a replay told to give up at a time after the iteration's end gives the
// iteration exactly; one told to give up well before it ends gives infinity, never a smaller
// time.
TEST(Search, ReplayGivesUpOnlyWhenItCannotBeFaster) {
  const GptShape m = choice_gpt();
  const Machine mc = load_machine("perlmutter-a100");
  GptPlanOptions o = choice_base(16);
  o.grid = GridShape::parse("1x2x2x2");
  o.micro_batch = 1;
  const Prediction p = predict(m, o, mc);
  const double t = p.timeline.iteration_us;
  EXPECT_EQ(simulate(m, p.compute, p.comm, o, mc, t * (1 + 1e-12)).iteration_us, t);
  // Checked after every block: past the last one (the step), the time comes back whole.
  const double late = simulate(m, p.compute, p.comm, o, mc, 0.99 * t).iteration_us;
  EXPECT_TRUE(std::isinf(late) || late == t) << late;
  for (double f : {0.5, 0.01})
    EXPECT_TRUE(std::isinf(simulate(m, p.compute, p.comm, o, mc, f * t).iteration_us)) << f;
}
