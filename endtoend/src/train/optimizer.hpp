// The step phase: gradient norm, the one world all-reduce of (loss sum, norm sum of squares),
// and AdamW with global-norm clipping, all on the compute stream (the clip factor is computed on
// the device from the reduced norm: no host synchronisation).
//
// The norm counts every parameter once: each rank adds the squares of the tensors it owns
// (layout.hpp), so the world sum is the norm of the whole model's gradient on every grid. With
// the sharded optimizer a gradient is final only in its data rank's chunk of each bucket, so each
// rank adds the owned elements of its chunks, and AdamW updates those chunks only; after each
// bucket's update its working weights are all-gathered over data (in place; with ORS behind the
// next buckets' updates, else waited for at once), and the step waits for those all-gathers
// before the next forward reads the weights. With sharded gradients (ZeRO-2) the gradient buffer
// holds only those chunks, at the same shard offsets as the moments.
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
    std::int64_t offset, count;  // flat buffers
    bool decay;
    std::int64_t shard;  // where `offset` is in the master and moment buffers
    std::int64_t grad;   // and in the gradient buffer (shard with sharded gradients, else offset)
  };
  struct BucketStep {
    const Bucket* bucket;
    std::vector<Run> runs;  // the rank's chunk, consecutive tensors of one decay merged
  };
  const Config& cfg_;
  ModelState& st_;
  Kernels& k_;
  CommEngine& comm_;
  bool sharded_;
  std::vector<Run> norm_runs_;  // consecutive owned ranges merged
  std::vector<BucketStep> buckets_;
};

}  // namespace ovb::gpt
