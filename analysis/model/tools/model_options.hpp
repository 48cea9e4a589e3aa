// Options shared by `search` and `explain`: the GPT shape, batch, machine, overlap flags,
// recomputation, weight caching and dtypes, and the "inputs" object of their JSON output.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "ovb/gpt_plan.hpp"
#include "ovb/memory_options.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model::cli {

struct ModelArgs {
  std::string preset;
  std::int64_t layers = 0, hidden = 0, heads = 0, seq = 2048, vocab = 50304, batch = 0;
  std::string machine;
  std::string overlap = "none";
  bool recompute = false;
  MemoryOptions memory;  // --cache-weights, --ors-window
  std::string dtype, grad_dtype = "fp32";
  int ranks_per_device = 0;

  void add(CLI::App& app);
  GptShape shape() const;                        // throws UsageError
  Machine load() const;                          // the machine, with --ranks-per-device applied
  GptPlanOptions plan(const Machine& mc) const;  // grid left 1x1x1x1
  nlohmann::json inputs_json(const GptShape& m, const GptPlanOptions& o, const Machine& mc) const;
};

}  // namespace ovb::model::cli
