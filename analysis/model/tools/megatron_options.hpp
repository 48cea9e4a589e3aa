// Options of the Megatron-LM strategy and the strategy choice (search, versus, explain):
// kept together so they can move into the one run-configuration table as a block.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "ovb/model/megatron_search.hpp"

namespace ovb::model::cli {

struct MegatronArgs {
  std::string strategy = "4d";  // 4d | megatron | all
  std::string recompute = "any";
  std::string era = "core";  // megatron_era: the release whose code paths are costed
  int tp = 0, pp = 0, micro_batch = 0, virtual_stages = 0;
  int first_stage_layers = 0, last_stage_layers = 0;  // 0: as the other stages
  bool no_sequence_parallel = false, no_distributed_optimizer = false, tp_across_nodes = false;

  // with_strategy: also register --strategy (search); versus always runs both.
  void add(CLI::App& app, bool with_strategy);
  bool want_4d() const { return strategy == "4d" || strategy == "all"; }
  bool want_megatron() const { return strategy == "megatron" || strategy == "all"; }
  MegatronSearchOptions search_options(int gpus, std::int64_t batch, DType act_dtype) const;
  nlohmann::json inputs_json() const;
};

}  // namespace ovb::model::cli
