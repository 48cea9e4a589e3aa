// Z all-gathers of weight shards: which buffer a gathered block lives in, when it is gathered,
// and the one-layer-ahead prefetch of OAG.
//
// With Gz = 1 nothing is gathered: the working copy of the weight is used directly.
// Cached (default): every layer has its own block buffer, gathered once in forward and used
// again in backward (and by a recomputed forward). Not cached (--no-cache-weights): the blocks
// are gathered again in backward (by the recomputed forward with --recompute), into a ring of
// K slots of the largest block-linear size - K = 1 (4 with recompute, whose backward holds a
// block's four weights at once), plus 1 for the prefetched block with OAG - and the LM head into
// a buffer of its own. The gathers of an iteration and their slots are read from gpt_schedule()
// (its weight-gather issues); acquire() checks each request against them.
#pragma once

#include <vector>

#include "model/layout.hpp"
#include "ovb/tracked_memory.hpp"
#include "train/comm.hpp"

namespace ovb::gpt {

class WeightGatherer {
 public:
  // `work` is the flat working copy (activation dtype) holding the shards.
  WeightGatherer(const GptShape& m, const GptPlanOptions& o, const ParamLayout& layout,
                 CommEngine& comm, TrackedMemory& mem, const void* work);

  // The gathered block [out_local, in_local] of `lp`, ready on the compute stream.
  const void* acquire(const LinearParams& lp, Phase phase, bool recompute);
  // The compute stream's work enqueued so far is the block's last use (frees its ring slot).
  // A recomputed forward's release keeps the block: that block's backward uses it next.
  void release(const LinearParams& lp, bool recompute);
  // Every micro-step gathers again, by the same schedule (the weights do not change within an
  // iteration, but only cached blocks would survive from one micro-step to the next).
  void begin_micro_step(int k);

 private:
  struct Request {
    int layer;   // -1: LM head
    int linear;  // 0..3 in the block, 4: LM head
    Phase phase;
    bool recompute;
    bool operator==(const Request&) const = default;
  };
  struct Slot {
    Buffer buffer;
    int holder = -1;  // schedule index of the block in it, -1 when free
  };
  int slot_of(std::size_t k) const;
  void issue(std::size_t k);
  const LinearParams& params(const Request& r) const;

  const GptPlanOptions& o_;
  const ParamLayout& layout_;
  CommEngine& comm_;
  const char* work_;
  std::size_t act_size_;
  bool active_ = false;  // Gz > 1
  std::vector<Request> schedule_;
  std::vector<int> ring_index_;  // per schedule entry: its slot
  std::vector<CollHandle> handle_;
  std::vector<bool> issued_;
  std::size_t cursor_ = 0;
  int micro_step_ = 0;
  std::vector<Slot> slots_;
};

}  // namespace ovb::gpt
