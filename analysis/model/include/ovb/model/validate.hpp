// Validation against published large-scale training runs: each run of the data file
// (analysis/validation/published_runs.json) is predicted with its stated strategy and, where
// published, its parallel configuration (the rest searched), and the predicted TFLOP/s per GPU in
// the run's own FLOP convention (model, hardware, or narayanan: the Megatron-LM papers' Eq. (3))
// is compared with the published one. A run whose source publishes seconds per iteration instead
// is compared in time (the same FLOP count over either time, so the error is the same ratio).
// Calculon's predictions of the same runs are read beside (validate_calculon.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ovb/gpt_plan.hpp"

namespace ovb::model {

struct PublishedRun {
  std::string id, source, strategy, machine, convention;
  int gpus = 0;
  GptShape model;
  std::int64_t batch = 0;
  nlohmann::json config;      // tp, pp, micro_batch, virtual_stages, recompute, ... (4d: overlap)
  double published_tflops = 0;       // per GPU; 0 when the source publishes a time instead
  double published_iteration_s = 0;  // seconds per iteration, where that is what is published
  std::string group;            // runs summarised together (e.g. one paper's table); may be empty
  std::string known_miss;       // a stated finding: the run is expected outside the tolerance
  // Why config.era was inferred (infer_megatron_era) for a Megatron run that names none and
  // is not costed as today's Megatron-Core; empty otherwise.
  std::string era_inferred;
  // Whether every figure of the entry was checked against its source; when not, `unverified`
  // says which figures could not be and why. Absent in the file: not stated.
  std::optional<bool> verified;
  std::string unverified;
};

struct ValidationRow {
  PublishedRun run;
  std::string config;            // the configuration predicted, in words
  double predicted_ms = 0;
  double predicted_tflops = 0;   // per GPU, in the run's convention
  // Published TFLOP/s per GPU; for a run published as a time, that FLOP count over that time.
  double published_tflops = 0;
  // 100 (predicted - published) / published in TFLOP/s, = 100 (published / predicted - 1) in
  // time: positive when the prediction is faster.
  double error_pct = 0;
  std::optional<double> calculon_s;          // the second tool's predicted time, where it has one
  std::optional<double> calculon_error_pct;  // its error, by the same rule
  bool fits = false;             // the best configuration fits in memory
  bool within = false;           // |error| <= tolerance
  // As expected: within the tolerance, or a known miss that is outside it.
  bool as_expected() const { return run.known_miss.empty() ? within : !within; }
  nlohmann::json best;           // the configuration's JSON (search entry)
};

struct ValidationSet {
  double tolerance_pct = 0;
  std::vector<PublishedRun> runs;
};

// Default data file: $OVB_VALIDATION_FILE, else analysis/validation/published_runs.json of the
// source tree.
std::string default_validation_file();
ValidationSet load_published_runs(const std::string& path);  // throws UsageError naming the field
ValidationRow validate_run(const PublishedRun& run, double tolerance_pct);
nlohmann::json validation_row_json(const ValidationRow& r);

}  // namespace ovb::model
