// The "streams serialized" finding: communication kernels that were in flight together with a
// compute kernel on another stream of the same device, and yet never ran beside compute there.
// With CUDA_DEVICE_MAX_CONNECTIONS=1 every stream feeds one hardware queue, so a communication
// kernel launched before a GEMM on another stream runs wholly before or after it, whatever the
// streams' priorities (docs/metrics.md, "Streams serialized").
//
// A communication kernel C (not a copy) and a compute kernel G on another stream of C's device
// were in flight together when C was launched before G started and G was launched before C ended:
// launch(C) < start(G) and launch(G) < end(C), launch being the end of the API call that launched
// the kernel (the trace's cuda_runtime / cuda_driver events, joined by correlation id; the
// suite's CUDA tracer writes them with api_records / OVB_TRACE_API=1). Such a C is overlapped when
// it overlaps any compute kernel on another stream of its device, else serialized.
#pragma once

#include <cstdint>
#include <string>

#include "rank_trace.hpp"

namespace ovb::trace {

struct SerializationStats {
  std::int64_t comm_kernels = 0;  // communication kernels (copies excluded)
  std::int64_t with_launch = 0;   // of those, with a known launch time
  std::int64_t in_flight = 0;     // of those, in flight together with compute on another stream
  std::int64_t overlapped = 0;    // of in_flight: ran beside compute on another stream
  std::int64_t serialized = 0;    // of in_flight: never did (in_flight - overlapped)
  // The finding: communication was in flight beside compute and not once overlapped it.
  bool streams_serialized() const { return serialized > 0 && overlapped == 0; }
  // Whether the trace could tell: some communication kernel has a launch time.
  bool checked() const { return with_launch > 0; }
  SerializationStats& operator+=(const SerializationStats& o);
};

SerializationStats serialization_stats(const RankTrace& t);

// One line for the table and the JSON: the finding with its counts, or why it was not checked;
// empty when the trace has no communication kernels.
std::string serialization_note(const SerializationStats& s);

}  // namespace ovb::trace
