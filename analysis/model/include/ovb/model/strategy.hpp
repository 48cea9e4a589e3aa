// The parallelisation strategies the model costs (AxoNN's 4D algorithm, the Megatron-LM strategy)
// behind one interface: each strategy is one file (src/strategy_<name>.cpp) filling a small struct
// of hooks (its options, a published run's settings, the search, one configuration's prediction,
// the words for one configuration), and one row of the table in src/strategy.cpp, the way
// nccl-tests registers a collective. ovb-model search, versus and validate go through the table
// only, so a third strategy (FSDP / ZeRO-3, say) is one new file plus one row there.
//
//   const Strategy& s = strategy("megatron");
//   StrategyQuery q{shape, &machine, 1024, base, {}, s.defaults()};
//   const StrategySearch r = s.search(q);   // r.view(0): the fastest that fits, if any fits
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ovb/cli_fwd.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

// What a strategy is asked: one model on one machine and GPU count.
struct StrategyQuery {
  GptShape model;
  const Machine* machine = nullptr;  // outlives the query and every StrategySearch made from it
  int gpus = 0;
  // Every strategy: batch and act_dtype. 4D: also overlap flags, recompute, caching, grad dtype,
  // sharding (the run configuration's options; grid ignored).
  GptPlanOptions base;
  Choices choose;  // 4D: chosen per configuration (micro-batch, sharding)
  // The strategy's own settings (Strategy::defaults() with what was given: its options, or a
  // published run's "config").
  nlohmann::json settings = nlohmann::json::object();
};

// One configuration of any strategy, as every command sees it.
struct StrategyView {
  double iteration_us = 0;
  double memory_bytes = 0;  // per GPU
  bool fits = false;
  std::string config;  // in words: "2x2x1x2:y,x,z", "tp=8 pp=64 dp=6 mb=1 v=1 full"
  // A few named terms of the iteration, in ms (the strategy's own names).
  std::vector<std::pair<std::string, double>> terms_ms;
};

// A strategy's ranking of every valid configuration: fitting ones first, then by predicted time.
// Its functions read the search's own result, kept alive by them.
struct StrategySearch {
  std::size_t size = 0;   // configurations ranked (0: none valid, see `invalid`)
  std::string invalid;    // why none is valid (the search command's error), when size is 0
  double elapsed_ms = 0;  // the search alone
  std::function<StrategyView(std::size_t)> view;
  std::function<nlohmann::json(std::size_t)> entry;  // a search "configs" entry, without "rank"
  // ovb-model search's table: the columns after "rank" and the cells of the i-th configuration
  // (its entry given, to reuse what it computed).
  std::vector<std::string> columns;
  std::function<std::vector<std::string>(std::size_t, const nlohmann::json&)> row;
  nlohmann::json counts;  // the search JSON's "counts" of this strategy
  std::string summary;    // the lines ovb-model search prints above the table
  std::string none_fit;   // the lines it prints when no configuration fits
};

struct Strategy {
  const char* name;         // --strategy word and the JSON's "strategy": "4d"
  const char* about;        // for --strategy's help: "AxoNN's 4D algorithm"
  const char* short_title;  // "no <short_title> configuration fits", "best <short_title> ..."
  const char* title;        // "<title> is 1.5x faster"
  // The settings with nothing given.
  nlohmann::json (*defaults)();
  // Registers the strategy's own command-line options on app; the function returned gives their
  // values, after parsing, as settings.
  std::function<nlohmann::json()> (*add_options)(CLI::App& app);
  // Writes the settings into a search JSON's "inputs" object.
  void (*write_inputs)(const nlohmann::json& settings, nlohmann::json& inputs);
  // A published run's "config" object (analysis/validation/published_runs.json) into the query:
  // its settings and, for 4D, the base options it states. Throws UsageError for a bad value.
  void (*from_config)(const nlohmann::json& config, StrategyQuery& q);
  // Every valid configuration, costed and ranked. Throws UsageError for impossible settings.
  StrategySearch (*search)(const StrategyQuery& q);
  // One configuration given by the keys of its search entry (as entry() writes them) with the
  // query's model, machine, base and settings. Throws UsageError when it is invalid.
  StrategyView (*predict)(const StrategyQuery& q, const nlohmann::json& entry);
  // The configuration of a search entry in the words of the versus line: "2x2x2x4",
  // "tp=8 pp=8 dp=16 mb=1 v=3 selective".
  std::string (*describe)(const nlohmann::json& entry);
};

// Every strategy, in the order of the table (the first is --strategy's default).
const std::vector<const Strategy*>& strategies();
// Throws UsageError naming the known ones.
const Strategy& strategy(std::string_view name);
// "4d or megatron", "4d, megatron or fsdp": the names for messages (with `last` added at the end
// when not empty).
std::string strategy_names(const std::string& last = "");

}  // namespace ovb::model
