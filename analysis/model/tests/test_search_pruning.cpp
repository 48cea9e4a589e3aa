// The search's shortcuts (search_choice.cpp: memory first, lower bounds, replays that give up)
// against its exhaustive reference (SearchOptions::exhaustive: every variant of every
// configuration replayed in full): the whole ranked list and every count must be identical, on
// models, GPU counts, batches, overlap flags and memory limits that exercise every path (some
// configurations fit only with micro-steps or sharding, some not at all). Also the lower bound
// itself: compute plus blocking communication never exceeds the iteration and, without overlap
// flags, is the iteration. The batches are the smallest that still exercise each choice (a
// replay's cost grows with the micro-steps: the exhaustive reference replays every variant).
#include <gtest/gtest.h>

#include <string>

#include "helpers.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/search.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

struct Case {
  std::string name;
  GptShape model;
  Machine machine;
  int gpus;
  std::int64_t batch;
  std::string overlap;
  bool recompute = false, shard_gradients = false, cache_weights = false, pow2 = false;
};

Machine with_limit_gb(Machine mc, double gb) {
  mc.memory_bytes = gb * 1e9 / mc.memory_usable_fraction * mc.ranks_per_device;
  return mc;
}

SearchOptions options_of(const Case& c) {
  SearchOptions so;
  so.gpus = c.gpus;
  so.pow2_only = c.pow2;
  so.base.batch = c.batch;
  so.base.act_dtype = DType::bf16;
  so.base.recompute = c.recompute;
  so.base.cache_weights = c.cache_weights;
  so.base.shard_optimizer = so.base.shard_gradients = c.shard_gradients;
  parse_overlap(c.overlap, so.base);
  so.choose.micro_batch = so.choose.shard_optimizer = true;
  return so;
}

// Runs both searches and compares everything they report. Returns the exhaustive result.
SearchResult expect_same_search(const Case& c, SearchOptions so) {
  const SearchResult fast = search(c.model, so, c.machine);
  so.exhaustive = true;
  const SearchResult ref = search(c.model, so, c.machine);
  EXPECT_EQ(fast.grids, ref.grids) << c.name;
  EXPECT_EQ(fast.invalid, ref.invalid) << c.name;
  EXPECT_EQ(fast.invalid_example, ref.invalid_example) << c.name;
  EXPECT_EQ(fast.configs, ref.configs) << c.name;
  EXPECT_EQ(fast.variants, ref.variants) << c.name;
  EXPECT_EQ(fast.unfit, ref.unfit) << c.name;
  EXPECT_EQ(fast.unfit_by_term, ref.unfit_by_term) << c.name;
  EXPECT_EQ(fast.memory_limit_bytes, ref.memory_limit_bytes) << c.name;
  EXPECT_EQ(fast.ranked.size(), ref.ranked.size()) << c.name;
  for (std::size_t i = 0; i < std::min(fast.ranked.size(), ref.ranked.size()); ++i) {
    const Candidate &a = fast.ranked[i], &b = ref.ranked[i];
    const std::string where = c.name + " rank " + std::to_string(i + 1) + " " + b.grid.str();
    EXPECT_EQ(a.grid.str(), b.grid.str()) << where;
    EXPECT_EQ(a.options.grid.str(), b.options.grid.str()) << where;
    EXPECT_EQ(a.options.micro_batch, b.options.micro_batch) << where;
    EXPECT_EQ(a.options.shard_optimizer, b.options.shard_optimizer) << where;
    EXPECT_EQ(a.options.shard_gradients, b.options.shard_gradients) << where;
    EXPECT_EQ(a.options.otp, b.options.otp) << where;
    EXPECT_EQ(a.options.otp ? a.options.tp_chunks : 0, b.options.otp ? b.options.tp_chunks : 0)
        << where;
    EXPECT_EQ(a.fits, b.fits) << where;
    EXPECT_EQ(a.memory_bytes, b.memory_bytes) << where;
    EXPECT_EQ(a.memory.total(), b.memory.total()) << where;
    test::expect_same_timeline(a.timeline, b.timeline, where);
  }
  return ref;
}

// Counts of what the reference chose: the case must exercise the choices it is meant to.
struct Exercised {
  std::int64_t fit = 0, unfit = 0, micro_steps = 0, sharded = 0;
};
Exercised exercised(const SearchResult& r) {
  Exercised e;
  for (const Candidate& c : r.ranked) {
    (c.fits ? e.fit : e.unfit) += 1;
    e.micro_steps += c.fits && micro_steps(c.options) > 1 ? 1 : 0;
    e.sharded += c.fits && c.options.shard_optimizer ? 1 : 0;
  }
  return e;
}

}  // namespace

TEST(SearchPruning, SameRankedListAndCountsAsTheExhaustiveSearch) {
  const Machine a100 = load_machine("perlmutter-a100"), h100 = load_machine("dgx-h100");
  Machine noisy = h100;  // interference: the replays' stretched compute and comm paths
  noisy.compute_slowdown = 0.2;
  noisy.comm_slowdown = 0.3;
  const std::vector<Case> cases = {
      {"13B/64 none", gpt_preset("13B"), a100, 64, 512, "none"},
      {"13B/64 all recompute zero2", gpt_preset("13B"), a100, 64, 128, "all", true, true},
      {"13B/64 oar,ors limit 12 GB", gpt_preset("13B"), with_limit_gb(a100, 12), 64, 128,
       "oar,ors"},
      {"1.3B/48 oag cache", gpt_preset("1.3B"), noisy, 48, 96, "oag", false, false, true},
      {"1.3B/128 all interference", gpt_preset("1.3B"), noisy, 128, 128, "all"},
      {"175B/256 pow2 recompute", gpt_preset("175B"), a100, 256, 32, "all", true, false, false,
       true},
      {"175B/512 none limit 30 GB", gpt_preset("175B"), with_limit_gb(h100, 30), 512, 128, "none"},
  };
  std::int64_t unfit = 0;
  for (const Case& c : cases) {
    const Exercised e = exercised(expect_same_search(c, options_of(c)));
    EXPECT_GT(e.fit, 0) << c.name;
    EXPECT_GT(e.micro_steps, 0) << c.name;
    EXPECT_GT(e.sharded, 0) << c.name;
    unfit += e.unfit;
  }
  EXPECT_GT(unfit, 0);  // and configurations where nothing fits
}

// Nothing chosen (each configuration's one variant), and the x,y,z order only.
TEST(SearchPruning, SameWithoutChoicesAndOrders) {
  const Case c{"13B/64 oag", gpt_preset("13B"), load_machine("perlmutter-a100"), 64, 512, "oag"};
  SearchOptions so = options_of(c);
  so.choose = {};
  expect_same_search(c, so);
  so.choose.micro_batch = true;
  so.all_orders = false;
  expect_same_search(c, so);
}

// --tp-chunks auto as well: tp variants (their compute part of the bound is 0, the sliced GEMMs
// are rated per slice) next to the others, with and without the other overlap flags and with
// interference; the reference must choose tp on some configurations and not on others.
TEST(SearchPruning, SameWithTpChunksChosen) {
  const Machine a100 = load_machine("perlmutter-a100");
  Machine noisy = load_machine("dgx-h100");
  noisy.compute_slowdown = 0.2;
  noisy.comm_slowdown = 0.3;
  const std::vector<Case> cases = {
      {"1.3B/16 all,tp", gpt_preset("1.3B"), a100, 16, 64, "all"},
      {"1.3B/8 none", gpt_preset("1.3B"), a100, 8, 16, "none"},
      {"13B/64 oar,ors interference", gpt_preset("13B"), noisy, 64, 32, "oar,ors", true},
  };
  std::int64_t with_tp = 0, without_tp = 0;
  for (const Case& c : cases) {
    SearchOptions so = options_of(c);
    so.choose.tp_chunks = true;
    const SearchResult ref = expect_same_search(c, so);
    for (const Candidate& x : ref.ranked)
      if (x.fits && x.grid.gx * x.grid.gy > 1) (x.options.otp ? with_tp : without_tp) += 1;
  }
  EXPECT_GT(with_tp, 0);
  EXPECT_GT(without_tp, 0);
}

// The bound the search prunes with, on every overlap flag: never above the iteration; without
// flags the iteration itself (every collective blocks), to rounding.
TEST(SearchPruning, ComputePlusBlockingCommBoundsTheIteration) {
  const Machine mc = load_machine("perlmutter-a100");
  const GptShape m = gpt_preset("1.3B");
  for (const char* overlap : {"none", "oar", "ors", "oag", "all"})
    for (bool sharded : {false, true})
      for (std::int64_t mb : {0, 2}) {
        GptPlanOptions o = test::plan_on("2x2x2x4", 32);
        o.act_dtype = DType::bf16;
        o.micro_batch = mb;
        o.shard_optimizer = sharded;
        o.recompute = sharded;
        parse_overlap(overlap, o);
        const Prediction p = predict(m, o, mc);
        const double bound =
            p.compute.total_us(m.layers, o.recompute) + blocking_comm_us(p.comm, o);
        const double t = p.timeline.iteration_us;
        const std::string where = std::string(overlap) + " sharded " + std::to_string(sharded) +
                                  " mb " + std::to_string(mb);
        EXPECT_LE(bound, t * (1 + 1e-12)) << where;
        // With tp the output all-reduces run under the GEMM slices: blocking communication alone
        // still bounds the iteration, and it is smaller by those all-reduces.
        GptPlanOptions tp = o;
        tp.otp = true;
        const Prediction q = predict(m, tp, mc);
        EXPECT_LE(blocking_comm_us(q.comm, tp), q.timeline.iteration_us * (1 + 1e-12)) << where;
        EXPECT_LT(blocking_comm_us(q.comm, tp), blocking_comm_us(p.comm, o)) << where;
        if (std::string(overlap) == "none") {
          EXPECT_NEAR(bound, t, 1e-12 * t) << where;
        }
      }
}
