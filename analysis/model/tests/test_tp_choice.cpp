// --tp-chunks auto: which tp variants plan_variants() tries (exact lists per shape and grid), and
// that choose() and the search pick the variant whose own prediction is fastest (each variant
// predicted here, one by one, and the fastest that fits taken, the earliest on a tie).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "helpers.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"
#include "ovb/model/timeline.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

// (micro_batch, tp chunks or 0 when tp is off) of each variant, in order.
std::vector<std::pair<std::int64_t, int>> tp_list(const std::vector<GptPlanOptions>& vs) {
  std::vector<std::pair<std::int64_t, int>> out;
  for (const GptPlanOptions& v : vs) out.emplace_back(v.micro_batch, v.otp ? v.tp_chunks : 0);
  return out;
}

// The variant of plan_variants() with the fastest prediction that fits (the earliest on a tie),
// predicted one by one.
Prediction fastest_by_hand(const GptShape& m, const GptPlanOptions& o, const Choices& c,
                           const Machine& mc) {
  std::vector<Prediction> ps;
  for (const GptPlanOptions& v : plan_variants(m, o, c)) ps.push_back(predict(m, v, mc));
  std::size_t best = 0;
  for (std::size_t i = 1; i < ps.size(); ++i)
    if (ps[i].fits &&
        (!ps[best].fits || ps[i].timeline.iteration_us < ps[best].timeline.iteration_us))
      best = i;
  EXPECT_TRUE(ps[best].fits);
  return ps[best];
}

int chunks_of(const GptPlanOptions& o) {
  return o.otp ? o.tp_chunks : 0;
}

}  // namespace

TEST(TpChoice, VariantsAreTpOffThenEveryDividingChunkCount) {
  GptShape m = test::small_gpt();  // seq 16
  m.seq = 12;
  Choices c;
  c.tp_chunks = true;
  // 1x2x1x1, batch 8: 8 sequences of 12 = 96 tokens per rank: 2, 4 and 8 divide.
  GptPlanOptions o = test::plan_on("1x2x1x1", 8);
  EXPECT_EQ(tp_list(plan_variants(m, o, c)),
            (std::vector<std::pair<std::int64_t, int>>{{0, 0}, {0, 2}, {0, 4}, {0, 8}}));
  // Gx > 1 as well.
  o.grid = GridShape::parse("2x1x1x1");
  EXPECT_EQ(plan_variants(m, o, c).size(), 4u);
  // With the micro-batch chosen too (batch 2: 0 = 24 tokens, 1 = 12 tokens): 8 does not divide 12.
  o = test::plan_on("1x2x1x1", 2);
  c.micro_batch = true;
  EXPECT_EQ(tp_list(plan_variants(m, o, c)),
            (std::vector<std::pair<std::int64_t, int>>{
                {0, 0}, {0, 2}, {0, 4}, {0, 8}, {1, 0}, {1, 2}, {1, 4}}));
  // 6 tokens (seq 6, one sequence): 2 alone.
  m.seq = 6;
  o = test::plan_on("2x2x1x1", 1);
  c.micro_batch = false;
  EXPECT_EQ(tp_list(plan_variants(m, o, c)),
            (std::vector<std::pair<std::int64_t, int>>{{0, 0}, {0, 2}}));
  // No forward output all-reduce (Gx = Gy = 1): tp changes nothing, tp off alone, even when the
  // plan asked for tp.
  o = test::plan_on("1x1x2x2", 8);
  o.otp = true;
  const std::vector<GptPlanOptions> v = plan_variants(m, o, c);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].otp);
  // Not chosen: the plan's own tp.
  c.tp_chunks = false;
  o = test::plan_on("2x1x1x1", 8);
  o.otp = true;
  o.tp_chunks = 4;
  EXPECT_EQ(tp_list(plan_variants(m, o, c)), (std::vector<std::pair<std::int64_t, int>>{{0, 4}}));
}

TEST(TpChoice, ChooseTakesTheFastestVariantsOwnPrediction) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  Choices c;
  c.tp_chunks = true;
  for (const char* grid : {"2x2x1x2", "4x2x1x1", "1x8x1x1", "1x1x2x4"}) {
    for (const char* overlap : {"none", "all"}) {
      GptPlanOptions o = test::plan_on(grid, 16);
      o.act_dtype = DType::bf16;
      parse_overlap(overlap, o);
      const Prediction p = choose(m, o, c, mc);
      const Prediction ref = fastest_by_hand(m, o, c, mc);
      const std::string where = std::string(grid) + " " + overlap;
      EXPECT_EQ(chunks_of(p.options), chunks_of(ref.options)) << where;
      EXPECT_EQ(p.timeline.iteration_us, ref.timeline.iteration_us) << where;
    }
  }
}

// The search with tp chosen: each configuration's choice is the fastest of its own variants,
// and among these grids tp wins on some and loses on others.
TEST(TpChoice, SearchChoosesTheFastestChunkCountPerConfiguration) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  SearchOptions so;
  so.gpus = 8;
  so.base.batch = 16;
  so.base.act_dtype = DType::bf16;
  parse_overlap("all", so.base);
  so.choose.tp_chunks = true;
  const SearchResult r = search(m, so, mc);
  int tp_won = 0, tp_lost = 0;
  for (const Candidate& cand : r.ranked) {
    if (!cand.fits) continue;
    GptPlanOptions o = so.base;
    o.grid = cand.options.grid;
    const Prediction ref = fastest_by_hand(m, o, so.choose, mc);
    EXPECT_EQ(chunks_of(cand.options), chunks_of(ref.options)) << o.grid.str();
    EXPECT_EQ(cand.timeline.iteration_us, ref.timeline.iteration_us) << o.grid.str();
    if (o.grid.gx * o.grid.gy > 1) (cand.options.otp ? tp_won : tp_lost) += 1;
  }
  EXPECT_GT(tp_won, 0);
  EXPECT_GT(tp_lost, 0);
}

// tp alone (no other overlap flag): its output all-reduces run under the GEMM slices, so the
// iteration is the replay's (asked for spans, simulate() always replays), not the sum of the
// terms with every collective blocking, which would price tp like no overlap at all.
TEST(TpChoice, TpAloneIsReplayedNotSummed) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  GptPlanOptions o = test::plan_on("2x2x1x2", 16);
  o.act_dtype = DType::bf16;
  o.otp = true;
  const Prediction p = predict(m, o, mc);
  std::vector<Span> spans;
  const Timeline replayed =
      simulate(m, p.compute, p.comm, o, mc, std::numeric_limits<double>::infinity(), &spans);
  EXPECT_EQ(p.timeline.iteration_us, replayed.iteration_us);
  GptPlanOptions none = o;
  none.otp = false;
  EXPECT_NE(p.timeline.iteration_us, predict(m, none, mc).timeline.iteration_us);
}
