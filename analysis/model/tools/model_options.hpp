// Options shared by `search` and `explain`: the run configuration's model, batch, schedule and
// dtype options (ovb/run_config.hpp) plus the machine, and the "inputs" object of their JSON output.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ovb/cli_fwd.hpp"
#include "ovb/model/choices.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/run_config.hpp"

namespace ovb::model::cli {

struct ModelArgs {
  RunConfig run;  // dtype "auto": the machine's precision
  std::string machine;
  int ranks_per_device = 0;
  std::string epilogues = "machine";  // the 4D trainer's linears: machine, fused or separate
  const CLI::App* app = nullptr;  // the subcommand, for which shape options were given

  void add(CLI::App& app);
  GptShape shape() const;                        // throws UsageError
  Machine load() const;  // the machine, with --ranks-per-device and --epilogues applied
  GptPlanOptions plan(const Machine& mc) const;  // grid left 1x1x1x1
  Choices choices() const;                       // what was given as auto
  nlohmann::json inputs_json(const GptShape& m, const GptPlanOptions& o, const Machine& mc) const;
};

}  // namespace ovb::model::cli
