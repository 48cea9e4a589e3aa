// FLOP accounting of a prediction (see flops.hpp).
#include "ovb/model/flops.hpp"

#include "ovb/metrics.hpp"

namespace ovb::model {

double hardware_flop(const GptShape& m, std::int64_t batch, Recompute r, double full_share) {
  const double B = static_cast<double>(batch), s = static_cast<double>(m.seq);
  const double L = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  const double F = m.model_flop(batch);
  if (r == Recompute::selective) return F + metrics::gpt_selective_recompute_flop(B, s, L, h);
  if (r == Recompute::full) return F + full_share * (metrics::gpt_hardware_flop(F, true) - F);
  return metrics::gpt_hardware_flop(F, false);
}

FlopReport flop_report(const GptShape& m, std::int64_t batch, Recompute r, double iteration_us,
                       int gpus, double peak_tflops, double full_share) {
  FlopReport f;
  f.model_flop = m.model_flop(batch);
  f.hardware_flop = hardware_flop(m, batch, r, full_share);
  const double sec = iteration_us / 1e6;
  if (sec <= 0 || gpus < 1) return f;
  f.model_tflops_per_gpu = metrics::tflops_per_gpu(f.model_flop, sec, gpus);
  f.hardware_tflops_per_gpu = metrics::tflops_per_gpu(f.hardware_flop, sec, gpus);
  f.mfu = metrics::mfu(f.model_tflops_per_gpu, peak_tflops);
  f.hfu = metrics::mfu(f.hardware_tflops_per_gpu, peak_tflops);
  return f;
}

nlohmann::json flops_json(const FlopReport& f) {
  return {{"model_tflops_per_gpu", f.model_tflops_per_gpu},
          {"hardware_tflops_per_gpu", f.hardware_tflops_per_gpu},
          {"mfu", f.mfu},
          {"hfu", f.hfu}};
}

}  // namespace ovb::model
