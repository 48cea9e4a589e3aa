// The model's prediction of one gpt4d run beside that run's own measurement (gpt4d --predict
// MACHINE): the configuration is gpt4d's own GptShape and GptPlanOptions (the structs it trains
// with, so nothing is converted), the machine as the run shares its devices, and per (group,
// collective kind) the predicted time alone, exposed time, call count and bytes per iteration
// against gpt4d's summary.collectives (per iteration, mean over ranks), plus the iteration time
// against the measured median. error % = 100 (predicted - measured) / measured.
//
//   Machine mc = machine_for_run(load_machine("host-cpu"),
//                                ranks_per_device_of(run_context(&backend, ctx)));
//   Prediction p = predict(cfg.model, cfg.plan, mc);            // before training
//   ... train, build the result ...
//   result["prediction"] = prediction_vs_measured(p, mc, result["summary"]);
//   std::cout << format_vs_measured(result["prediction"]);
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ovb/model/machine.hpp"
#include "ovb/model/predict.hpp"

namespace ovb::model {

// mc as a run sees it whose ranks share each device `ranks_per_device` at a time (calibrate.hpp
// ranks_per_device_of: ranks per GPU, on the host ranks per core): a value > 1 replaces the file's
// ranks_per_device (the rule ovb-model compare applies to a result's context); 1 keeps the
// file's value.
Machine machine_for_run(Machine mc, int ranks_per_device);

// The "prediction" object of a gpt4d result (results/SCHEMA.md, "gpt4d result"). `summary` is the
// result's summary: median_time_ms and collectives [{kind, group, count, bytes, time_ms,
// exposed_ms}] per iteration. Throws Error when summary lacks median_time_ms.
nlohmann::json prediction_vs_measured(const Prediction& p, const Machine& mc,
                                      const nlohmann::json& summary);

// That object as text: one row per (group, kind) with calls, time alone and exposed time per
// iteration, predicted beside measured, then the iteration time with its error.
std::string format_vs_measured(const nlohmann::json& vs);

}  // namespace ovb::model
