// Loading one rank's trace into compact intervals (see rank_trace.hpp).
#include "rank_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "trace_reader.hpp"

namespace ovb::trace {

namespace {

using json = nlohmann::json;

const std::string* string_field(const json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

std::int64_t int_field(const json& o, const char* key, std::int64_t fallback) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<std::int64_t>(it->get<double>())
                               : it->get<std::int64_t>();
}

class Loader {
 public:
  explicit Loader(RankTrace& t) : t_(t) {}

  void add(RawEvent& e) {
    const json& j = e.json;
    if (!j.is_object()) {
      ++t_.skipped.missing_fields;
      return;
    }
    const std::string* ph = string_field(j, "ph");
    if (!ph) {
      ++t_.skipped.missing_fields;
      return;
    }
    const std::string* cat = string_field(j, "cat");
    const std::string* name = string_field(j, "name");
    const auto args_it = j.find("args");
    const json* args = args_it != j.end() && args_it->is_object() ? &*args_it : nullptr;
    const bool coll_arg = args && args->contains("collective");
    if (*ph == "X" && !cat) {
      ++t_.skipped.missing_fields;
      return;
    }
    const EventClass cls = classify_event(*ph, cat ? *cat : "", name ? *name : "", coll_arg);
    if (cls == EventClass::ignored) {
      ++t_.skipped.ignored;
      note_ignored(*ph, cat, name, j, args, e);
      return;
    }
    if (cls == EventClass::unknown) {
      ++t_.skipped.unknown_kind;
      return;
    }
    if (!e.ts_ns || !e.dur_ns || *e.dur_ns < 0 || !name) {
      ++t_.skipped.missing_fields;
      return;
    }
    const std::int64_t b = *e.ts_ns, end = *e.ts_ns + *e.dur_ns;
    if (cls == EventClass::cpu_range || cls == EventClass::gpu_range) {
      const std::string* category = args ? string_field(*args, "category") : nullptr;
      auto& v = cls == EventClass::cpu_range ? t_.cpu_ranges : t_.gpu_ranges;
      v.push_back({b, end, range_id(*name, category)});
      return;
    }
    const bool memcpy = cls == EventClass::memory && is_memcpy_cat(*cat);
    ActivityEvent a{b, end, cls, -1, -1, kernel_category(cls, *name)};
    a.copy = cls == EventClass::memory;
    a.track = track_id({int_field(j, "pid", -1), int_field(j, "tid", -1)});
    if (memcpy && copy_is_communication(copy_facts(*name, args))) {
      a.cls = EventClass::comm;
      a.category = KernelCategory::communication;
      a.coll = collective_id(*name, args, true);  // no bytes: S belongs to the collective
    } else if (cls == EventClass::comm) {
      a.coll = collective_id(*name, args);
      if (args) a.bytes = int_field(*args, "bytes", -1);
      comm_kernel_tracks_.insert(a.track);
    }
    if (memcpy && a.cls == EventClass::memory) pending_copies_.push_back(t_.activity.size());
    if (const std::int64_t c = args ? int_field(*args, "correlation", -1) : -1; c >= 0 && !a.copy)
      launched_.emplace_back(t_.activity.size(), c);
    t_.activity.push_back(a);
  }

  // After the last event: copies on communication streams, and kernels' launch times.
  void finish() {
    for (const std::size_t i : pending_copies_) {
      ActivityEvent& a = t_.activity[i];
      CopyFacts f;
      f.on_comm_stream = comm_kernel_tracks_.count(a.track) || comm_named_tracks_.count(a.track);
      if (!copy_is_communication(f)) continue;
      a.cls = EventClass::comm;
      a.category = KernelCategory::communication;
      a.coll = collective_id("", nullptr, true);
    }
    std::sort(launch_end_.begin(), launch_end_.end());
    for (const auto& [i, c] : launched_) {
      const auto it = std::lower_bound(launch_end_.begin(), launch_end_.end(), c,
                                       [](const auto& p, std::int64_t v) { return p.first < v; });
      if (it != launch_end_.end() && it->first == c) t_.activity[i].launch_ns = it->second;
    }
    launched_ = {};
    launch_end_ = {};
  }

 private:
  CopyFacts copy_facts(const std::string& name, const json* args) const {
    CopyFacts f;
    f.peer = is_peer_copy_name(name);
    if (args) {
      const std::int64_t from = int_field(*args, "fromDevice", -1),
                         to = int_field(*args, "toDevice", -1);
      f.peer = f.peer || (from >= 0 && to >= 0 && from != to);
      const std::string* range = string_field(*args, "range");
      const std::string* domain = string_field(*args, "range_domain");
      f.in_collective = args->contains("collective") || (range && is_nccl_range_name(*range)) ||
                        (domain && is_nccl_range_name(*domain));
    }
    return f;
  }

  // Ignored events the analysis still reads: stream tracks named as communication (thread_name
  // metadata), and launch calls (cuda_runtime / cuda_driver with a correlation id).
  void note_ignored(const std::string& ph, const std::string* cat, const std::string* name,
                    const json& j, const json* args, const RawEvent& e) {
    if (ph == "M" && name && *name == "thread_name" && args) {
      if (const std::string* n = string_field(*args, "name"); n && is_comm_track_name(*n))
        comm_named_tracks_.insert(track_id({int_field(j, "pid", -1), int_field(j, "tid", -1)}));
      return;
    }
    if (ph != "X" || !cat || !args || !e.ts_ns || !e.dur_ns) return;
    if (*cat != "cuda_runtime" && *cat != "cuda_driver" && *cat != "runtime" && *cat != "driver")
      return;
    if (const std::int64_t c = int_field(*args, "correlation", -1); c >= 0)
      launch_end_.emplace_back(c, *e.ts_ns + *e.dur_ns);
  }

  std::uint32_t track_id(const Track& k) {
    const auto [it, added] =
        track_ids_.try_emplace(k, static_cast<std::uint32_t>(t_.tracks.size()));
    if (added) t_.tracks.push_back(k);
    return it->second;
  }

  std::uint32_t range_id(const std::string& name, const std::string* category) {
    const auto [it, added] =
        range_ids_.try_emplace(name, static_cast<std::uint32_t>(t_.range_names.size()));
    if (added) {
      t_.range_names.push_back(name);
      t_.range_categories.push_back(category ? *category : "");
    }
    return it->second;
  }

  // Kind and group: this suite's args ("collective", "group"), PyTorch's ("Collective name",
  // "Process Group Name"), else the kind from the NCCL kernel's name (a copy: "memcpy") and group
  // "unknown".
  std::int32_t collective_id(const std::string& name, const json* args, bool copy = false) {
    std::string kind, group;
    if (args) {
      if (const std::string* k = string_field(*args, "collective")) kind = normalize_collective(*k);
      if (const std::string* k = string_field(*args, "Collective name"))
        if (kind.empty()) kind = normalize_collective(*k);
      if (const std::string* g = string_field(*args, "group")) group = *g;
      for (const char* key : {"Process Group Description", "Process Group Name"})
        if (const std::string* g = string_field(*args, key); g && group.empty()) group = *g;
    }
    if (kind.empty()) kind = copy ? "memcpy" : collective_from_kernel_name(name);
    if (group.empty()) group = "unknown";
    const auto [it, added] =
        coll_ids_.try_emplace({kind, group}, static_cast<std::int32_t>(t_.collectives.size()));
    if (added) t_.collectives.push_back({kind, group});
    return it->second;
  }

  RankTrace& t_;
  std::unordered_map<std::string, std::uint32_t> range_ids_;
  std::map<std::pair<std::string, std::string>, std::int32_t> coll_ids_;
  std::map<Track, std::uint32_t> track_ids_;
  std::set<std::uint32_t> comm_kernel_tracks_, comm_named_tracks_;
  std::vector<std::size_t> pending_copies_;                     // memcpys classed memory so far
  std::vector<std::pair<std::size_t, std::int64_t>> launched_;  // kernel index, correlation
  // (correlation, API call end): a sorted vector, not a map - a long trace has millions.
  std::vector<std::pair<std::int64_t, std::int64_t>> launch_end_;
};

}  // namespace

RankTrace load_rank_trace(const std::string& path) {
  RankTrace t;
  t.path = path;
  Loader loader(t);
  const TraceFileInfo info = read_trace(path, [&](RawEvent& e) { loader.add(e); });
  loader.finish();
  t.events = info.events;
  if (const auto d = info.top.find("distributedInfo"); d != info.top.end() && d->is_object()) {
    if (const auto r = d->find("rank"); r != d->end() && r->is_number_integer()) t.rank = *r;
    if (const auto w = d->find("world_size"); w != d->end() && w->is_number_integer())
      t.world_size = *w;
  }
  return t;
}

}  // namespace ovb::trace
