// The ring of fp32 dW blocks that the Z reduce-scatters read from (Gz > 1; with Gz = 1, the
// slot that micro-steps after the first accumulate through).
//
// A layer's dW GEMM writes a block of the largest weight size; its reduce-scatter sends it into
// the layer's gradient shard. Without ORS the reduce-scatter is waited for at once and one slot
// serves every layer. With ORS the reduce-scatters stay in flight, bounded by a window of
// dw_slots() slots (ovb::GptPlanOptions::ors_window): taking a slot makes the compute stream wait
// for the reduce-scatter still reading it, the one issued `window` layers earlier. So memory is
// O(window) blocks, not O(layers), and the ring size is ovb::gpt_memory()'s grad_blocks term.
// With Gz = 1 the ring has one slot when there are several micro-steps: after the first, a dW
// GEMM writes there and the result is added to the gradient (model.hpp). The ring carries over
// from one micro-step to the next; begin_iteration() once per iteration.
#pragma once

#include <vector>

#include "model/layout.hpp"
#include "train/comm.hpp"
#include "ovb/tracked_memory.hpp"

namespace ovb::gpt {

class DwWindow {
 public:
  DwWindow(const GptShape& m, const GptPlanOptions& o, const ParamLayout& layout, CommEngine& comm,
           TrackedMemory& mem);

  // The next slot, free for the compute stream to write (waits for its previous reader).
  float* take();
  // The reduce-scatter issued from the slot last taken (it frees the slot when it completes).
  void hold(CollHandle reduce_scatter);
  void begin_iteration();
  int slots() const { return static_cast<int>(slots_.size()); }

 private:
  struct Slot {
    Buffer buffer;
    CollHandle reader = -1;
  };
  CommEngine& comm_;
  std::vector<Slot> slots_;
  std::size_t next_ = 0;  // slots taken this iteration
};

}  // namespace ovb::gpt
