// TraceSession: the linked entry point of the tracer (see ovb/trace.hpp). Picks the host timeline
// or the CUPTI tracer by backend, bounds the capture window, and makes sure the trace is written
// however the process ends (write(), destructor, std::exit, SIGTERM/SIGINT).
#include "ovb/trace.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <mutex>

#include "host_timeline.hpp"
#include "ovb/annotate.hpp"
#include "ovb/backend.hpp"
#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/launch.hpp"
#include "ovb/trace_writer.hpp"
#include "rank_env.hpp"
#include "signal_flush.hpp"

#ifdef OVB_TRACE_HAVE_CUPTI
#include "cuda/cupti_tracer.hpp"
#endif

namespace ovb {

namespace {

#ifdef OVB_TRACE_HAVE_CUPTI
// Feeds the suite's ScopedRanges to the CUPTI tracer (which pushes external correlation ids).
class CuptiRangeRecorder final : public RangeRecorder {
 public:
  void begin(const RangeInfo& info) override { trace::cuda::CuptiTracer::get().range_begin(info); }
  void end() override { trace::cuda::CuptiTracer::get().range_end(); }
};
#endif

std::mutex g_active_mu;
TraceSession::Impl* g_active = nullptr;  // one session per process

}  // namespace

struct TraceSession::Impl {
  TraceOptions opts;
  std::string path;
  bool cuda = false;
  bool started = false, stopped = false, written = false;
  std::mutex mu;  // write() may race with the signal watcher thread
  std::unique_ptr<trace::HostTimeline> host;
#ifdef OVB_TRACE_HAVE_CUPTI
  CuptiRangeRecorder cupti_ranges;
#endif

  void stop_locked() {
    if (!started || stopped) return;
    stopped = true;
    if (host) host->stop();
#ifdef OVB_TRACE_HAVE_CUPTI
    if (cuda) {
      if (range_recorder() == &cupti_ranges) set_range_recorder(nullptr);
      auto& t = trace::cuda::CuptiTracer::get();
      t.window().close(t.now());
    }
#endif
  }

  nlohmann::ordered_json context;  // taken at construction: writing may happen in exit paths

  trace::TraceHeader header() const {
    trace::TraceHeader h;
    h.rank = opts.rank;
    h.world_size = opts.world;
    h.backend = cuda ? "nccl" : "mpi";
    h.extra["traceName"] = path;
    h.extra["context"] = context;
    return h;
  }

  std::string write_locked() {
    if (written) return path;
    stop_locked();
    trace::TraceHeader h = header();
    if (host) {
      h.base_ns = host->first_ns();
      h.extra["ovbTracer"] = {{"tracer", "host timeline"}, {"mode", "linked"}};
      trace::TraceWriter w(path, h);
      host->write(w);
      w.finish();
    }
#ifdef OVB_TRACE_HAVE_CUPTI
    if (cuda) trace::cuda::CuptiTracer::get().write(path, h);
#endif
    written = true;
    return path;
  }

  // For exits that skip the normal path: never throws, says what went wrong.
  void write_quietly() noexcept {
    try {
      std::lock_guard lock(mu);
      if (started && !written) write_locked();
    } catch (const std::exception& e) {
      std::cerr << "[rank " << opts.rank << "] trace: could not write " << path << ": " << e.what()
                << std::endl;
    }
  }
};

TraceSession::TraceSession(const TraceOptions& opts) : impl_(std::make_unique<Impl>()) {
  impl_->opts = opts;
  if (opts.dir.empty()) throw UsageError("the trace folder is empty");
  if (!opts.backend) throw UsageError("a trace session needs the backend it traces");
  impl_->path = trace::rank_trace_path(opts.dir, opts.rank);
  // No collective here (query_launch_context splits the world): sessions need not be created in
  // step on every rank, and the context is taken now so exit paths never call into the backend.
  LaunchContext lc;
  lc.rank = opts.rank;
  lc.world = opts.world;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) lc.host = host;
  impl_->context = nlohmann::ordered_json(run_context(opts.backend, lc));
  const std::string_view backend = opts.backend->name();
  impl_->cuda = backend == "cuda";
  if (impl_->cuda) {
#ifdef OVB_TRACE_HAVE_CUPTI
    trace::cuda::TracerConfig cfg;
    cfg.api_records = opts.api_records;
    cfg.window.mode = trace::WindowConfig::Mode::explicit_calls;
    cfg.mode = "linked";
    trace::cuda::CuptiTracer::get().start(
        cfg);  // now: concurrent-kernel mode must see modules load
#else
    throw UsageError("this build has no CUDA tracer (configure with CUDA and CUPTI)");
#endif
  } else if (backend == "host") {
    impl_->host = std::make_unique<trace::HostTimeline>();
  } else {
    throw UsageError("no tracer for backend '" + std::string(backend) + "'");
  }
  {
    std::lock_guard lock(g_active_mu);
    if (g_active) {
#ifdef OVB_TRACE_HAVE_CUPTI
      if (impl_->cuda) trace::cuda::CuptiTracer::get().stop();
#endif
      throw Error("a trace session is already active in this process");
    }
    g_active = impl_.get();
  }
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      std::lock_guard lock(g_active_mu);
      if (g_active) g_active->write_quietly();
    });
  });
  trace::on_termination_signal([](int) {
    std::lock_guard lock(g_active_mu);
    if (g_active) g_active->write_quietly();
  });
}

TraceSession::~TraceSession() {
  impl_->write_quietly();
  {
    std::lock_guard lock(g_active_mu);
    if (g_active == impl_.get()) g_active = nullptr;
  }
  trace::clear_termination_callback();
#ifdef OVB_TRACE_HAVE_CUPTI
  if (impl_->cuda) trace::cuda::CuptiTracer::get().stop();
#endif
}

void TraceSession::start() {
  std::lock_guard lock(impl_->mu);
  if (impl_->started) return;
  impl_->started = true;
  if (impl_->host) impl_->host->start();
#ifdef OVB_TRACE_HAVE_CUPTI
  if (impl_->cuda) {
    auto& t = trace::cuda::CuptiTracer::get();
    t.window().open(t.now());
    set_range_recorder(&impl_->cupti_ranges);
  }
#endif
}

void TraceSession::stop() {
  std::lock_guard lock(impl_->mu);
  impl_->stop_locked();
}

std::string TraceSession::write() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->started) throw Error("trace session written before it was started");
  return impl_->write_locked();
}

const std::string& TraceSession::path() const {
  return impl_->path;
}

bool TraceSession::cuda_tracer_built() {
#ifdef OVB_TRACE_HAVE_CUPTI
  return true;
#else
  return false;
#endif
}

std::string trace_file_path(const std::string& dir, int rank) {
  return trace::rank_trace_path(dir, rank);
}

}  // namespace ovb
