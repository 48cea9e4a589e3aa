// The strategy table (ovb/model/strategy.hpp) on the synthetic machine: lookup and its error, each
// strategy's search through the table against the library's own search (search(),
// search_megatron()) configuration by configuration, every ranked entry predicted again alone
// (predict hook) to the same time and memory, a published run's config read into the settings,
// and the versus words of an entry.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/model/megatron_search.hpp"
#include "ovb/model/search.hpp"
#include "ovb/model/strategy.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

// 4 layers, hidden 64, 4 heads on 8 GPUs of the synthetic machine (2 nodes), batch 16.
StrategyQuery query_of(const Strategy& s, const Machine& mc) {
  StrategyQuery q;
  q.model = test::small_gpt();
  q.machine = &mc;
  q.gpus = 8;
  q.base.batch = 16;
  q.base.act_dtype = DType::bf16;
  q.settings = s.defaults();
  return q;
}

}  // namespace

TEST(Strategy, TableAndLookup) {
  ASSERT_EQ(strategies().size(), 2u);
  EXPECT_STREQ(strategies()[0]->name, "4d");
  EXPECT_STREQ(strategies()[1]->name, "megatron");
  EXPECT_EQ(&strategy("megatron"), strategies()[1]);
  EXPECT_EQ(strategy_names(), "4d or megatron");
  EXPECT_EQ(strategy_names("all"), "4d, megatron or all");
  try {
    strategy("fsdp");
    FAIL() << "no error for an unknown strategy";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown strategy 'fsdp': 4d or megatron");
  }
}

// Through the table: the same ranking, times and memory as search() itself, with overlap flags,
// recompute and the micro-batch chosen per configuration.
TEST(Strategy, FourDSearchIsTheLibrarySearch) {
  const Machine mc = test::synthetic_machine();
  const Strategy& s = strategy("4d");
  StrategyQuery q = query_of(s, mc);
  parse_overlap("oar,ors", q.base);
  q.base.recompute = true;
  q.choose.micro_batch = true;
  SearchOptions so;
  so.gpus = 8;
  so.base = q.base;
  so.choose = q.choose;
  const SearchResult ref = search(q.model, so, mc);
  const StrategySearch r = s.search(q);
  ASSERT_GT(ref.ranked.size(), 3u);
  ASSERT_EQ(r.size, ref.ranked.size());
  EXPECT_EQ(r.counts["configs"], ref.configs);
  EXPECT_EQ(r.counts["variants"], ref.variants);
  for (std::size_t i = 0; i < r.size; ++i) {
    const Candidate& c = ref.ranked[i];
    const StrategyView v = r.view(i);
    EXPECT_EQ(v.iteration_us, c.timeline.iteration_us) << i;
    EXPECT_EQ(v.memory_bytes, c.memory_bytes) << i;
    EXPECT_EQ(v.fits, c.fits) << i;
    EXPECT_EQ(v.config, c.grid.str()) << i;
    const nlohmann::json e = r.entry(i);
    EXPECT_EQ(e["strategy"], "4d");
    EXPECT_EQ(e["recompute"], "full");
    EXPECT_EQ(e["gx"].get<int>() * e["gy"].get<int>() * e["gz"].get<int>() * e["gdata"].get<int>(),
              8);
    EXPECT_EQ(e["micro_batch"], micro_batch(c.options)) << i;
    EXPECT_EQ(e["predicted_ms"].get<double>(), c.timeline.iteration_us / 1e3) << i;
  }
  // pow2_only from the settings: 8 GPUs have only power-of-two grids, so the same count; orders
  // "default" keeps one order per grid.
  q.settings["orders"] = "default";
  const StrategySearch one = s.search(q);
  EXPECT_EQ(one.counts["configs"], ref.grids - ref.invalid);
}

TEST(Strategy, MegatronSearchIsTheLibrarySearch) {
  const Machine mc = test::synthetic_machine();
  const Strategy& s = strategy("megatron");
  StrategyQuery q = query_of(s, mc);
  q.settings["pp"] = 2;
  MegatronSearchOptions o;
  o.gpus = 8;
  o.batch = 16;
  o.pp = 2;
  const MegatronSearchResult ref = search_megatron(q.model, o, mc);
  const StrategySearch r = s.search(q);
  ASSERT_GT(ref.ranked.size(), 3u);
  ASSERT_EQ(r.size, ref.ranked.size());
  for (std::size_t i = 0; i < r.size; ++i) {
    const MegatronPrediction& p = ref.ranked[i];
    const StrategyView v = r.view(i);
    EXPECT_EQ(p.config.pp, 2);
    EXPECT_EQ(v.iteration_us, p.time.iteration_us) << i;
    EXPECT_EQ(v.memory_bytes, p.memory.total()) << i;
    EXPECT_EQ(v.fits, p.fits) << i;
    EXPECT_EQ(r.entry(i), megatron_config_json(q.model, p, mc)) << i;
  }
}

// Every ranked configuration predicted alone from its entry: the search's own numbers (the same
// functions on the same inputs, so exactly equal).
TEST(Strategy, PredictReproducesEachRankedEntry) {
  const Machine mc = test::synthetic_machine();
  for (const Strategy* s : strategies()) {
    StrategyQuery q = query_of(*s, mc);
    q.choose.micro_batch = true;
    q.choose.shard_optimizer = true;
    const StrategySearch r = s->search(q);
    ASSERT_GT(r.size, 0u) << s->name;
    for (std::size_t i = 0; i < r.size; ++i) {
      const StrategyView want = r.view(i);
      const StrategyView got = s->predict(q, r.entry(i));
      EXPECT_EQ(got.iteration_us, want.iteration_us) << s->name << " " << want.config;
      EXPECT_EQ(got.memory_bytes, want.memory_bytes) << s->name << " " << want.config;
      EXPECT_EQ(got.fits, want.fits) << s->name << " " << want.config;
      EXPECT_EQ(got.config, want.config) << s->name;
    }
  }
  // A configuration of another GPU count is refused, not costed.
  const Strategy& meg = strategy("megatron");
  const StrategyQuery q = query_of(meg, mc);
  nlohmann::json e = meg.search(q).entry(0);
  e["dp"] = e["dp"].get<int>() * 2;
  EXPECT_THROW(meg.predict(q, e), UsageError);
}

// A published run's "config" (analysis/validation/published_runs.json): the settings it pins, the
// base options 4D takes from it; other keys (flash_attention: the machine's) left out.
TEST(Strategy, PublishedConfigIntoTheQuery) {
  const Machine mc = test::synthetic_machine();
  const nlohmann::json cfg = {{"pow2", true},
                              {"overlap", "oar,oag"},
                              {"recompute", "full"},
                              {"grad_dtype", "bf16"},
                              {"tp", 8},
                              {"sequence_parallel", false},
                              {"flash_attention", true}};
  const Strategy& four = strategy("4d");
  StrategyQuery q = query_of(four, mc);
  four.from_config(cfg, q);
  EXPECT_EQ(q.settings["pow2_only"], true);
  EXPECT_TRUE(q.base.oar && !q.base.ors && q.base.oag && !q.base.otp);
  EXPECT_TRUE(q.base.recompute);
  EXPECT_EQ(q.base.grad_dtype, DType::bf16);
  // The chunked tensor-parallel all-reduce is a flag like the others ("all" leaves it out).
  StrategyQuery t = query_of(four, mc);
  four.from_config({{"overlap", "oar,tp"}}, t);
  EXPECT_TRUE(t.base.oar && t.base.otp && !t.base.ors);
  four.from_config({{"overlap", "all"}}, t);
  EXPECT_TRUE(t.base.oar && t.base.ors && t.base.oag && !t.base.otp);

  const Strategy& meg = strategy("megatron");
  StrategyQuery m = query_of(meg, mc);
  meg.from_config(cfg, m);
  nlohmann::json want = meg.defaults();
  want["tp"] = 8;
  want["recompute"] = "full";
  want["sequence_parallel"] = false;
  EXPECT_EQ(m.settings, want);
}

TEST(Strategy, VersusWords) {
  EXPECT_EQ(strategy("4d").describe({{"gx", 2}, {"gy", 1}, {"gz", 4}, {"gdata", 8}}), "2x1x4x8");
  EXPECT_EQ(strategy("megatron")
                .describe({{"tp", 8},
                           {"pp", 4},
                           {"dp", 2},
                           {"micro_batch", 1},
                           {"virtual_stages", 3},
                           {"recompute", "selective"},
                           {"era", "2022"}}),
            "tp=8 pp=4 dp=2 mb=1 v=3 selective (Megatron-LM era 2022)");
  EXPECT_EQ(strategy("megatron")
                .describe({{"tp", 8},
                           {"pp", 1},
                           {"dp", 2},
                           {"micro_batch", 1},
                           {"virtual_stages", 1},
                           {"recompute", "none"},
                           {"tp_comm_overlap", true},
                           {"era", "core"}}),
            "tp=8 pp=1 dp=2 mb=1 v=1 none (Megatron-LM era core, tensor-parallel overlap)");
}
