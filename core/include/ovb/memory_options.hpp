// The options that shape a rank's memory under the 4D algorithm (weight caching, the ORS window
// of dW blocks), registered in one place for every binary that plans a GPT run (gpt4d, ovb-model),
// so that each is spelled, defaulted, checked and written to JSON the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ovb/gpt_plan.hpp"

namespace ovb {

struct MemoryOptions {
  bool cache_weights = false;
  int ors_window = kDefaultOrsWindow;

  void apply(GptPlanOptions& o) const;
  static MemoryOptions of(const GptPlanOptions& o);
  nlohmann::json to_json() const;
  // Reads the keys of to_json(). Result files written before the ORS window existed have no
  // "ors_window": their runs kept every dW block, which a window of INT_MAX (clamped to 4L+1
  // by dw_slots()) reproduces.
  static MemoryOptions from_json(const nlohmann::json& j);
};

// --cache-weights / --no-cache-weights (default: not cached), --ors-window N.
void add_memory_options(CLI::App& app, MemoryOptions& opts);

}  // namespace ovb
