// One rank's trace reduced to what the overlap analysis needs: GPU (or host-backend) activity as
// compact intervals with their class, collective, track (stream) and launch time, and the ranges.
// Names are interned; nothing else of an event is kept, so memory grows with the number of
// kernels, not with the file.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "classify.hpp"

namespace ovb::trace {

inline constexpr std::uint32_t kNoTrack = 0xffffffffu;

struct ActivityEvent {
  std::int64_t begin_ns, end_ns;
  EventClass cls;           // compute, comm or memory
  std::int32_t coll = -1;   // comm: index into RankTrace::collectives
  std::int64_t bytes = -1;  // comm: S of docs/metrics.md when the trace says it
  KernelCategory category = KernelCategory::elementwise;  // from the name (classify.hpp)
  bool copy = false;                                      // a memcpy or memset (else a kernel)
  std::uint32_t track = kNoTrack;  // index into RankTrace::tracks (its device and stream)
  std::int64_t launch_ns = -1;     // end of the API call that launched it (correlation), or -1
};

// A track of activity: the event's pid and tid - on a GPU the device and the stream (this suite's
// traces and Kineto's write the stream as the tid), on the host timeline a lane.
struct Track {
  std::int64_t pid, tid;
  auto operator<=>(const Track&) const = default;
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
  std::vector<Track> tracks;  // by ActivityEvent::track
  SkipCounts skipped;
};

// Streams the file (read_trace), then applies the memcpy rule's stream part (classify.hpp
// copy_is_communication: copies on a stream named as communication, or on which a communication
// kernel runs) and joins kernels to their launch calls (args "correlation" of kernels and of
// cuda_runtime / cuda_driver events). Throws UsageError for unreadable or malformed input.
RankTrace load_rank_trace(const std::string& path);

}  // namespace ovb::trace
