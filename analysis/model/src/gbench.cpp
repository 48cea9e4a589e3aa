// Google Benchmark result files of the suite's microbenchmarks (see gbench.hpp).
#include "ovb/model/gbench.hpp"

#include <sstream>

#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/metrics.hpp"

namespace ovb::model {

using nlohmann::json;

bool BenchRow::has(const char* key) const {
  return entry->contains(key);
}

double BenchRow::number(const char* key) const {
  if (!entry->contains(key) || !entry->at(key).is_number())
    throw UsageError(file + ": benchmark '" + name + "' has no numeric '" + key +
                     "' counter (results/SCHEMA.md, \"Microbenchmarks\")");
  return entry->at(key).get<double>();
}

std::string BenchRow::tag(const std::string& key) const {
  if (auto it = label.find(key); it != label.end()) return it->second;
  std::istringstream parts(name);
  for (std::string part; std::getline(parts, part, '/');)
    if (part.rfind(key + ":", 0) == 0) return part.substr(key.size() + 1);
  return "";
}

json read_gbench(const std::string& path) {
  json doc = read_json(path);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw UsageError(path + ": not a Google Benchmark result (no \"benchmarks\" list)");
  return doc;
}

std::string overlap_scenario(const BenchRow& r) {
  const auto it = r.label.find("scenario");
  return it != r.label.end() ? it->second : metrics::kDefaultOverlapScenario;
}

namespace {

std::map<std::string, std::string> parse_label(const json& e) {
  std::map<std::string, std::string> out;
  if (!e.contains("label") || !e["label"].is_string()) return out;
  std::istringstream words(e["label"].get<std::string>());
  for (std::string w; words >> w;)
    if (const auto eq = w.find('='); eq != std::string::npos)
      out[w.substr(0, eq)] = w.substr(eq + 1);
  return out;
}

// Preference of an entry for its run: median 3, mean 2, iteration 1 (later ones win ties).
int preference(const json& e) {
  const std::string type = e.value("run_type", "iteration");
  if (type != "aggregate") return 1;
  const std::string agg = e.value("aggregate_name", "");
  return agg == "median" ? 3 : agg == "mean" ? 2 : 0;
}

}  // namespace

std::vector<BenchRow> benchmark_rows(const json& doc, std::string_view prefix,
                                     const std::string& file) {
  std::vector<std::string> order;
  std::map<std::string, const json*> best;
  for (const json& e : doc.at("benchmarks")) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    const std::string name = e["name"].get<std::string>();
    if (name.rfind(prefix, 0) != 0 || e.value("error_occurred", false)) continue;
    const std::string run = e.contains("run_name") && e["run_name"].is_string()
                                ? e["run_name"].get<std::string>()
                                : name;
    const int pref = preference(e);
    if (pref == 0) continue;  // stddev, cv, min, ... aggregates
    auto it = best.find(run);
    if (it == best.end()) {
      order.push_back(run);
      best[run] = &e;
    } else if (pref >= preference(*it->second)) {
      it->second = &e;
    }
  }
  std::vector<BenchRow> rows;
  for (const std::string& run : order) {
    BenchRow r;
    r.file = file;
    r.name = run;
    r.entry = best[run];
    r.label = parse_label(*r.entry);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace ovb::model
