// --predict MACHINE through ovb::model when built with it (see prediction.hpp). The model is given
// gpt4d's own GptShape and GptPlanOptions (grid and order, batch, seq, shape, dtypes, overlap
// flags, recompute, weight caching): nothing is converted, so the prediction is of exactly the
// run, and equals `ovb-model explain` of the same configuration on the same machine.
#include "io/prediction.hpp"

#include <cstdio>

#include "ovb/error.hpp"

#ifdef OVB_GPT4D_HAS_MODEL
#include "ovb/context.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/run_prediction.hpp"
#endif

namespace ovb::gpt {

#ifdef OVB_GPT4D_HAS_MODEL
struct PredictionRun::Impl {
  model::Machine machine;
  model::Prediction prediction;
};

PredictionRun::PredictionRun(const Config& cfg, const Backend& backend, const LaunchContext& ctx) {
  if (cfg.predict.empty()) return;
  try {
    model::Machine mc = model::machine_for_run(
        model::load_machine(cfg.predict), model::ranks_per_device_of(run_context(&backend, ctx)));
    model::Prediction p = model::predict(cfg.model, cfg.plan, mc);
    impl_.reset(new Impl{std::move(mc), std::move(p)});
  } catch (const UsageError& e) {
    throw UsageError(std::string("--predict: ") + e.what());
  }
}

std::string PredictionRun::headline() const {
  if (!impl_) return "";
  const model::Prediction& p = impl_->prediction;
  char buf[160];
  std::snprintf(buf, sizeof buf, "  model: %s predicts %.3f ms per iteration%s",
                impl_->machine.name.c_str(), p.iteration_ms(),
                p.fits ? "" : " (does not fit in its memory)");
  return buf;
}

std::string PredictionRun::finish(nlohmann::json& result) const {
  if (!impl_) return "";
  result["prediction"] =
      model::prediction_vs_measured(impl_->prediction, impl_->machine, result["summary"]);
  return model::format_breakdown(impl_->prediction) +
         model::format_vs_measured(result["prediction"]);
}
#else
struct PredictionRun::Impl {};

PredictionRun::PredictionRun(const Config& cfg, const Backend&, const LaunchContext&) {
  if (!cfg.predict.empty())
    throw UsageError(
        "--predict: gpt4d was built without the analysis part (ovb::model); configure with "
        "OVB_PARTS including analysis");
}

std::string PredictionRun::headline() const {
  return "";
}
std::string PredictionRun::finish(nlohmann::json&) const {
  return "";
}
#endif

PredictionRun::~PredictionRun() = default;

}  // namespace ovb::gpt
