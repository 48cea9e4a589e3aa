// The model's time of one compute step of the schedule (see step_cost.hpp): the replay's costs.
#include "ovb/model/step_cost.hpp"

#include "kernel_cost.hpp"

namespace ovb::model {

StepCoster::StepCoster(const GptShape& m, const GptPlanOptions& o, const Machine& mc)
    : ct_(compute_terms(m, o, mc)),
      pc_(plan_comm(m, o, mc)),
      costs_(std::make_unique<KernelCosts>(m, ct_, pc_, o, mc)) {}

StepCoster::~StepCoster() = default;

double StepCoster::compute_us(const Step& s) const { return costs_->compute_us(s); }

}  // namespace ovb::model
