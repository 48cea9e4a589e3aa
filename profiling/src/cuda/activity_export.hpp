// The CUDA tracer's kept records (activity_store.hpp) as Kineto-dialect trace events. Separate from
// the tracer so that the join - kernels to the ranges they were launched in, collective metadata,
// GPU spans of ranges, track and lane layout - is tested on hand-made records without a GPU.
#pragma once

#include <cstdint>

#include "activity_store.hpp"
#include "ovb/trace_writer.hpp"

namespace ovb::trace::cuda {

// The earliest start among the records, or `start` when it is earlier (the trace's base).
std::int64_t earliest_record(const ActivityStore& s, std::int64_t start);

// Writes every record: times are CUPTI's plus epoch_offset (epoch ns); ranges still open end at
// `now` (CUPTI clock). Layout: see docs/trace-format.md.
void write_activity(const ActivityStore& s, std::int64_t epoch_offset, std::int64_t now,
                    TraceWriter& w);

}  // namespace ovb::trace::cuda
