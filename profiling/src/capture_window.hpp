// When the tracer keeps events: the capture window(s). Records are kept when their interval
// intersects a window; every other record is dropped as its buffer completes, so a long run traced
// for a few iterations keeps only those in memory. Independent of CUDA (unit-tested on the host).
//
// Triggers, first that applies (the injected tracer reads them from the environment):
//  - explicit: open() / close() (the linked TraceSession's start() / stop());
//  - the CUDA profiler API: windows between cudaProfilerStart and cudaProfilerStop (Megatron-LM's
//    --profile, Nsight's capture range);
//  - iterations of an NVTX range: from the start of its `start_iter`-th occurrence (0-based) to the
//    end of occurrence start_iter + iters - 1 (the window stays open to exit when iters <= 0);
//  - time: from start_s after initialisation, for duration_s (to exit when duration_s <= 0).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ovb::trace {

struct WindowConfig {
  enum class Mode { time, range, profiler_api, explicit_calls };
  Mode mode = Mode::time;
  double start_s = 0;
  double duration_s = 0;  // <= 0: until exit
  std::string range;      // NVTX range name counted as an iteration
  int start_iter = 0;
  int iters = 0;  // <= 0: until exit

  // From OVB_TRACE_CAPTURE (time|range|profiler_api), OVB_TRACE_START_S, OVB_TRACE_DURATION_S,
  // OVB_TRACE_RANGE, OVB_TRACE_START_ITER, OVB_TRACE_ITERS. A malformed value throws ovb::Error
  // naming the variable. OVB_TRACE_RANGE alone implies mode range.
  static WindowConfig from_env(const std::function<const char*(const char*)>& getenv_fn = nullptr);
  std::string describe() const;
};

class CaptureWindow {
 public:
  static constexpr std::int64_t kOpenEnd = std::numeric_limits<std::int64_t>::max();

  CaptureWindow(const WindowConfig& cfg, std::int64_t init_ns);

  // Triggers; times on the tracer's clock. Each is ignored unless the mode uses it.
  void open(std::int64_t t);
  void close(std::int64_t t);
  void profiler_start(std::int64_t t);
  void profiler_stop(std::int64_t t);
  void range_push(std::string_view name, std::int64_t t);
  void range_pop(std::string_view name, std::int64_t t);

  // Whether [begin, end] intersects a window known so far (an open window extends to infinity).
  // Records arrive after they happened, so a window opened later can never claim them.
  bool keeps(std::int64_t begin, std::int64_t end) const;
  // The windows so far, for the trace header.
  std::vector<std::pair<std::int64_t, std::int64_t>> windows() const;

 private:
  void open_locked(std::int64_t t);
  void close_locked(std::int64_t t);
  WindowConfig cfg_;
  mutable std::mutex mu_;
  std::vector<std::pair<std::int64_t, std::int64_t>> windows_;  // closed ones end at their close
  int occurrences_ = 0;  // pushes of the iteration range seen
  int completed_ = 0;    // pops of the iteration range seen (the caller names the popped range)
};

}  // namespace ovb::trace
