// Configuration search: enumeration counts checked by brute force, distinct placement orders,
// validity and memory filtering, and the search's fast path agreeing with predict() config by
// config.
#include <gtest/gtest.h>

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
