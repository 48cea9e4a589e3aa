// The ring of dW blocks (see dw_window.hpp).
#include "train/dw_window.hpp"

#include <algorithm>

#include "ovb/error.hpp"

namespace ovb::gpt {

DwWindow::DwWindow(const GptShape& m, const GptPlanOptions& o, const ParamLayout& layout,
                   CommEngine& comm, TrackedMemory& mem)
    : comm_(comm) {
  std::int64_t largest = layout.head.lm_head.geom.block;
  for (const BlockParams& b : layout.blocks)
    for (int i = 0; i < 4; ++i) largest = std::max(largest, b.linear(i).geom.block);
  const int n = dw_slots(m, o);
  for (int k = 0; k < n; ++k)
    slots_.push_back({mem.allocate(static_cast<std::size_t>(largest) * 4, MemKind::grad_blocks)});
}

float* DwWindow::take() {
  if (slots_.empty())
    throw Error("gpt4d internal error: dW block requested with Gz = 1 and one micro-step");
  Slot& s = slots_[next_ % slots_.size()];
  ++next_;
  comm_.wait(s.reader);  // a no-op for -1 and for a reader already waited for
  s.reader = -1;
  return s.buffer.as<float>();
}

void DwWindow::hold(CollHandle reduce_scatter) {
  if (next_ == 0) throw Error("gpt4d internal error: dW reduce-scatter without a slot");
  slots_[(next_ - 1) % slots_.size()].reader = reduce_scatter;
}

void DwWindow::begin_iteration() {
  next_ = 0;
  for (Slot& s : slots_) s.reader = -1;
}

}  // namespace ovb::gpt
