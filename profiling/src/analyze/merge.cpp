// Merging per-rank traces into one for Perfetto (see merge.hpp).
#include "merge.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "ovb/error.hpp"
#include "ovb/trace_writer.hpp"
#include "rank_trace.hpp"
#include "steady_state.hpp"
#include "trace_reader.hpp"

namespace ovb::trace {

namespace {

using json = nlohmann::json;

enum class Source { measured = 0, predicted = 1 };

const char* name_of(Source s) {
  return s == Source::predicted ? "predicted" : "measured";
}

struct Input {
  std::string path;
  int rank = 0;
  Source source = Source::measured;
  std::int64_t base_ns = 0;
  std::int64_t shift_ns = 0;  // added to every time: a predicted input moved onto measured time
  json top;
};

// Pids of one rank map to (rank + 1) * kPidsPerRank + kPidsPerSource * source + their order of
// appearance, so a predicted rank's processes sort right after the measured ones of its rank.
constexpr std::int64_t kPidsPerRank = 1000;
constexpr std::int64_t kPidsPerSource = 500;
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
  if (const auto t = in.top.find("ovbTracer"); t != in.top.end() && t->is_object())
    if (const auto m = t->find("mode"); m != t->end() && *m == kPredictedMode)
      in.source = Source::predicted;
  return in;
}

// The start and length of the iteration a trace stands for, on its own clock (relative to its
// base): the median steady-state one when it marks iterations (a predicted trace marks one), else
// from its first to its last activity. `marked` says which.
struct Anchor {
  std::int64_t begin_ns = 0, length_ns = 0;
  std::optional<ChosenIteration> marked;
};

Anchor anchor_of(const Input& in) {
  const RankTrace t = load_rank_trace(in.path);
  Anchor a;
  if ((a.marked = median_iteration(t))) {
    a.begin_ns = a.marked->begin_ns;
    a.length_ns = a.marked->end_ns - a.marked->begin_ns;
    return a;
  }
  if (t.activity.empty()) return a;
  a.begin_ns = t.activity.front().begin_ns;
  std::int64_t end = a.begin_ns;
  for (const ActivityEvent& e : t.activity) {
    a.begin_ns = std::min(a.begin_ns, e.begin_ns);
    end = std::max(end, e.end_ns);
  }
  a.length_ns = end - a.begin_ns;
  return a;
}

// Moves every predicted input so that its iteration starts where the lowest measured rank's
// chosen iteration starts (absolute times); returns where that is.
MergeAlignment align(std::vector<Input>& inputs) {
  const Input& ref = *std::find_if(inputs.begin(), inputs.end(),
                                   [](const Input& in) { return in.source == Source::measured; });
  const Anchor m = anchor_of(ref);
  MergeAlignment a;
  a.rule = m.marked ? "median steady-state iteration" : "trace start (no iteration marks)";
  a.rank = ref.rank;
  a.iteration = m.marked ? m.marked->index : -1;
  a.iterations = m.marked ? m.marked->window.iterations : 0;
  a.warmup = m.marked ? m.marked->window.warmup : 0;
  a.begin_ns = ref.base_ns + m.begin_ns;  // absolute until the merged base is known
  a.measured_ns = m.length_ns;
  for (Input& in : inputs) {
    if (in.source != Source::predicted) continue;
    const Anchor p = anchor_of(in);
    in.shift_ns = a.begin_ns - (in.base_ns + p.begin_ns);
    a.predicted_ns = std::max(a.predicted_ns, p.length_ns);
  }
  return a;
}

class RankCopier {
 public:
  RankCopier(const Input& in, bool label_source, TraceWriter& w)
      : in_(in), w_(w), slot_(2 * in.rank + static_cast<int>(in.source)) {
    prefix_ = (label_source ? std::string(name_of(in.source)) + " " : std::string()) + "rank " +
              std::to_string(in.rank) + ": ";
  }

  void copy() {
    read_trace(in_.path, [&](RawEvent& e) { event(e); });
    for (const auto& [key, pid] : pids_) {
      const auto n = names_.find(key);
      const std::string name = n != names_.end() ? n->second : "pid " + key;
      w_.process_name(pid, prefix_ + name, pid);
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
      j["id"] = j["id"].get<std::int64_t>() + (slot_ + 1) * kFlowIdsPerRank;
    ++events_;
    if (e.ts_ns)  // the rank's absolute time; the writer rebases it
      w_.raw(j, *e.ts_ns + in_.base_ns + in_.shift_ns);
    else
      w_.raw(j);
  }

  std::int64_t pid_of(const std::string& key) {
    if (!pids_.count(key) && static_cast<std::int64_t>(pids_.size()) == kPidsPerSource)
      throw UsageError(in_.path + ": more than " + std::to_string(kPidsPerSource) +
                       " processes in one rank's trace, more than ovb-trace merge numbers apart");
    const auto [it, added] = pids_.try_emplace(
        key, (in_.rank + 1) * kPidsPerRank + kPidsPerSource * static_cast<int>(in_.source) +
                 static_cast<std::int64_t>(pids_.size()));
    return it->second;
  }

  const Input& in_;
  TraceWriter& w_;
  int slot_;  // distinct for every (rank, source): keeps flow ids apart
  std::string prefix_;
  std::map<std::string, std::int64_t> pids_;
  std::map<std::string, std::string> names_;
  std::size_t events_ = 0;
};

nlohmann::ordered_json alignment_json(const MergeAlignment& a) {
  return {{"rule", a.rule},
          {"measured_rank", a.rank},
          {"iteration", a.iteration},
          {"iterations", a.iterations},
          {"warmup", a.warmup},
          {"begin_ns", a.begin_ns},
          {"measured_ns", a.measured_ns},
          {"predicted_ns", a.predicted_ns}};
}

}  // namespace

MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw UsageError("nothing to merge: no trace files given");
  std::vector<Input> headers;
  std::map<std::pair<Source, int>, std::string> seen;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    headers.push_back(read_header(inputs[i], static_cast<int>(i)));
    const Input& in = headers.back();
    if (const auto [it, added] = seen.try_emplace({in.source, in.rank}, inputs[i]); !added)
      throw UsageError("traces '" + it->second + "' and '" + inputs[i] + "' are both " +
                       name_of(in.source) + " traces of rank " + std::to_string(in.rank));
  }
  std::sort(headers.begin(), headers.end(), [](const Input& a, const Input& b) {
    return std::tuple(a.rank, a.source) < std::tuple(b.rank, b.source);
  });
  const auto predicted = std::count_if(headers.begin(), headers.end(), [](const Input& in) {
    return in.source == Source::predicted;
  });
  const bool mixed = predicted > 0 && predicted < static_cast<std::ptrdiff_t>(headers.size());
  MergeSummary summary;
  if (mixed) summary.alignment = align(headers);

  TraceHeader h;
  h.rank = -1;  // not one rank: keeps HTA's rank regex from taking it for rank N
  h.world_size = static_cast<int>(headers.size());
  h.backend = "merged";
  h.base_ns = headers.front().base_ns + headers.front().shift_ns;
  for (const Input& in : headers) h.base_ns = std::min(h.base_ns, in.base_ns + in.shift_ns);
  nlohmann::ordered_json from = nlohmann::ordered_json::array();
  for (const Input& in : headers) {
    from.push_back({{"rank", in.rank},
                    {"source", name_of(in.source)},
                    {"file", in.path},
                    {"baseTimeNanoseconds", in.base_ns},
                    {"shift_ns", in.shift_ns}});
    if (const auto d = in.top.find("deviceProperties"); d != in.top.end() && d->is_array())
      for (const auto& p : *d) h.device_properties.push_back(nlohmann::ordered_json(p));
  }
  h.extra["traceName"] = output;
  h.extra["mergedFrom"] = from;
  if (summary.alignment) {
    summary.alignment->begin_ns -= h.base_ns;
    h.extra["alignment"] = alignment_json(*summary.alignment);
  }
  TraceWriter w(output, h);
  for (const Input& in : headers) RankCopier(in, mixed, w).copy();
  w.finish();
  summary.events = w.events();
  summary.ranks = static_cast<int>(headers.size() - (mixed ? predicted : 0));
  summary.predicted = mixed ? static_cast<int>(predicted) : 0;
  return summary;
}

}  // namespace ovb::trace
