// Loading one rank's trace into compact intervals (see rank_trace.hpp).
#include "rank_trace.hpp"

#include <map>

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
    ActivityEvent a{b, end, cls, -1, -1, kernel_category(cls, *name)};
    if (cls == EventClass::comm) {
      a.coll = collective_id(*name, args);
      if (args) a.bytes = int_field(*args, "bytes", -1);
    }
    t_.activity.push_back(a);
  }

 private:
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
  // "Process Group Name"), else the kind from the NCCL kernel's name and group "unknown".
  std::int32_t collective_id(const std::string& name, const json* args) {
    std::string kind, group;
    if (args) {
      if (const std::string* k = string_field(*args, "collective")) kind = normalize_collective(*k);
      if (const std::string* k = string_field(*args, "Collective name"))
        if (kind.empty()) kind = normalize_collective(*k);
      if (const std::string* g = string_field(*args, "group")) group = *g;
      for (const char* key : {"Process Group Description", "Process Group Name"})
        if (const std::string* g = string_field(*args, key); g && group.empty()) group = *g;
    }
    if (kind.empty()) kind = collective_from_kernel_name(name);
    if (group.empty()) group = "unknown";
    const auto [it, added] =
        coll_ids_.try_emplace({kind, group}, static_cast<std::int32_t>(t_.collectives.size()));
    if (added) t_.collectives.push_back({kind, group});
    return it->second;
  }

  RankTrace& t_;
  std::unordered_map<std::string, std::uint32_t> range_ids_;
  std::map<std::pair<std::string, std::string>, std::int32_t> coll_ids_;
};

}  // namespace

RankTrace load_rank_trace(const std::string& path) {
  RankTrace t;
  t.path = path;
  Loader loader(t);
  const TraceFileInfo info = read_trace(path, [&](RawEvent& e) { loader.add(e); });
  t.events = info.events;
  if (const auto d = info.top.find("distributedInfo"); d != info.top.end() && d->is_object()) {
    if (const auto r = d->find("rank"); r != d->end() && r->is_number_integer()) t.rank = *r;
    if (const auto w = d->find("world_size"); w != d->end() && w->is_number_integer())
      t.world_size = *w;
  }
  return t;
}

}  // namespace ovb::trace
