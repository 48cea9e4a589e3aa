// NVTX ranges in the "OverlapBench" domain (CUDA builds: cuda/entry.cpp) plus the host-timeline
// recorder (see ovb/annotate.hpp).
#include "ovb/annotate.hpp"

#include "cuda_entry.hpp"

namespace ovb {

namespace {
RangeRecorder* g_recorder = nullptr;
}  // namespace

void set_range_recorder(RangeRecorder* r) { g_recorder = r; }
RangeRecorder* range_recorder() { return g_recorder; }

ScopedRange::ScopedRange(const RangeInfo& info) {
  cuda::nvtx_push(info);
  if (g_recorder) g_recorder->begin(info);
}

ScopedRange::ScopedRange(const std::string& name, const char* category)
    : ScopedRange(RangeInfo{name, category, "", "", -1, -1}) {}

ScopedRange::~ScopedRange() {
  if (g_recorder) g_recorder->end();
  cuda::nvtx_pop();
}

}  // namespace ovb
