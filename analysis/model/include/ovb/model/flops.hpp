// FLOP accounting of a prediction as papers report it: TFLOP/s per GPU and fraction of peak in
// model FLOPs (MFU: the model's FLOPs whatever is recomputed) and hardware FLOPs (HFU:
// recomputation counted). The FLOP formulas are core's (ovb::metrics: transformer_model_flop
// through GptShape::model_flop, gpt_hardware_flop, gpt_selective_recompute_flop); this only
// applies them to an iteration time.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "ovb/gpt_plan.hpp"
#include "ovb/model/megatron.hpp"

namespace ovb::model {

struct FlopReport {
  double model_flop = 0, hardware_flop = 0;  // per iteration, all GPUs
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0;
  double mfu = 0, hfu = 0;  // fractions of the device peak
};

// Hardware FLOP per iteration: model FLOP, + one forward (full recompute, x 4/3; of the share
// `full_share` of the layers that recompute, Megatron's block recomputation), + the attention
// core again (selective).
double hardware_flop(const GptShape& m, std::int64_t batch, Recompute r, double full_share = 1);

FlopReport flop_report(const GptShape& m, std::int64_t batch, Recompute r, double iteration_us,
                       int gpus, double peak_tflops, double full_share = 1);

// {"model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu"} (fractions, as metrics::mfu).
nlohmann::json flops_json(const FlopReport& f);

}  // namespace ovb::model
