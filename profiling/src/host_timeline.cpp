// Host timeline: ranges, collectives and waits of the host backend as trace events (see
// host_timeline.hpp).
#include "host_timeline.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <deque>

#include "lanes.hpp"
#include "intervals.hpp"

namespace ovb::trace {

namespace {

constexpr std::int64_t kDevicePid = 0;
constexpr std::int64_t kFirstCommTid = 100;
constexpr std::int64_t kFirstComputeStream = 1000;  // collectives' streams count from 1

long os_thread_id() {
  return static_cast<long>(::syscall(SYS_gettid));
}

bool is_compute(const RangeInfo& r) {
  return r.category == "compute" || r.category == "layer";
}

nlohmann::ordered_json range_args(const RangeInfo& r) {
  nlohmann::ordered_json a = {{"category", r.category}};
  if (!r.coll_kind.empty()) a["collective"] = r.coll_kind;
  if (!r.group.empty()) a["group"] = r.group;
  if (r.bytes >= 0) a["bytes"] = r.bytes;
  if (r.ranks > 0) a["ranks"] = r.ranks;
  return a;
}

}  // namespace

HostTimeline::~HostTimeline() {
  stop();
}

void HostTimeline::start() {
  std::lock_guard lock(mu_);
  if (recording_) return;
  recording_ = true;
  if (start_ns_ == 0) start_ns_ = clock_();
  set_range_recorder(this);
  set_host_timeline_sink(this);
}

void HostTimeline::stop() {
  std::lock_guard lock(mu_);
  if (!recording_) return;
  recording_ = false;
  if (range_recorder() == this) set_range_recorder(nullptr);
  if (host_timeline_sink() == this) set_host_timeline_sink(nullptr);
  stop_ns_ = clock_();
  for (auto& [thread, stack] : open_)
    for (std::size_t i : stack) ranges_[i].end = stop_ns_;  // ranges still open end with the trace
  open_.clear();
}

std::int64_t HostTimeline::first_ns() const {
  std::lock_guard lock(mu_);
  return start_ns_;
}

int HostTimeline::thread_index_locked() {
  const long id = os_thread_id();
  const auto [it, added] = threads_.try_emplace(id, static_cast<int>(thread_ids_.size()));
  if (added) thread_ids_.push_back(id);
  return it->second;
}

void HostTimeline::begin(const RangeInfo& info) {
  const std::int64_t now = clock_();
  std::lock_guard lock(mu_);
  if (!recording_) return;
  const int t = thread_index_locked();
  auto& stack = open_[t];
  ranges_.push_back({info, now, -1, static_cast<int>(stack.size()), t});
  stack.push_back(ranges_.size() - 1);
}

void HostTimeline::end() {
  const std::int64_t now = clock_();
  std::lock_guard lock(mu_);
  if (!recording_) return;
  auto& stack = open_[thread_index_locked()];
  if (stack.empty()) return;  // opened before start(): not recorded
  ranges_[stack.back()].end = now;
  stack.pop_back();
}

std::uint64_t HostTimeline::issued(const HostCollective& c) {
  std::lock_guard lock(mu_);
  if (!recording_) return 0;
  const int t = thread_index_locked();
  Collective rec{c, c.comm, "", -1, t};
  const auto& stack = open_[t];
  if (!stack.empty()) rec.range = ranges_[stack.back()].info.name;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    const RangeInfo& r = ranges_[*it].info;
    if (r.category != "collective") continue;
    if ((r.coll_kind.empty() || r.coll_kind == name_of(c.kind)) && !r.group.empty())
      rec.group = r.group;
    break;
  }
  const std::uint64_t token = next_token_++;
  collectives_.emplace(token, std::move(rec));
  return token;
}

void HostTimeline::completed(std::uint64_t token, std::int64_t done_ns) {
  std::lock_guard lock(mu_);
  if (auto it = collectives_.find(token); it != collectives_.end()) it->second.done = done_ns;
}

void HostTimeline::waited(std::int64_t begin_ns, std::int64_t end_ns) {
  std::lock_guard lock(mu_);
  if (!recording_) return;
  waits_.push_back({begin_ns, end_ns, thread_index_locked()});
}

void HostTimeline::computed(const HostGemmCall& g) {
  std::lock_guard lock(mu_);
  if (!recording_) return;
  const int t = thread_index_locked();
  const auto& stack = open_[t];
  gemms_.push_back({g, stack.empty() ? std::string() : ranges_[stack.back()].info.name, t});
}

std::int64_t HostTimeline::end_ns_locked() const {
  return stop_ns_ >= 0 ? stop_ns_ : clock_();
}

void HostTimeline::write(TraceWriter& w) const {
  std::lock_guard lock(mu_);
  w.process_name(kDevicePid, "host backend (CPU compute and MPI collectives)", 0);
  write_compute(w);
  write_collectives(w);
  write_cpu(w);
}

void HostTimeline::write_cpu(TraceWriter& w) const {
  const std::int64_t pid = ::getpid();
  const std::int64_t now = end_ns_locked();
  w.process_name(pid, "CPU (pid " + std::to_string(pid) + ")", 1);
  for (std::size_t t = 0; t < thread_ids_.size(); ++t)
    w.thread_name(pid, thread_ids_[t], "thread " + std::to_string(thread_ids_[t]),
                  static_cast<std::int64_t>(t));
  for (const Range& r : ranges_) {
    const auto args = range_args(r.info);
    w.complete({r.info.name, cat::annotation, pid, thread_ids_[r.thread], r.begin,
                r.end < 0 ? now : r.end, &args});
  }
  for (const Wait& x : waits_)
    w.complete({"MPI_Wait", cat::runtime, pid, thread_ids_[x.thread], x.begin, x.end, nullptr});
}

void HostTimeline::write_compute(TraceWriter& w) const {
  const std::int64_t now = end_ns_locked();
  // Interval algebra in doubles: relative to the start, nanoseconds stay exact.
  auto rel = [this](std::int64_t t) { return static_cast<double>(t - start_ns_); };
  auto abs = [this](double t) { return start_ns_ + static_cast<std::int64_t>(t); };
  struct Piece {
    double begin, end;
    const std::string* name;
    const nlohmann::ordered_json* args;
  };
  for (std::size_t t = 0; t < thread_ids_.size(); ++t) {
    const auto tid = static_cast<std::int64_t>(t);
    // "stream" as on every kernel event: HTA takes only events with a numeric args.stream
    // for the GPU timeline (its idle/compute breakdown and overlap).
    const std::int64_t stream = kFirstComputeStream + tid;
    std::vector<Interval> waits, taken;  // taken: waits and GEMMs, cut out of the regions
    for (const Wait& x : waits_)
      if (x.thread == static_cast<int>(t)) waits.push_back({rel(x.begin), rel(x.end)});
    waits = interval_union(std::move(waits));
    taken = waits;
    std::vector<const Gemm*> gemms;
    for (const Gemm& g : gemms_)
      if (g.thread == static_cast<int>(t)) {
        gemms.push_back(&g);
        taken.push_back({rel(g.call.begin_ns), rel(g.call.end_ns)});
      }
    taken = interval_union(std::move(taken));
    std::vector<const Range*> regions;
    for (const Range& r : ranges_)
      if (r.thread == static_cast<int>(t) && is_compute(r.info)) regions.push_back(&r);
    std::sort(regions.begin(), regions.end(), [](const Range* a, const Range* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->depth < b->depth;
    });
    w.thread_name(kDevicePid, tid, "compute (thread " + std::to_string(thread_ids_[t]) + ")", tid);
    // Events of the track in time order; args live in `args` (a deque: stable addresses).
    std::deque<nlohmann::ordered_json> args;
    std::vector<Piece> pieces;
    std::int64_t covered_until = -1;  // end of the last outermost region written
    for (const Range* r : regions) {
      const std::int64_t end = r->end < 0 ? now : r->end;
      if (r->begin < covered_until) continue;  // nested in the previous outermost region
      covered_until = end;
      args.push_back({{"range", r->info.name}, {"category", r->info.category}, {"stream", stream}});
      for (const Interval& piece : interval_difference({{rel(r->begin), rel(end)}}, taken))
        pieces.push_back({piece.begin, piece.end, &r->info.name, &args.back()});
    }
    static const std::string kGemmName = "cblas_sgemm";  // the OpenBLAS call it times
    for (const Gemm* g : gemms) {
      nlohmann::ordered_json a = {{"m", g->call.m},
                                  {"n", g->call.n},
                                  {"k", g->call.k},
                                  {"dtype", std::string(name_of(g->call.dtype))},
                                  {"stream", stream}};
      if (!g->range.empty()) a["range"] = g->range;
      args.push_back(std::move(a));
      pieces.push_back({rel(g->call.begin_ns), rel(g->call.end_ns), &kGemmName, &args.back()});
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
    for (const Piece& p : pieces)
      w.complete({*p.name, cat::kernel, kDevicePid, tid, abs(p.begin), abs(p.end), p.args});
  }
}

void HostTimeline::write_collectives(TraceWriter& w) const {
  const std::int64_t now = end_ns_locked();
  std::vector<const Collective*> all;
  for (const auto& [token, c] : collectives_) all.push_back(&c);
  std::sort(all.begin(), all.end(), [](const Collective* a, const Collective* b) {
    return a->c.issued_ns < b->c.issued_ns;
  });
  // Logical tracks (communicator x stream) in order of first use; streams numbered likewise.
  std::map<std::pair<const void*, const void*>, std::size_t> track_of;
  std::map<const void*, int> stream_no;
  std::vector<LaneAllocator> lanes;
  std::map<std::pair<std::size_t, int>, std::int64_t> tid_of;  // (track, lane) -> tid
  for (const Collective* x : all) {
    const auto key = std::make_pair(x->c.comm_id, x->c.stream_id);
    const auto [it, added] = track_of.try_emplace(key, lanes.size());
    if (added) lanes.emplace_back();
    const int stream =
        stream_no.try_emplace(x->c.stream_id, static_cast<int>(stream_no.size()) + 1).first->second;
    const std::int64_t end = x->done < 0 ? now : x->done;
    const int lane = lanes[it->second].place(x->c.issued_ns, end);
    auto [tit, new_tid] = tid_of.try_emplace({it->second, lane}, kFirstCommTid + tid_of.size());
    if (new_tid) {
      std::string name = "comm " + x->c.comm + " / stream " + std::to_string(stream);
      if (lane > 0) name += " (lane " + std::to_string(lane + 1) + ")";
      w.thread_name(kDevicePid, tit->second, name, tit->second);
    }
    const std::string kind(name_of(x->c.kind));
    nlohmann::ordered_json args = {{"collective", kind},
                                   {"group", x->group},
                                   {"comm", x->c.comm},
                                   {"bytes", static_cast<std::int64_t>(x->c.bytes)},
                                   {"ranks", x->c.ranks},
                                   {"count", x->c.count},
                                   {"dtype", std::string(name_of(x->c.dtype))},
                                   {"stream", stream}};
    if (!x->range.empty()) args["range"] = x->range;
    if (x->done < 0) args["completed"] = false;  // not observed complete before the trace ended
    w.complete({"MPI " + kind + " " + x->group, cat::kernel, kDevicePid, tit->second,
                x->c.issued_ns, end, &args});
  }
}

}  // namespace ovb::trace
