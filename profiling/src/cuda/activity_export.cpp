// The CUDA tracer's records as Kineto-dialect events (see activity_export.hpp), with kernels
// joined to the ranges they were launched in (collective metadata, gpu_user_annotation spans).
//
// Tracks: pid = device, tid = stream (kernels, copies, sets; one stream never runs two at once),
// plus annotation lanes (gpu_user_annotation: the GPU span of each range); pid = OS process:
// one track per thread (user_annotation ranges, cuda_runtime/cuda_driver calls) and
// synchronisation lanes (cuda_sync).
#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "../lanes.hpp"
#include "activity_export.hpp"

namespace ovb::trace::cuda {

namespace {

constexpr std::int64_t kAnnotationTid = 1'000'000;  // + lane, on the device
constexpr std::int64_t kSyncTid = 2'000'000;        // + lane, on the CPU process

const char* copy_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

const char* sync_name(std::uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Sync";
  }
}

std::string api_name(bool driver, std::uint32_t cbid) {
  const char* name = nullptr;
  cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                       &name);
  return name ? name : (driver ? "driver API " : "runtime API ") + std::to_string(cbid);
}

void add_range_fields(nlohmann::ordered_json& a, const RangeInfo& r) {
  if (!r.category.empty()) a["category"] = r.category;
  if (!r.coll_kind.empty()) a["collective"] = r.coll_kind;
  if (!r.group.empty()) a["group"] = r.group;
  if (r.bytes >= 0) a["bytes"] = r.bytes;
  if (r.ranks > 0) a["ranks"] = r.ranks;
}

// Everything the export needs from the store, with times moved to the epoch.
class Exporter {
 public:
  Exporter(const ActivityStore& s, std::int64_t offset, std::int64_t now)
      : s_(s), off_(offset), now_(now), pid_(::getpid()) {}

  const RangeRec* range_of(std::uint32_t correlation) const {
    const auto it = s_.range_of_launch.find(correlation);
    if (it == s_.range_of_launch.end()) return nullptr;
    const auto r = s_.ranges.find(it->second);
    return r == s_.ranges.end() ? nullptr : &r->second;
  }
  // The nearest enclosing range that is a collective (the suite wraps each collective call).
  const RangeRec* collective_of(const RangeRec* r) const {
    while (r && r->info.coll_kind.empty()) {
      const auto p = s_.ranges.find(r->parent);
      r = p == s_.ranges.end() ? nullptr : &p->second;
    }
    return r;
  }
  // Whether a range or one enclosing it is NCCL's (its NVTX domain), whatever its name.
  bool nccl_domain(const RangeRec* r) const {
    for (; r;) {
      if (r->domain == "NCCL") return true;
      const auto p = s_.ranges.find(r->parent);
      r = p == s_.ranges.end() ? nullptr : &p->second;
    }
    return false;
  }
  std::uint64_t range_id(std::uint32_t correlation) const {
    const auto it = s_.range_of_launch.find(correlation);
    return it == s_.range_of_launch.end() ? 0 : it->second;
  }

  // Args of GPU work launched in a range: its id and name and, inside a collective range, the
  // collective's kind and group (and, for kernels, bytes and ranks); the range's GPU span grows.
  void join_range(nlohmann::ordered_json& a, std::uint32_t correlation, std::int64_t b,
                  std::int64_t e, std::uint32_t device, bool kernel) {
    const RangeRec* r = range_of(correlation);
    if (!r) return;
    a["External id"] = range_id(correlation);
    a["range"] = r->info.name;
    if (!kernel && nccl_domain(r)) a["range_domain"] = "NCCL";  // NCCL's NVTX ranges, injected
    if (const RangeRec* c = collective_of(r)) {
      a["collective"] = c->info.coll_kind;
      if (!c->info.group.empty()) a["group"] = c->info.group;
      if (kernel && c->info.bytes >= 0) a["bytes"] = c->info.bytes;
      if (kernel && c->info.ranks > 0) a["ranks"] = c->info.ranks;
    }
    extend_span(range_id(correlation), b, e, device);
  }

  void write(TraceWriter& w) {
    write_tracks(w);
    write_kernels(w);
    write_copies(w);
    write_gpu_annotations(w);
    write_cpu(w);
  }

 private:
  void extend_span(std::uint64_t id, std::int64_t b, std::int64_t e, std::uint32_t device) {
    // The range and every enclosing one cover this GPU work.
    while (id) {
      const auto r = s_.ranges.find(id);
      if (r == s_.ranges.end()) return;
      auto [it, added] = spans_.try_emplace(id, Span{b, e, device});
      if (!added) {
        it->second.begin = std::min(it->second.begin, b);
        it->second.end = std::max(it->second.end, e);
      }
      id = r->second.parent;
    }
  }

  void write_tracks(TraceWriter& w) {
    std::set<std::uint32_t> devices;
    std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
    for (const KernelRec& k : s_.kernels) streams.insert({k.device, k.stream});
    for (const CopyRec& c : s_.copies) streams.insert({c.device, c.stream});
    for (const auto& [d, st] : streams) devices.insert(d);
    for (std::uint32_t d : devices) w.process_name(d, "GPU " + std::to_string(d), d);
    // A stream that ran work launched in a collective range is named a communication stream
    // (Perfetto shows it; the analyzer then counts the other copies on it as communication).
    std::set<std::pair<std::uint32_t, std::uint32_t>> comm;
    for (const KernelRec& k : s_.kernels)
      if (collective_of(range_of(k.correlation))) comm.insert({k.device, k.stream});
    for (const CopyRec& c : s_.copies)
      if (!c.memset && collective_of(range_of(c.correlation))) comm.insert({c.device, c.stream});
    for (const auto& [d, st] : streams)
      w.thread_name(
          d, st, "stream " + std::to_string(st) + (comm.count({d, st}) ? " (communication)" : ""),
          st);
  }

  void write_kernels(TraceWriter& w) {
    for (const KernelRec& k : s_.kernels) {
      nlohmann::ordered_json a = {{"device", k.device},
                                  {"stream", k.stream},
                                  {"correlation", k.correlation},
                                  {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                                  {"block", {k.block[0], k.block[1], k.block[2]}}};
      join_range(a, k.correlation, k.start, k.end, k.device, true);
      w.complete(
          {s_.str(k.name), cat::kernel, k.device, k.stream, k.start + off_, k.end + off_, &a});
    }
  }

  void write_copies(TraceWriter& w) {
    for (const CopyRec& c : s_.copies) {
      nlohmann::ordered_json a = {{"device", c.device},
                                  {"stream", c.stream},
                                  {"correlation", c.correlation},
                                  {"bytes", c.bytes}};
      if (c.end > c.start)  // bytes per ns = GB/s
        a["memory bandwidth (GB/s)"] = static_cast<double>(c.bytes) / (c.end - c.start);
      if (c.src_device >= 0 && c.dst_device >= 0) {  // Kineto's keys for a peer copy
        a["fromDevice"] = c.src_device;
        a["toDevice"] = c.dst_device;
      }
      // A memcpy launched in a collective or an NCCL range is communication to the analyzer
      // (classify.hpp copy_is_communication); the collective's bytes stay with its kernels.
      if (!c.memset)
        join_range(a, c.correlation, c.start, c.end, c.device, false);
      else if (const std::uint64_t id = range_id(c.correlation))
        extend_span(id, c.start, c.end, c.device);
      w.complete({c.memset ? "Memset (Device)" : copy_name(c.copy_kind),
                  c.memset ? cat::memset : cat::memcpy, c.device, c.stream, c.start + off_,
                  c.end + off_, &a});
    }
  }

  void write_gpu_annotations(TraceWriter& w) {
    std::vector<std::pair<std::uint64_t, Span>> spans(spans_.begin(), spans_.end());
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.second.begin != b.second.begin ? a.second.begin < b.second.begin
                                              : a.second.end > b.second.end;  // outer first
    });
    std::map<std::uint32_t, LaneAllocator> lanes;  // per device
    std::set<std::pair<std::uint32_t, int>> named;
    for (const auto& [id, sp] : spans) {
      const RangeRec& r = s_.ranges.at(id);
      const int lane = lanes[sp.device].place(sp.begin, sp.end);
      if (named.insert({sp.device, lane}).second)
        w.thread_name(sp.device, kAnnotationTid + lane,
                      "annotations" + (lane ? " (lane " + std::to_string(lane + 1) + ")" : ""),
                      kAnnotationTid + lane);
      nlohmann::ordered_json a = {{"External id", id}};
      add_range_fields(a, r.info);
      w.complete({r.info.name, cat::gpu_annotation, sp.device, kAnnotationTid + lane,
                  sp.begin + off_, sp.end + off_, &a});
    }
  }

  void write_cpu(TraceWriter& w) {
    w.process_name(pid_, "CPU (pid " + std::to_string(pid_) + ")", 1000);
    std::set<std::uint64_t> threads;
    for (const auto& [id, r] : s_.ranges) {
      threads.insert(r.thread);
      nlohmann::ordered_json a = {{"External id", id}};
      add_range_fields(a, r.info);
      if (r.domain != "OverlapBench") a["domain"] = r.domain;
      w.complete({r.info.name, cat::annotation, pid_, static_cast<std::int64_t>(r.thread),
                  r.begin + off_, (r.end < 0 ? now_ : r.end) + off_, &a});
    }
    for (const MarkerRec& m : s_.markers) {
      threads.insert(m.thread);
      const nlohmann::ordered_json a = {{"domain", s_.str(m.domain)}};
      w.complete(
          {s_.str(m.name), cat::annotation, pid_, m.thread, m.start + off_, m.end + off_, &a});
    }
    for (const ApiRec& x : s_.apis) {
      threads.insert(x.thread);
      const nlohmann::ordered_json a = {{"correlation", x.correlation}};
      w.complete({api_name(x.driver, x.cbid), x.driver ? cat::driver : cat::runtime, pid_, x.thread,
                  x.start + off_, x.end + off_, &a});
    }
    for (std::uint64_t t : threads)
      w.thread_name(pid_, static_cast<std::int64_t>(t), "thread " + std::to_string(t), 0);
    std::vector<const SyncRec*> syncs;
    for (const SyncRec& y : s_.syncs) syncs.push_back(&y);
    std::sort(syncs.begin(), syncs.end(),
              [](const SyncRec* a, const SyncRec* b) { return a->start < b->start; });
    LaneAllocator lanes;
    int named = 0;
    for (const SyncRec* y : syncs) {
      const int lane = lanes.place(y->start, y->end);
      for (; named <= lane; ++named)
        w.thread_name(pid_, kSyncTid + named, "CUDA synchronization", kSyncTid + named);
      const nlohmann::ordered_json a = {{"stream", y->stream}, {"correlation", y->correlation}};
      w.complete({sync_name(y->type), "cuda_sync", pid_, kSyncTid + lane, y->start + off_,
                  y->end + off_, &a});
    }
  }

  struct Span {
    std::int64_t begin, end;
    std::uint32_t device;
  };
  const ActivityStore& s_;
  std::int64_t off_, now_, pid_;
  std::map<std::uint64_t, Span> spans_;
};

}  // namespace

std::int64_t earliest_record(const ActivityStore& s, std::int64_t start) {
  std::int64_t base = start;
  for (const KernelRec& k : s.kernels) base = std::min(base, k.start);
  for (const CopyRec& c : s.copies) base = std::min(base, c.start);
  for (const auto& [id, r] : s.ranges) base = std::min(base, r.begin);
  for (const MarkerRec& m : s.markers) base = std::min(base, m.start);
  for (const ApiRec& a : s.apis) base = std::min(base, a.start);
  for (const SyncRec& y : s.syncs) base = std::min(base, y.start);
  return base;
}

void write_activity(const ActivityStore& s, std::int64_t epoch_offset, std::int64_t now,
                    TraceWriter& w) {
  Exporter(s, epoch_offset, now).write(w);
}

}  // namespace ovb::trace::cuda
