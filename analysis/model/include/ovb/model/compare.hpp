// Model vs measurement: for each measured gpt4d configuration (results/SCHEMA.md "gpt4d
// result", optionally with its ovb-trace analysis), the model's prediction beside the measurement,
// per configuration and per (dimension, collective kind), with error % = 100 (pred - meas) / meas;
// across configurations Spearman's rank correlation of predicted and measured iteration times and
// whether the measured fastest is in the predicted top k. Output: results/SCHEMA.md "compare".
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

struct MeasuredRun {
  std::string file;
  nlohmann::json result;  // gpt4d --out
  std::string trace_file;
  nlohmann::json trace;  // ovb-trace analyze --json, or null
};

// Inputs: files or folders (searched recursively for *.json). gpt4d results and trace analyses
// are told apart by their keys; a trace analysis belongs to the result whose file name without
// ".json" starts its own name (run.json <- run.trace-analysis.json). Throws UsageError for a file
// given by name that cannot be read or is neither, a trace analysis that matches no result, or no
// result at all; files found in folders that cannot be read are skipped and named in `skipped`.
std::vector<MeasuredRun> load_runs(const std::vector<std::string>& paths,
                                   std::vector<std::string>* skipped = nullptr);

// The model's inputs of a gpt4d result (config.model, grid, batch, overlap, dtype, recompute,
// cache_weights); throws UsageError naming the file and the missing key.
std::pair<GptShape, GptPlanOptions> config_of_result(const nlohmann::json& result,
                                                     const std::string& file);

struct Comparison {
  nlohmann::json doc;  // the "compare" JSON (without context)
  std::string text;    // the table printed by ovb-model compare
};

Comparison compare(const std::vector<MeasuredRun>& runs, const Machine& mc, int k);

}  // namespace ovb::model
