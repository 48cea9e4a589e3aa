// Annotated ranges around phases, layers, collectives and measured regions.
// In CUDA builds every range is an NVTX range in the suite's own domain ("OverlapBench"), so
// Nsight and the suite's CUPTI tracer see it. In any build, a RangeRecorder installed by the
// profiler (host timeline) receives the same ranges, so the host backend writes the same traces.
#pragma once

#include <cstdint>
#include <string>

namespace ovb {

// What a range is about; collectives carry their kind, group and bytes.
struct RangeInfo {
  std::string name;              // e.g. "fwd/layer3/qkv", "all_reduce x"
  std::string category;          // "phase", "layer", "collective", "compute", "measure"
  std::string coll_kind;         // collectives only: "all_reduce", ...
  std::string group;             // collectives only: "x", "y", "z", "data", "world"
  std::int64_t bytes = -1;       // collectives only: S of metrics.md
};

class RangeRecorder {
 public:
  virtual ~RangeRecorder() = default;
  virtual void begin(const RangeInfo& info) = 0;
  virtual void end() = 0;
};

// Installs (or removes, with nullptr) the process-wide recorder. Not owned.
void set_range_recorder(RangeRecorder* r);
RangeRecorder* range_recorder();

// RAII range: NVTX push/pop (CUDA builds) and recorder begin/end (when one is installed).
class ScopedRange {
 public:
  explicit ScopedRange(const RangeInfo& info);
  explicit ScopedRange(const std::string& name, const char* category = "phase");
  ~ScopedRange();
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

}  // namespace ovb
