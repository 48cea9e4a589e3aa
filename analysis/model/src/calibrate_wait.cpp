// Calibration of the host backend's blocking wait: what a blocking collective right after compute
// waits for partner ranks on shared cores, from ovb-overlap's blocking_wait scenario (see
// calibrate.hpp and microbench/overlap/blocking_wait.hpp).
#include <algorithm>
#include <cmath>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/gbench.hpp"

namespace ovb::model {

using nlohmann::json;

json calibrate_blocking_wait(Machine& mc, const std::vector<std::string>& files) {
  json rows = json::array();
  double sum = 0;
  int n = 0;
  for (const std::string& f : files) {
    const json doc = read_gbench(f);
    for (const BenchRow& r : benchmark_rows(doc, "overlap", f)) {
      if (overlap_scenario(r) != metrics::kBlockingWaitScenario) continue;
      const double w = r.number("wait_us");
      if (!std::isfinite(w)) continue;
      rows.push_back({{"name", r.name}, {"wait_us", w}, {"t_compute_us", r.number("t_compute_us")},
                      {"t_comm_us", r.number("t_comm_us")}, {"file", f}});
      sum += w;
      ++n;
    }
  }
  if (n == 0) return nullptr;  // not measured (GPU results, or files of an older suite): stays 0
  const double mean = sum / n;
  // A negative mean is noise around no wait (t_s below its parts alone): nothing to charge.
  mc.blocking_wait_us = std::max(0.0, mean);
  if (!mc.sources.is_object()) mc.sources = json::object();
  mc.sources["interference.blocking_wait_us"] =
      "ovb-overlap " + files.front() + (files.size() > 1 ? " (and more)" : "") +
      ": scenario " + metrics::kBlockingWaitScenario + ", the mean wait_us (t_s - t_c - t_m) of " +
      std::to_string(n) + " row(s), 0 if negative (calibrate --overlap; the calibration's "
      "\"blocking_wait\" report)";
  return {{"rows", rows}, {"mean_us", mean}, {"blocking_wait_us", mc.blocking_wait_us}};
}

}  // namespace ovb::model
