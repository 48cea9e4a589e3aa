// --predict MACHINE: the performance model's prediction (analysis/, ovb::model) of the run gpt4d
// is about to make - its own shape and plan, on MACHINE as the run shares its devices - made
// before training, so that a bad machine name or file is an error before any work; after the run,
// rank 0 prints the predicted breakdown and a predicted-vs-measured table, and the result gets a
// "prediction" object (results/SCHEMA.md). Without the analysis part in the build (no target
// ovb::model), --predict is an error saying so.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "config.hpp"
#include "ovb/backend.hpp"
#include "ovb/launch.hpp"

namespace ovb::gpt {

class PredictionRun {
 public:
  // Loads the machine and predicts cfg's plan when --predict is given; throws UsageError for a
  // bad machine, a machine the model cannot cost, or a build without the model.
  // The run's ranks per device (ranks per GPU, on the host ranks per core) share the machine's
  // devices, as `ovb-model compare` costs the result (ovb::model::ranks_per_device_of).
  PredictionRun(const Config& cfg, const Backend& backend, const LaunchContext& ctx);
  ~PredictionRun();

  // One line for the start of the run ("" without --predict).
  std::string headline() const;
  // Adds result["prediction"] (from result["summary"]) and returns the text to print: the
  // breakdown and the table ("" without --predict).
  std::string finish(nlohmann::json& result) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ovb::gpt
