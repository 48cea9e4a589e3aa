// Host timeline hook: with a sink installed (by the profiler, profiling/ ovb::trace), the host
// backend reports every collective it issues - kind, communicator name, group size, bytes, the
// stream it was issued on, and its real interval from issue to observed completion - every time
// the calling thread blocks waiting for collectives (MPI_Wait), and every GEMM the host GEMM runs
// (its shape and interval: the host analogue of a cuBLAS kernel). Without a sink nothing is
// recorded and nothing is timed. The profiler turns these reports into the same trace format as the
// CUDA tracer, so run -> trace -> analyze works without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ovb/backend.hpp"
#include "ovb/dtype.hpp"

namespace ovb {

// Nanoseconds since the Unix epoch (system clock): the clock of every host-timeline event, shared
// by all ranks of a node, so their traces line up when merged.
std::int64_t timeline_now_ns();

struct HostCollective {
  CollKind kind = CollKind::all_reduce;
  std::string comm;              // CommConfig.name ("x", "y", "z", "z-allgather", "data", "world")
  const void* comm_id = nullptr;  // identity of the communicator
  const void* stream_id = nullptr;  // identity of the stream it was issued on
  int ranks = 1;                 // size of the communicator
  std::size_t count = 0;         // the call's count argument (see Communicator)
  DType dtype = DType::f32;
  double bytes = 0;              // S of docs/metrics.md
  std::int64_t issued_ns = 0;    // timeline_now_ns() when MPI started it
};

// One host GEMM (OpenBLAS sgemm), row-major C[m,n] = op(A)[m,k] op(B)[k,n], on the calling thread.
struct HostGemmCall {
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  std::int64_t begin_ns = 0, end_ns = 0;  // timeline_now_ns() around the library call
};

class HostTimelineSink {
 public:
  virtual ~HostTimelineSink() = default;
  // On the issuing thread, right after the collective started. The token identifies it later.
  virtual std::uint64_t issued(const HostCollective& c) = 0;
  // When its completion was observed (MPI_Test or MPI_Wait returned it done).
  virtual void completed(std::uint64_t token, std::int64_t done_ns) = 0;
  // The calling thread was blocked in a backend wait from begin_ns to end_ns.
  virtual void waited(std::int64_t begin_ns, std::int64_t end_ns) = 0;
  // On the calling thread, after a host GEMM returned.
  virtual void computed(const HostGemmCall& g) = 0;
};

// Installs (or removes, with nullptr) the process-wide sink. Not owned. Collectives issued while
// one sink was installed and completed under another (or none) are not reported.
void set_host_timeline_sink(HostTimelineSink* sink);
HostTimelineSink* host_timeline_sink();

}  // namespace ovb
