// The configurations the execution-graph and Chakra tests export: small grids under every
// overlap flag, recomputation with and without weight caching, micro-steps, the sharded
// optimizer and gradients, an ORS window of 1, and Llama.
#pragma once

#include <string>
#include <vector>

#include "helpers.hpp"

namespace ovb::model::test {

struct ExportCase {
  std::string name;
  GptShape m;
  GptPlanOptions o;
};

inline std::vector<ExportCase> export_cases() {
  std::vector<ExportCase> cs;
  auto add = [&](std::string name, const char* grid, std::int64_t batch, auto&& set) {
    ExportCase c{std::move(name), small_gpt(2), plan_on(grid, batch)};
    set(c.m, c.o);
    cs.push_back(c);
  };
  add("none 1x2x2x1", "1x2x2x1", 4, [](GptShape&, GptPlanOptions&) {});
  add("oar,ors 1x2x2x1 cached", "1x2x2x1", 4, [](GptShape&, GptPlanOptions& o) {
    o.oar = o.ors = true;
    o.cache_weights = true;
  });
  add("all 2x2x2x1", "2x2x2x1", 4,
      [](GptShape&, GptPlanOptions& o) { o.oar = o.ors = o.oag = true; });
  add("all 2x2x2x2 recompute micro-steps", "2x2x2x2", 8, [](GptShape&, GptPlanOptions& o) {
    o.oar = o.ors = o.oag = true;
    o.recompute = true;
    o.micro_batch = 1;
  });
  add("oag 2x1x2x2 recompute cached", "2x1x2x2:z,x,y", 8, [](GptShape&, GptPlanOptions& o) {
    o.oag = true;
    o.recompute = o.cache_weights = true;
  });
  add("ors window 1, sharded optimizer 2x1x2x2", "2x1x2x2", 8, [](GptShape&, GptPlanOptions& o) {
    o.ors = true;
    o.ors_window = 1;
    o.shard_optimizer = true;
  });
  add("sharded gradients, micro-steps 1x2x1x2", "1x2x1x2", 8, [](GptShape&, GptPlanOptions& o) {
    o.oar = o.ors = true;
    o.shard_optimizer = o.shard_gradients = true;
    o.micro_batch = 2;
  });
  add("llama all 2x2x2x1 recompute", "2x2x2x1", 4, [](GptShape& m, GptPlanOptions& o) {
    m = gpt_preset("llama-tiny");
    m.seq = 16;
    m.vocab = 128;
    o.oar = o.ors = o.oag = true;
    o.recompute = true;
  });
  return cs;
}

}  // namespace ovb::model::test
