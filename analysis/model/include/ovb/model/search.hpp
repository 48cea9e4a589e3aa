// Configuration search: every (Gx, Gy, Gz, Gdata) with product = GPUs (all divisors, or powers of
// two only as AxoNN does) and every distinct X/Y/Z placement order, the invalid ones (the plan's
// divisibility rules) and those that do not fit in memory set aside, the rest ranked by predicted
// iteration time. What the user leaves open (SearchOptions::choose: the micro-batch, the sharded
// optimizer) is chosen per configuration among plan_variants() by preferred() (choices.hpp).
// Compute terms, memory and the collective list are built once per grid and variant and only
// re-costed per order, and only the variants that can still win are replayed
// (search_choice.cpp), so 65,536 GPUs x GPT-175B takes well under a second.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/timeline.hpp"

namespace ovb::model {

struct SearchOptions {
  int gpus = 0;
  bool pow2_only = false;  // AxoNN's enumeration: powers of two only
  bool all_orders = true;  // every distinct X/Y/Z order, else x,y,z only
  GptPlanOptions base;     // batch, recompute, caching, dtypes, overlap flags (grid ignored)
  Choices choose;          // chosen per configuration instead of taken from base
  // Replay every variant of every configuration in full, each with simulate() (the reference the
  // tests compare the search with; the same result, slower).
  bool exhaustive = false;
};

struct Candidate {
  GridShape grid;
  GptPlanOptions options;  // the plan as chosen: grid, micro_batch, shard_optimizer
  Timeline timeline;
  double memory_bytes = 0;
  GptMemory memory;
  bool fits = false;
};

struct SearchResult {
  std::int64_t grids = 0;       // (Gx, Gy, Gz, Gdata) tuples enumerated
  std::int64_t invalid = 0;     // of those, rejected by validate_gpt_plan
  std::string invalid_example;  // one of the reasons
  std::int64_t configs = 0;     // valid grids x distinct orders, costed
  std::int64_t variants = 0;    // configurations x plan variants (= configs when nothing chosen)
  std::int64_t unfit = 0;       // of those, not fitting in memory
  // The unfit ones by their largest memory term (GptMemory::largest_term(): why they do not fit;
  // of the variant that needs least memory when one is chosen).
  std::map<std::string, std::int64_t> unfit_by_term;
  double memory_limit_bytes = 0;
  std::vector<Candidate> ranked;  // fitting first, then by predicted time
};

// All (gx, gy, gz, gdata) with gx*gy*gz*gdata == gpus, in lexicographic order.
std::vector<GridShape> enumerate_grids(int gpus, bool pow2_only);
// The X/Y/Z orders of a grid that give distinct strides (x,y,z first).
std::vector<GridShape> distinct_orders(const GridShape& g);

SearchResult search(const GptShape& m, const SearchOptions& opt, const Machine& mc);

}  // namespace ovb::model
