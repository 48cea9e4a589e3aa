// Where a bucket's full gradient lives with sharded gradients (ZeRO-2, ovb::gradients_sharded()):
// not in a flat buffer of the whole model but in a bucket buffer, only while the bucket's
// backward computes it and its data reduce-scatter reads it; the rank keeps the fp32 sum of its
// own chunks (ModelState::grads(), at the layout's shard offsets).
//
// Buffers: the head bucket's own (its LM-head gradient comes first in backward, its embedding
// gradients last, so it is live during the whole backward), and a ring of
// ovb::grad_bucket_slots() block-bucket buffers (all blocks have the same layout). Together they
// are the bucket part of gpt_memory()'s grads term.
//
// Accumulation over micro-steps happens after the reduce-scatter, on chunks: micro-step 0
// reduce-scatters straight into the rank's shard; a later micro-step reduce-scatters in place
// (into the buffer's own chunk) and that chunk is added into the shard when the buffer is taken
// again (after its reduce-scatter completes) or in finish(). So each micro-step issues every
// bucket's Z small-parameter all-reduce and data reduce-scatter (the plan lists them), and adds
// 1/Gdata of the bucket in fp32, where full accumulation would add the whole gradient.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/kernels.hpp"
#include "model/layout.hpp"
#include "ovb/tracked_memory.hpp"
#include "train/comm.hpp"

namespace ovb::gpt {

class GradBuckets {
 public:
  // `added`: the flat ranges that backward adds into (+=) rather than overwrites; they are zeroed
  // in a buffer each time it is taken. `shard`: the rank's fp32 gradient chunks.
  GradBuckets(const GptPlanOptions& o, const ParamLayout& layout,
              const std::vector<std::pair<std::int64_t, std::int64_t>>& added, CommEngine& comm,
              Kernels& k, TrackedMemory& mem, float* shard);

  // The buffer for bucket `b` (index into layout.buckets) this micro-step, ready for the compute
  // stream to write: its previous reduce-scatter waited for, that one's pending chunk added, the
  // added-into ranges zeroed. Element 0 is the bucket's first element.
  float* take(int b);
  // Where bucket b's data reduce-scatter writes the rank's chunk in micro-step k: the shard in
  // micro-step 0, else the taken buffer's own chunk (added into the shard later).
  float* reduce_target(int b, int k) const;
  // The reduce-scatter issued from bucket b's buffer in micro-step k. Without ORS it is waited
  // for (and its chunk added) at once.
  void hold(int b, CollHandle reduce_scatter, int k);
  // After CommEngine::wait_all(): adds the chunks still pending, so the shard is final.
  void finish();
  void begin_iteration();
  // A buffer big enough for bucket b, with no waits (initialisation's scratch); clear() zeroes
  // every buffer afterwards.
  float* scratch(int b) const;
  void clear();

 private:
  struct Slot {
    Buffer buffer;
    CollHandle reader = -1;  // the data reduce-scatter reading the buffer
    int pending = -1;        // bucket whose in-place chunk is still to be added into the shard
  };
  void settle(Slot& s);
  bool head(int b) const { return b + 1 == static_cast<int>(buckets_.size()); }

  const std::vector<Bucket>& buckets_;
  CommEngine& comm_;
  Kernels& k_;
  float* shard_;
  bool ors_;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> added_;  // per bucket, relative
  Slot head_;
  std::vector<Slot> ring_;
  std::size_t next_ = 0;           // ring slots taken this iteration
  std::vector<Slot*> current_;     // per bucket: the slot last taken for it
  std::vector<CollHandle> first_;  // per bucket: micro-step 0's reduce-scatter into the shard
};

}  // namespace ovb::gpt
