// Calculon's predictions beside ovb-model validate's (see validate_calculon.hpp).
#include "ovb/model/validate_calculon.hpp"

#include <filesystem>

#include "ovb/error.hpp"
#include "ovb/io.hpp"

namespace ovb::model {

using nlohmann::json;

std::string default_calculon_file() {
  return (std::filesystem::path(OVB_VALIDATION_FILE).parent_path() / "calculon_results.json")
      .string();
}

SecondToolTimes load_calculon_results(const std::string& path) {
  const json doc = read_json(path);
  const auto fail = [&](const std::string& what) {
    throw UsageError("Calculon results " + path + ": " + what);
  };
  if (!doc.contains("runs") || !doc["runs"].is_array()) fail("'runs' must be a list");
  SecondToolTimes times;
  for (const json& r : doc["runs"]) {
    if (!r.contains("id") || !r["id"].is_string()) fail("a run without a string 'id'");
    const std::string id = r["id"].get<std::string>();
    const json t = r.value("predicted_iteration_s", json());
    if (!t.is_number() || !(t.get<double>() > 0))
      fail("run " + id + ": 'predicted_iteration_s' must be a number > 0");
    if (!times.emplace(id, t.get<double>()).second) fail("run " + id + " twice");
  }
  return times;
}

void add_second_tool(ValidationRow& row, const SecondToolTimes& times) {
  const auto it = times.find(row.run.id);
  if (it == times.end()) return;
  row.calculon_s = it->second;
  const double tflops = row.predicted_tflops * (row.predicted_ms / 1e3) / it->second;
  row.calculon_error_pct = 100 * (tflops - row.published_tflops) / row.published_tflops;
}

}  // namespace ovb::model
