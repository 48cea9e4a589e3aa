// The performance model's entry point: predicted iteration time of one GPT configuration on one
// machine, with its breakdown (compute, communication per dimension, exposed communication,
// interference, memory per GPU). Used by ovb-model (search, explain, compare) and linkable by
// gpt4d to print the prediction beside its measurement:
//
//   const ovb::model::Machine mc = ovb::model::load_machine("perlmutter-a100");
//   const ovb::model::Prediction p = ovb::model::predict(shape, plan_options, mc);
//   std::cout << ovb::model::format_breakdown(p);
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ovb/gpt_plan.hpp"
#include "ovb/run_config.hpp"  // parse_overlap, overlap_string, grid_json
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/plan_comm.hpp"
#include "ovb/model/timeline.hpp"

namespace ovb::model {

struct Prediction {
  GptShape shape;
  GptPlanOptions options;
  std::string machine;
  ComputeTerms compute;
  PlanComm comm;
  Timeline timeline;
  GptMemory memory;
  double memory_limit_bytes = 0;  // memory_bytes * usable fraction / ranks per device
  bool fits = false;
  double peak_tflops = 0;  // of one device; 0 when the machine's peak is unknown (no FLOP report)

  double iteration_ms() const { return timeline.iteration_us / 1e3; }
};

// Memory one rank may use on mc.
double memory_limit_bytes(const Machine& mc);

// Throws UsageError when the plan is invalid for this grid (validate_gpt_plan's message).
Prediction predict(const GptShape& m, const GptPlanOptions& o, const Machine& mc);

// Summary JSON of a configuration (the keys of a search "configs" entry, results/SCHEMA.md
// "Model"); summary_json adds "strategy": "4d", "recompute", choice_json() and the FLOP report
// ("flops").
nlohmann::json config_json(const GridShape& g, const Timeline& t, double memory_bytes,
                           double memory_limit_bytes, bool fits);
nlohmann::json summary_json(const Prediction& p);
// {"micro_batch": sequences per micro-step, "micro_steps", "shard_optimizer"}: the plan's
// micro-batch and sharding, as chosen (choices.hpp) or given, in search and explain entries.
nlohmann::json choice_json(const GptPlanOptions& o);

// A few lines: iteration, compute, interference, exposed and total communication per group,
// TFLOP/s per GPU with MFU and HFU, memory per GPU.
std::string format_breakdown(const Prediction& p);

}  // namespace ovb::model
