// One rank's trace reduced to what the overlap analysis needs: GPU (or host-backend) activity as
// compact intervals with their class and collective, and the ranges. Names are interned; nothing
// else of an event is kept, so memory grows with the number of kernels, not with the file.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "classify.hpp"

namespace ovb::trace {

struct ActivityEvent {
  std::int64_t begin_ns, end_ns;
  EventClass cls;           // compute, comm or memory
  std::int32_t coll = -1;   // comm: index into RankTrace::collectives
  std::int64_t bytes = -1;  // comm: S of docs/metrics.md when the trace says it
  KernelCategory category = KernelCategory::elementwise;  // from the name (classify.hpp)
};

struct RangeEvent {
  std::int64_t begin_ns, end_ns;
  std::uint32_t name;  // index into RankTrace::range_names
};

struct CollectiveKey {
  std::string kind, group;  // group "unknown" when the trace does not say
};

struct SkipCounts {
  std::uint64_t missing_fields = 0;  // events without the fields they need (ts, dur, name, cat)
  std::uint64_t unknown_kind = 0;    // phases / categories the analyzer does not know
  std::uint64_t ignored = 0;         // known kinds it does not use (metadata, CPU ops, flows...)
};

struct RankTrace {
  std::string path;
  int rank = -1;  // from distributedInfo.rank; -1 when the trace does not say
  int world_size = 0;
  std::size_t events = 0;
  std::vector<ActivityEvent> activity;
  std::vector<RangeEvent> cpu_ranges, gpu_ranges;
  std::vector<std::string> range_names, range_categories;  // by name index
  std::vector<CollectiveKey> collectives;
  SkipCounts skipped;
};

// Streams the file (read_trace). Throws UsageError for unreadable or malformed input.
RankTrace load_rank_trace(const std::string& path);

}  // namespace ovb::trace
