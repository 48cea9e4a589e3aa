// Configuration search of the Megatron-LM strategy: every tp (dividing the heads, inside a node
// unless tensor parallelism across nodes is allowed),
// pp (dividing the layers), dp = GPUs / (tp * pp), micro-batch (powers of two dividing the batch
// per data rank), virtual stages (dividing the layers per stage) and recompute mode, invalid ones
// set aside, the rest ranked fitting first, then by predicted iteration time. Layer compute terms
// are built once per (tp, micro-batch).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "ovb/model/megatron.hpp"

namespace ovb::model {

struct MegatronSearchOptions {
  int gpus = 0;
  std::int64_t batch = 0;
  DType act_dtype = DType::bf16;
  std::vector<Recompute> recompute = {Recompute::none, Recompute::selective, Recompute::full};
  bool sequence_parallel = true;
  bool distributed_optimizer = true;
  bool tp_across_nodes = false;  // also tp larger than a node (its collectives then cross nodes)
  bool tp_comm_overlap = false;  // --tp-comm-overlap (MegatronConfig)
  bool untie_embeddings = false;  // --untie-embeddings-and-output-weights (MegatronConfig)
  // The release's code paths (megatron_era); its schedule also limits the search (no
  // interleaving at pp = 2 before mid-2024).
  MegatronFeatures features;
  // A published configuration pins these (0 = search every value).
  int tp = 0, pp = 0, micro_batch = 0, virtual_stages = 0;
  // Uneven pipeline: layers of the first / last stage (0 = even); only pp that split the rest
  // evenly over the other stages are searched (MegatronConfig).
  int first_stage_layers = 0, last_stage_layers = 0;
};

struct MegatronSearchResult {
  std::int64_t configs = 0;  // valid configurations costed
  std::int64_t unfit = 0;    // of those, not fitting in memory
  double memory_limit_bytes = 0;
  std::vector<MegatronPrediction> ranked;  // fitting first, then by predicted time
};

MegatronSearchResult search_megatron(const GptShape& m, const MegatronSearchOptions& opt,
                                     const Machine& mc);

// One configuration as a search "configs" entry: strategy, tp, pp, dp, micro_batch,
// virtual_stages, recompute, sequence_parallel, distributed_optimizer, predicted_ms, the time
// terms, memory terms, memory_bytes, memory_limit_bytes, fits, and the FLOP report.
nlohmann::json megatron_config_json(const GptShape& m, const MegatronPrediction& p,
                                    const Machine& mc);

}  // namespace ovb::model
