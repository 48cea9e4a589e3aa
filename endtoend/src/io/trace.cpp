// --trace DIR through ovb::trace when built with it (see trace.hpp).
#include "io/trace.hpp"

#include "ovb/error.hpp"

namespace ovb::gpt {

#ifdef OVB_GPT4D_HAVE_TRACE
#error "ovb::trace integration: see the profiling part's trace.hpp"
#else
struct TraceRun::Impl {};

void check_trace_support(const Config& cfg) {
  if (!cfg.trace_dir.empty())
    throw UsageError("--trace: this build of gpt4d has no tracer (the profiling part, target "
                     "ovb::trace, was not built; configure with OVB_PARTS including profiling)");
}

TraceRun::TraceRun(const Config&, const LaunchContext&, Backend&) {}
TraceRun::~TraceRun() = default;
void TraceRun::finish() {}
#endif

}  // namespace ovb::gpt
