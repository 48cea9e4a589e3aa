// --trace DIR through ovb::trace when built with it (see trace_run.hpp). The capture window covers
// every iteration, so a trace holds iters x the collectives of gpt_collectives().
#include "io/trace_run.hpp"

#include <optional>

#include "ovb/error.hpp"

#ifdef OVB_GPT4D_HAVE_TRACE
#include "ovb/trace.hpp"
#endif

namespace ovb::gpt {

#ifdef OVB_GPT4D_HAVE_TRACE
struct TraceRun::Impl {
  Backend& backend;
  std::optional<TraceSession> session;
};

void check_trace_support(const Config&) {}

TraceRun::TraceRun(const Config& cfg, const LaunchContext& ctx, Backend& backend)
    : impl_(new Impl{backend, std::nullopt}) {
  if (cfg.trace_dir.empty()) return;
  impl_->session.emplace(TraceOptions{cfg.trace_dir, ctx.rank, ctx.world, &backend});
  impl_->session->start();
}

TraceRun::~TraceRun() = default;  // the session writes on destruction if finish() was not reached

void TraceRun::finish() {
  if (!impl_->session) return;
  impl_->backend.synchronize();
  impl_->session->stop();
  impl_->session->write();
}
#else
struct TraceRun::Impl {};

void check_trace_support(const Config& cfg) {
  if (!cfg.trace_dir.empty())
    throw UsageError(
        "--trace: this build of gpt4d has no tracer (the profiling part, target "
        "ovb::trace, was not built; configure with OVB_PARTS including profiling)");
}

TraceRun::TraceRun(const Config&, const LaunchContext&, Backend&) {}
TraceRun::~TraceRun() = default;
void TraceRun::finish() {}
#endif

}  // namespace ovb::gpt
