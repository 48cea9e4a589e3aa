// Merging per-rank traces into one for Perfetto (see merge.hpp).
#include "merge.hpp"

#include <algorithm>
#include <map>

#include "ovb/error.hpp"
#include "ovb/trace_writer.hpp"
#include "trace_reader.hpp"

namespace ovb::trace {

namespace {

using json = nlohmann::json;

struct Input {
  std::string path;
  int rank = 0;
  std::int64_t base_ns = 0;
  json top;
};

// Pids of one rank map to (rank + 1) * kPidsPerRank + their order of appearance.
constexpr std::int64_t kPidsPerRank = 1000;
constexpr std::int64_t kFlowIdsPerRank = 1'000'000'000'000;

Input read_header(const std::string& path, int position) {
  Input in;
  in.path = path;
  in.rank = position;
  in.top = read_trace(path, [](RawEvent&) {}).top;
  if (const auto d = in.top.find("distributedInfo"); d != in.top.end() && d->is_object())
    if (const auto r = d->find("rank"); r != d->end() && r->is_number_integer() && *r >= 0)
      in.rank = *r;
  if (const auto b = in.top.find("baseTimeNanoseconds"); b != in.top.end() && b->is_number())
    in.base_ns = b->get<std::int64_t>();
  return in;
}

class RankCopier {
 public:
  RankCopier(const Input& in, TraceWriter& w) : in_(in), w_(w) {}

  void copy() {
    read_trace(in_.path, [&](RawEvent& e) { event(e); });
    for (const auto& [key, pid] : pids_) {
      const auto n = names_.find(key);
      const std::string name = n != names_.end() ? n->second : "pid " + key;
      w_.process_name(pid, "rank " + std::to_string(in_.rank) + ": " + name, pid);
    }
  }

 private:
  void event(RawEvent& e) {
    json& j = e.json;
    if (!j.is_object()) return;
    const auto ph = j.value("ph", std::string());
    const auto name = j.value("name", std::string());
    const std::string pid_key = j.contains("pid") ? j["pid"].dump() : "0";
    if (ph == "M" && (name == "process_name" || name == "process_sort_index")) {
      if (name == "process_name" && j.contains("args") && j["args"].is_object())
        names_[pid_key] = j["args"].value("name", pid_key);
      pid_of(pid_key);
      return;  // replaced by the rank-qualified names written after the events
    }
    j["pid"] = pid_of(pid_key);
    if ((ph == "s" || ph == "t" || ph == "f") && j.contains("id") && j["id"].is_number_integer())
      j["id"] = j["id"].get<std::int64_t>() + (in_.rank + 1) * kFlowIdsPerRank;
    ++events_;
    if (e.ts_ns)
      w_.raw(j, *e.ts_ns + in_.base_ns);  // the rank's absolute time; the writer rebases it
    else
      w_.raw(j);
  }

  std::int64_t pid_of(const std::string& key) {
    const auto [it, added] = pids_.try_emplace(
        key, (in_.rank + 1) * kPidsPerRank + static_cast<std::int64_t>(pids_.size()));
    return it->second;
  }

  const Input& in_;
  TraceWriter& w_;
  std::map<std::string, std::int64_t> pids_;
  std::map<std::string, std::string> names_;
  std::size_t events_ = 0;
};

}  // namespace

MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw UsageError("nothing to merge: no trace files given");
  std::vector<Input> headers;
  std::map<int, std::string> seen;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    headers.push_back(read_header(inputs[i], static_cast<int>(i)));
    if (const auto [it, added] = seen.try_emplace(headers.back().rank, inputs[i]); !added)
      throw UsageError("traces '" + it->second + "' and '" + inputs[i] + "' are both of rank " +
                       std::to_string(headers.back().rank));
  }
  std::sort(headers.begin(), headers.end(),
            [](const Input& a, const Input& b) { return a.rank < b.rank; });
  TraceHeader h;
  h.rank = -1;  // not one rank: keeps HTA's rank regex from taking it for rank N
  h.world_size = static_cast<int>(headers.size());
  h.backend = "merged";
  h.base_ns = std::min_element(headers.begin(), headers.end(), [](const auto& a, const auto& b) {
                return a.base_ns < b.base_ns;
              })->base_ns;
  nlohmann::ordered_json from = nlohmann::ordered_json::array();
  for (const Input& in : headers) {
    from.push_back({{"rank", in.rank}, {"file", in.path}, {"baseTimeNanoseconds", in.base_ns}});
    if (const auto d = in.top.find("deviceProperties"); d != in.top.end() && d->is_array())
      for (const auto& p : *d) h.device_properties.push_back(nlohmann::ordered_json(p));
  }
  h.extra["traceName"] = output;
  h.extra["mergedFrom"] = from;
  TraceWriter w(output, h);
  for (const Input& in : headers) RankCopier(in, w).copy();
  w.finish();
  return {w.events(), static_cast<int>(headers.size())};
}

}  // namespace ovb::trace
