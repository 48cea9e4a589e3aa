// What ovb-model chooses per configuration when the user leaves it open (--micro-batch auto,
// --shard-optimizer auto, --tp-chunks auto): the plan variants tried for one grid, and which of two
// outcomes wins. The search tries them per grid and order; explain per grid (choose()).
#pragma once

#include <cstdint>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model {

struct Choices {
  // Every micro-batch that gpt4d accepts: one micro-step (0) and every divisor of the local batch
  // below it. All divisors, not powers of two only: a local batch such as 12 has micro-batches
  // (3, 6) that powers of two miss, and a local batch has few divisors, so trying all is cheap.
  bool micro_batch = false;
  // Without and with the sharded optimizer (only where Gdata > 1: elsewhere it changes nothing),
  // and with the gradients sharded too (ZeRO-2) when the options ask for them (--shard-gradients).
  bool shard_optimizer = false;
  // The overlap flag tp and its row slices: off, and on with every N of tp_chunk_candidates()
  // that divides the variant's tokens per rank and micro-step (only where the forward output
  // all-reduce's group, Gx or Gy, is larger than 1: elsewhere tp changes nothing).
  bool tp_chunks = false;
};

// The row-slice counts tried with tp on: 2, 4, 8.
const std::vector<int>& tp_chunk_candidates();

// 0, then every divisor of local_batch below it, largest first (fewer micro-steps first).
std::vector<std::int64_t> micro_batch_candidates(std::int64_t local_batch);

// The plan options tried for o's grid on model m, o itself first: o when nothing is chosen;
// otherwise every micro-batch of micro_batch_candidates() (o.micro_batch when not chosen) x
// sharding off, on, and on with the gradients when o.shard_gradients (o's sharding when not
// chosen) x tp off, then on with each tp_chunk_candidates() N that divides tokens_per_rank() of
// that micro-batch (o's tp when not chosen). o must be valid with micro_batch 0 when it is chosen.
std::vector<GptPlanOptions> plan_variants(const GptShape& m, const GptPlanOptions& o,
                                          const Choices& c);

// The rule that picks among variants: one that fits beats one that does not; among those that
// fit the faster, among those that do not the smaller; a tie keeps the earlier (fewer
// micro-steps, no sharding, tp off).
bool preferred(bool fits, double time_us, double memory_bytes, bool best_fits, double best_time_us,
               double best_memory_bytes);

// The preferred prediction over plan_variants(o, c) (predict() for each). Throws UsageError when
// o is invalid.
Prediction choose(const GptShape& m, const GptPlanOptions& o, const Choices& c, const Machine& mc);

}  // namespace ovb::model
