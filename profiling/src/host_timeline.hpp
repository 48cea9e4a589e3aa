// The host timeline: what the host backend does, recorded as the CUDA tracer records a GPU, and
// written in the same trace format (so run -> trace -> analyze works without a GPU).
//
// Sources: the suite's ranges (ovb::ScopedRange, through the RangeRecorder hook) and the host
// backend's collectives, waits and GEMMs (ovb/host_timeline_sink.hpp). Tracks in the written trace:
//  - pid = OS process id, one track per thread: the ranges as "user_annotation", and the time
//    blocked in MPI_Wait as "cuda_runtime" events named "MPI_Wait" (the host analogue of
//    cudaEventSynchronize);
//  - pid = 0 ("host backend"), the device of this backend:
//      tid 0 (and up, one per thread): compute - "kernel" events named "cblas_sgemm" for the
//        host GEMMs (args m, n, k, dtype, range: the innermost enclosing range), and "kernel"
//        events for the outermost ranges of category "compute" or "layer" minus the GEMMs and
//        the time blocked in waits inside them (host compute runs on the calling thread, so that
//        is when it computes), args range and category; both with stream (1000 + thread index:
//        apart from the collectives' streams, numbered from 1). So the analyzer's kernel
//        breakdown sorts host GEMM time under gemm, as it sorts cuBLAS kernels on a GPU;
//      tid 100+: one track per communicator x stream (and a further lane when MPI had two
//        collectives of one communicator in flight at once, so events on a track never overlap):
//        "kernel" events named "MPI <kind> <group>" from issue to observed completion, with args
//        collective, group, comm, bytes, ranks, count, dtype, stream, range.
//    The group is that of the enclosing ScopedRange of category "collective" of the same kind when
//    there is one (gpt4d labels its Z all-gathers "z" there), else the communicator's name.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ovb/annotate.hpp"
#include "ovb/host_timeline_sink.hpp"
#include "ovb/trace_writer.hpp"

namespace ovb::trace {

class HostTimeline final : public RangeRecorder, public HostTimelineSink {
 public:
  using Clock = std::int64_t (*)();  // nanoseconds since the epoch

  // start() installs it as the process's range recorder and host-timeline sink, stop() removes
  // it. `clock` times the ranges (replaceable for tests; the backend times its own reports).
  explicit HostTimeline(Clock clock = &timeline_now_ns) : clock_(clock) {}
  ~HostTimeline() override;
  void start();
  void stop();

  // RangeRecorder
  void begin(const RangeInfo& info) override;
  void end() override;
  // HostTimelineSink
  std::uint64_t issued(const HostCollective& c) override;
  void completed(std::uint64_t token, std::int64_t done_ns) override;
  void waited(std::int64_t begin_ns, std::int64_t end_ns) override;
  void computed(const HostGemmCall& g) override;

  // Writes every event recorded so far (thread-safe against concurrent recording).
  void write(TraceWriter& w) const;
  std::int64_t first_ns() const;  // start() time, the trace's base

 private:
  struct Range {
    RangeInfo info;
    std::int64_t begin = 0, end = -1;  // end < 0: still open
    int depth = 0;
    int thread = 0;
  };
  struct Collective {
    HostCollective c;
    std::string group;  // from the enclosing collective range, else the communicator name
    std::string range;  // name of the enclosing range
    std::int64_t done = -1;
    int thread = 0;
  };
  struct Wait {
    std::int64_t begin, end;
    int thread;
  };
  struct Gemm {
    HostGemmCall call;
    std::string range;  // name of the innermost enclosing range
    int thread = 0;
  };
  int thread_index_locked();           // small index of the calling thread
  std::int64_t end_ns_locked() const;  // where open ranges and unfinished collectives end
  void write_cpu(TraceWriter& w) const;
  void write_compute(TraceWriter& w) const;
  void write_collectives(TraceWriter& w) const;

  Clock clock_;
  mutable std::mutex mu_;
  bool recording_ = false;
  std::int64_t stop_ns_ = -1;  // stop() time: the end of whatever was still open
  std::int64_t start_ns_ = 0;
  std::vector<Range> ranges_;
  std::map<std::uint64_t, Collective> collectives_;  // by token
  std::vector<Wait> waits_;
  std::vector<Gemm> gemms_;
  std::map<long, int> threads_;                   // OS thread id -> index
  std::vector<long> thread_ids_;                  // index -> OS thread id
  std::map<int, std::vector<std::size_t>> open_;  // thread index -> stack of open ranges
  std::uint64_t next_token_ = 1;
};

}  // namespace ovb::trace
