// The time of one compute step of the schedule (ovb/gpt_schedule.hpp) under the model's cost
// functions: what an exporter of the schedule (the Chakra traces of `ovb-model export-chakra`)
// gives each kernel. A GEMM step is costed from its own shape (gemm_term, so a GEMM cut into
// chunks is costed per chunk); every other kernel by name from ComputeTerms, where the model
// folds some kernels into a neighbour (docs/chakra.md, "Durations"):
//   <lin>.fwd  GEMM + the layer's epilogue (bias, GELU or SwiGLU, RoPE, residual), the epilogue
//              in proportion to the step's rows;      <lin>.dx  GEMM + the epilogue's backward;
//   <lin>.dw   GEMM;      <lin>.accumulate  the layer's fp32 gradient accumulation (bias included);
//   ln1, ln2, ln_f (+ .bwd)  the norm;  attention (+ .bwd)  attention + its reads and writes;
//   embedding, ce (+ .bwd)  the head's terms;  bucket.accumulate  a bucket's chunk added (sharded
//   gradients);  adamw  the optimizer in proportion to the bucket's elements;
//   0: what the model counts inside another step (.stats, .bwd_stats, gelu, swiglu, rope and
//   their .bwd, ce_combine, .bias_accumulate, bucket.zero, sumsq).
// Summed over the schedule this is ComputeTerms::total_us() (tested), so the export and the
// model agree on the compute of one iteration. An op name the model does not know is an Error.
// The costs are the replay's own (KernelCosts, analysis/model/src/kernel_cost.hpp): the export and
// the timeline price every step with one definition.
#pragma once

#include <memory>

#include "ovb/gpt_plan.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/plan_comm.hpp"

namespace ovb::model {

class KernelCosts;

class StepCoster {
 public:
  StepCoster(const GptShape& m, const GptPlanOptions& o, const Machine& mc);
  ~StepCoster();
  StepCoster(const StepCoster&) = delete;  // the costs refer to ct_ and pc_
  StepCoster& operator=(const StepCoster&) = delete;
  double compute_us(const Step& s) const;  // s.kind == compute
  const ComputeTerms& terms() const { return ct_; }

 private:
  ComputeTerms ct_;
  PlanComm pc_;
  std::unique_ptr<KernelCosts> costs_;  // remembers GEMM costs by shape as it goes
};

}  // namespace ovb::model
