// NVTX ranges in the "OverlapBench" domain (cuda/entry.cpp, in programs that link the CUDA
// backend) plus the host-timeline recorder (see ovb/annotate.hpp).
#include "ovb/annotate.hpp"

#include "cuda_entry.hpp"

namespace ovb {

namespace {
RangeRecorder* g_recorder = nullptr;
}  // namespace

void set_range_recorder(RangeRecorder* r) { g_recorder = r; }
RangeRecorder* range_recorder() { return g_recorder; }

ScopedRange::ScopedRange(const RangeInfo& info) {
  cuda_entry::nvtx_push(info);
  if (g_recorder) g_recorder->begin(info);
}

ScopedRange::ScopedRange(const std::string& name, const char* category)
    : ScopedRange(RangeInfo{name, category, "", "", -1, -1}) {}

ScopedRange::~ScopedRange() {
  if (g_recorder) g_recorder->end();
  cuda_entry::nvtx_pop();
}

}  // namespace ovb
