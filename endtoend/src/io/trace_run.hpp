// --trace DIR: one trace per rank through the profiling part's tracer (ovb::trace), when the
// build has it; without it --trace is an error saying so (never silently ignored).
#pragma once

#include <memory>

#include "config.hpp"
#include "ovb/backend.hpp"
#include "ovb/launch.hpp"

namespace ovb::gpt {

// UsageError when --trace is given and the build has no tracer.
void check_trace_support(const Config& cfg);

// Starts tracing on construction (when --trace is given), stops and writes in finish().
class TraceRun {
 public:
  TraceRun(const Config& cfg, const LaunchContext& ctx, Backend& backend);
  ~TraceRun();
  void finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ovb::gpt
