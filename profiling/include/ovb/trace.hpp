// Tracing a suite binary's measured region: one Chrome/Perfetto trace (Kineto's dialect, see
// profiling/README.md) per rank. Link ovb::trace (guarded by `if(TARGET ovb::trace)`).
//
//   #include "ovb/trace.hpp"
//   std::optional<ovb::TraceSession> trace;
//   if (!opts.trace_dir.empty())   // before warm-up: the CUDA tracer must see kernels load
//     trace.emplace(ovb::TraceOptions{opts.trace_dir, ctx.rank, ctx.world, backend.get()});
//   ... warm-up ...
//   if (trace) trace->start();     // begin of the measured region
//   ... iterations ...
//   backend->synchronize();
//   if (trace) { trace->stop(); trace->write(); }   // writes DIR/rank-00000.trace.json
//
// Backend "cuda": CUPTI activity tracing (kernels on every stream, copies, sets, synchronisation,
// the suite's ScopedRanges with collective kind/group/bytes joined onto the NCCL kernels they
// launched). Backend "host": the host timeline (compute ranges on the calling thread, MPI
// collectives from issue to completion on one track per communicator and stream, waits).
// Events outside start()..stop() are dropped. If the process ends before write() - a normal exit,
// an exception that unwinds the session, std::exit, or SIGTERM/SIGINT - the trace is written then.
// Only one session may exist per process at a time.
#pragma once

#include <memory>
#include <string>

namespace ovb {

class Backend;

struct TraceOptions {
  std::string dir;  // output folder (created when missing)
  int rank = 0;
  int world = 1;
  Backend* backend = nullptr;  // what to trace: its name() picks the tracer; not owned
  bool api_records = false;    // CUDA: also record runtime/driver API calls (more overhead)
};

class TraceSession {
 public:
  // Prepares the tracer (CUDA: subscribes to CUPTI and enables the activity kinds). Throws
  // ovb::Error, e.g. when another profiler (Nsight) holds CUPTI, or ovb::UsageError for a
  // backend without a tracer in this build.
  explicit TraceSession(const TraceOptions& opts);
  ~TraceSession();  // writes the trace if it was started and not written; never throws
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  void start();  // opens the capture window
  void stop();   // closes it (call after synchronizing the device)
  // Writes the trace atomically and returns its path; later calls do nothing.
  std::string write();
  const std::string& path() const;

  // Whether this build has the CUDA (CUPTI) tracer.
  static bool cuda_tracer_built();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// DIR/rank-00003.trace.json: where the session of a rank writes.
std::string trace_file_path(const std::string& dir, int rank);

}  // namespace ovb
