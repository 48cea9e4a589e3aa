// The step phase: gradient norm, the one world all-reduce of (loss sum, norm sum of squares),
// and AdamW with global-norm clipping, all on the compute stream (the clip factor is computed on
// the device from the reduced norm: no host synchronisation).
//
// The norm counts every parameter once: each rank adds the squares of the tensors it owns
// (layout.hpp), so the world sum is the norm of the whole model's gradient on every grid.
#pragma once

#include <vector>

#include "config.hpp"
#include "kernels/kernels.hpp"
#include "model/layout.hpp"
#include "train/comm.hpp"
#include "train/state.hpp"

namespace ovb::gpt {

class Optimizer {
 public:
  Optimizer(const Config& cfg, const ParamLayout& layout, ModelState& st, Kernels& k,
            CommEngine& comm);
  // Requires every gradient to be final (CommEngine::wait_all()). Uses st.scalars[0] (the loss
  // sum so far) and leaves the reduced (loss sum, norm^2) there.
  void step(int iter);

 private:
  struct Run {
    std::int64_t offset, count;
    bool decay;
  };
  const Config& cfg_;
  ModelState& st_;
  Kernels& k_;
  CommEngine& comm_;
  std::vector<Run> norm_runs_, update_runs_;  // consecutive tensors merged
};

}  // namespace ovb::gpt
