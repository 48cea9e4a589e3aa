// The parameter layout: buckets as gpt_collectives() counts them, and every element of every
// global tensor owned by exactly one rank of the grid (so the gradient norm and the gathered
// comparisons count each parameter once).
#include <gtest/gtest.h>

#include <map>

#include "model/layout.hpp"

using namespace ovb;
using namespace ovb::gpt;

namespace {
GptShape tiny() {
  GptShape m = gpt_preset("tiny");
  m.seq = 16;
  m.vocab = 256;
  return m;
}
}  // namespace

TEST(Layout, BucketsMatchThePlan) {
  const GptShape m = tiny();
  for (const char* grid : {"1x1x1x1", "2x2x2x1", "2x1x2x2", "1x4x1x2", "4x2x1x1"}) {
    GptPlanOptions o;
    o.grid = GridShape::parse(grid);
    o.batch = 8;
    const ParamLayout p = make_layout(m, o, Coords{});
    ASSERT_EQ(p.buckets.size(), static_cast<std::size_t>(m.layers) + 1);
    std::int64_t expect_block = block_small_params(m, o.grid);
    for (const LinearSpec& s : block_linears(m)) expect_block += linear_geom(s, o.grid).shard;
    for (int l = 0; l < m.layers; ++l) {
      EXPECT_EQ(p.buckets[l].count, expect_block) << grid;
      EXPECT_EQ(p.buckets[l].small_count, block_small_params(m, o.grid)) << grid;
    }
    EXPECT_EQ(p.buckets.back().small_count, head_small_params(m, o.grid)) << grid;
    EXPECT_EQ(p.buckets.back().count,
              head_small_params(m, o.grid) + linear_geom(lm_head_linear(m), o.grid).shard);
    EXPECT_EQ(p.total, p.buckets.back().offset + p.buckets.back().count);
  }
}

TEST(Layout, EveryGlobalElementHasExactlyOneOwner) {
  const GptShape m = tiny();
  for (const char* grid : {"2x2x2x1", "2x1x2x2", "1x2x2x2", "4x1x1x2:y,x,z"}) {
    GptPlanOptions o;
    o.grid = GridShape::parse(grid);
    o.batch = 8;
    const Grid g(o.grid, o.grid.world());
    std::map<std::string, std::vector<int>> owners, holders;
    for (int r = 0; r < o.grid.world(); ++r) {
      const ParamLayout p = make_layout(m, o, g.coords(r));
      for (const TensorDesc& t : p.tensors) {
        auto& own = owners[t.name];
        auto& hold = holders[t.name];
        own.resize(static_cast<std::size_t>(t.rows * t.cols));
        hold.resize(own.size());
        for (std::int64_t e = 0; e < t.count; ++e) {
          hold[static_cast<std::size_t>(t.global_index(e))] += 1;
          if (t.owner) own[static_cast<std::size_t>(t.global_index(e))] += 1;
        }
      }
    }
    ASSERT_EQ(owners.size(), static_cast<std::size_t>(12 * m.layers + 5));
    for (const auto& [name, own] : owners) {
      for (std::size_t i = 0; i < own.size(); ++i) {
        ASSERT_EQ(own[i], 1) << grid << " " << name << " element " << i;
        ASSERT_GE(holders[name][i], 1) << grid << " " << name << " element " << i;
      }
    }
  }
}

TEST(Layout, WeightPiecesFollowTheSpec) {
  // Rank (x=1, y=0, z=1) of 2x2x2: QKV (normal) rows over Y, columns over X, Z shard 1;
  // attention-out (transposed) rows over X, columns over Y.
  const GptShape m = tiny();  // h = 64
  GptPlanOptions o;
  o.grid = GridShape::parse("2x2x2x1");
  o.batch = 8;
  Coords c;
  c[Dim::x] = 1;
  c[Dim::z] = 1;
  const ParamLayout p = make_layout(m, o, c);
  const TensorDesc& qkv = p[p.blocks[0].qkv.weight];
  EXPECT_EQ(qkv.rows, 192);
  EXPECT_EQ(qkv.cols, 64);
  EXPECT_EQ(qkv.row0, 0);
  EXPECT_EQ(qkv.col0, 32);
  EXPECT_EQ(qkv.block_rows, 96);
  EXPECT_EQ(qkv.flat0, 96 * 32 / 2);
  const TensorDesc& ao = p[p.blocks[0].attn_out.weight];
  EXPECT_EQ(ao.row0, 32);
  EXPECT_EQ(ao.col0, 0);
  EXPECT_EQ(ao.block_cols, 32);
  const TensorDesc& wte = p[p.head.wte];
  EXPECT_EQ(wte.col0, 32);
  EXPECT_EQ(wte.count, 256 * 32);
  EXPECT_FALSE(wte.owner);  // z = 1
}
