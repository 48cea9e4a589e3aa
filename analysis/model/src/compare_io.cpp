// Reading the measurements for ovb-model compare: gpt4d results and trace analyses, paired by
// file name, and the model inputs of a gpt4d configuration (see compare.hpp).
#include <algorithm>
#include <filesystem>

#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/compare.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/run_config.hpp"

namespace ovb::model {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool is_gpt4d(const json& d) {
  return d.is_object() && d.contains("config") && d.contains("iterations") && d.contains("summary");
}
bool is_trace_analysis(const json& d) {
  return d.is_object() && d.contains("ranks") && d["ranks"].is_array() && d.contains("summary");
}

std::string stem_of(const std::string& path) {
  std::string s = fs::path(path).filename().string();
  if (s.size() > 5 && s.ends_with(".json")) s.resize(s.size() - 5);
  return s;
}

const json& need(const json& j, const char* key, const std::string& file, const std::string& path) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null())
    throw UsageError(file + ": gpt4d result without '" + path + key + "' (results/SCHEMA.md)");
  return j[key];
}

}  // namespace

std::vector<MeasuredRun> load_runs(const std::vector<std::string>& paths,
                                   std::vector<std::string>* skipped) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().extension() == ".json")
          files.push_back(e.path().string());
    } else {
      files.push_back(p);  // read_json names a missing file
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<MeasuredRun> runs;
  std::vector<std::pair<std::string, json>> traces;
  for (const std::string& f : files) {
    const bool named = paths.end() != std::find(paths.begin(), paths.end(), f);
    json d;
    try {
      d = read_json(f);
    } catch (const UsageError& e) {
      if (named) throw;
      if (skipped) skipped->push_back(e.what());
      continue;
    }
    if (is_gpt4d(d))
      runs.push_back({f, std::move(d), "", nullptr});
    else if (is_trace_analysis(d))
      traces.emplace_back(f, std::move(d));
    else if (named)
      throw UsageError(f + ": neither a gpt4d result nor an ovb-trace analysis");
  }
  if (runs.empty())
    throw UsageError(
        "compare: no gpt4d result among the inputs" +
        (skipped && !skipped->empty() ? " (skipped: " + skipped->front() + ")" : std::string()));
  for (auto& [tf, td] : traces) {
    // The longest result stem that starts the trace analysis's name.
    MeasuredRun* best = nullptr;
    for (MeasuredRun& r : runs) {
      const std::string s = stem_of(r.file);
      if (stem_of(tf).rfind(s, 0) == 0 && (!best || s.size() > stem_of(best->file).size()))
        best = &r;
    }
    if (!best)
      throw UsageError(tf +
                       ": trace analysis without a gpt4d result named like it (RUN.json for "
                       "RUN.trace-analysis.json)");
    best->trace_file = tf;
    best->trace = std::move(td);
  }
  return runs;
}

std::pair<GptShape, GptPlanOptions> config_of_result(const json& r, const std::string& file) {
  const json& cfg = need(r, "config", file, "");
  // dtype defaults to what gpt4d's backend trains in: results written before it was recorded.
  const std::string backend =
      r.contains("context") ? r["context"].value("backend", std::string("host")) : "host";
  RunConfig defaults;
  defaults.plan.act_dtype = parse_dtype(backend == "cuda" ? "bf16" : "fp32");
  const RunConfig c = run_config_from_json(cfg, file + ": 'config.", defaults);
  GptShape m = c.model;
  GptPlanOptions o = c.plan;
  if (backend != "cuda") o.gemm_workspace_bytes = 0;  // gpt4d's host backend has no cuBLASLt
  return {m, o};
}

}  // namespace ovb::model
