// The "streams serialized" finding (see serialization.hpp).
#include "serialization.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "intervals.hpp"

namespace ovb::trace {

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

// The compute kernels of one device, sorted by start, with suffix minima of their launch times
// kept for the two tracks with the earliest launches (so that a query can leave one track out).
class DeviceCompute {
 public:
  void add(const ActivityEvent& a) { kernels_.push_back(&a); }

  void build() {
    std::sort(kernels_.begin(), kernels_.end(), [](const ActivityEvent* x, const ActivityEvent* y) {
      return x->begin_ns < y->begin_ns;
    });
    best_.assign(kernels_.size() + 1, {});
    for (std::size_t i = kernels_.size(); i-- > 0;) {
      Best b = best_[i + 1];
      const ActivityEvent& g = *kernels_[i];
      if (g.launch_ns >= 0) b.offer(g.launch_ns, g.track);
      best_[i] = b;
    }
  }

  // The earliest launch among kernels that start after `after` on a track other than `track`.
  std::int64_t earliest_launch_starting_after(std::int64_t after, std::uint32_t track) const {
    const auto it =
        std::upper_bound(kernels_.begin(), kernels_.end(), after,
                         [](std::int64_t v, const ActivityEvent* g) { return v < g->begin_ns; });
    const Best& b = best_[static_cast<std::size_t>(it - kernels_.begin())];
    return b.track1 != track ? b.launch1 : b.launch2;
  }

  // Whether [b, e) meets a compute kernel on a track other than `track`.
  bool overlaps_other_track(std::int64_t b, std::int64_t e, std::uint32_t track) {
    auto [it, added] = unions_.try_emplace(track);
    if (added) {
      std::vector<Interval> v;
      for (const ActivityEvent* g : kernels_)
        if (g->track != track)
          v.push_back({static_cast<double>(g->begin_ns), static_cast<double>(g->end_ns)});
      it->second = interval_union(std::move(v));
    }
    return intersection_length(it->second, {{static_cast<double>(b), static_cast<double>(e)}}) > 0;
  }

 private:
  struct Best {  // the earliest launch and the earliest on another track
    std::int64_t launch1 = kNever, launch2 = kNever;
    std::uint32_t track1 = kNoTrack, track2 = kNoTrack;
    void offer(std::int64_t l, std::uint32_t t) {
      if (t == track1) {
        launch1 = std::min(launch1, l);
      } else if (l < launch1) {
        launch2 = launch1, track2 = track1;
        launch1 = l, track1 = t;
      } else if (l < launch2) {
        launch2 = l, track2 = t;
      }
    }
  };
  std::vector<const ActivityEvent*> kernels_;
  std::vector<Best> best_;
  std::map<std::uint32_t, std::vector<Interval>> unions_;  // compute on every track but the key
};

}  // namespace

SerializationStats& SerializationStats::operator+=(const SerializationStats& o) {
  comm_kernels += o.comm_kernels;
  with_launch += o.with_launch;
  in_flight += o.in_flight;
  overlapped += o.overlapped;
  serialized += o.serialized;
  return *this;
}

SerializationStats serialization_stats(const RankTrace& t) {
  auto pid = [&](const ActivityEvent& a) {
    return a.track == kNoTrack ? std::int64_t{-1} : t.tracks[a.track].pid;
  };
  std::map<std::int64_t, DeviceCompute> devices;
  for (const ActivityEvent& a : t.activity)
    if (a.cls == EventClass::compute && !a.copy) devices[pid(a)].add(a);
  for (auto& [p, d] : devices) d.build();
  SerializationStats s;
  for (const ActivityEvent& c : t.activity) {
    if (c.cls != EventClass::comm || c.copy) continue;
    ++s.comm_kernels;
    if (c.launch_ns < 0) continue;
    ++s.with_launch;
    const auto d = devices.find(pid(c));
    if (d == devices.end()) continue;
    if (d->second.earliest_launch_starting_after(c.launch_ns, c.track) >= c.end_ns) continue;
    ++s.in_flight;
    if (d->second.overlaps_other_track(c.begin_ns, c.end_ns, c.track))
      ++s.overlapped;
    else
      ++s.serialized;
  }
  return s;
}

std::string serialization_note(const SerializationStats& s) {
  if (s.comm_kernels == 0) return "";
  if (!s.checked())
    return "streams serialized: not checked (no launch calls in the trace: trace with API "
           "records, OVB_TRACE_API=1 or TraceOptions::api_records)";
  const std::string counts = std::to_string(s.serialized) + " of " + std::to_string(s.in_flight) +
                             " communication kernels in flight beside compute on another stream";
  if (s.streams_serialized())
    return "streams serialized: " + counts +
           " never overlapped it (with CUDA_DEVICE_MAX_CONNECTIONS=1 all streams share one "
           "hardware queue, and no stream priority helps)";
  return "streams not serialized: " + counts + " did not overlap it, " +
         std::to_string(s.overlapped) + " did";
}

}  // namespace ovb::trace
