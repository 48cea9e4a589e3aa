// Calibration of the host backend's blocking wait: what a blocking collective right after compute
// waits for partner ranks on shared cores, by the compute time before it, from ovb-overlap's
// blocking_wait scenario (see calibrate.hpp and microbench/overlap/blocking_wait.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "ovb/metrics.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/gbench.hpp"

namespace ovb::model {

using nlohmann::json;

json calibrate_blocking_wait(Machine& mc, const std::vector<std::string>& files) {
  struct Sum {
    double compute = 0, wait = 0;
    int n = 0;
  };
  std::map<std::tuple<double, double, double>, Sum> by_shape;  // the GEMM (m, n, k): one C
  json rows = json::array();
  for (const std::string& f : files) {
    const json doc = read_gbench(f);
    for (const BenchRow& r : benchmark_rows(doc, "overlap", f)) {
      if (overlap_scenario(r) != metrics::kBlockingWaitScenario) continue;
      const double c = r.number("t_compute_mean_us"), w = r.number("wait_us");
      if (!std::isfinite(c) || !std::isfinite(w) || !(c > 0)) continue;
      Sum& s = by_shape[{r.number("m"), r.number("n"), r.number("k")}];
      s.compute += c;
      s.wait += w;
      ++s.n;
      rows.push_back({{"name", r.name},
                      {"t_compute_mean_us", c},
                      {"t_comm_us", r.number("t_comm_us")},
                      {"wait_us", w},
                      {"file", f}});
    }
  }
  if (rows.empty()) return nullptr;  // not measured (GPU results, older suite files): unchanged
  std::vector<BlockingWaitPoint> pts;
  for (const auto& [shape, s] : by_shape)
    // A negative mean is noise around no wait (t_s below its parts alone): nothing to charge.
    pts.push_back({s.compute / s.n, std::max(0.0, s.wait / s.n)});
  std::sort(pts.begin(), pts.end(), [](const BlockingWaitPoint& a, const BlockingWaitPoint& b) {
    return a.compute_us < b.compute_us;
  });
  mc.blocking_wait.clear();
  for (const BlockingWaitPoint& p : pts)  // shapes of equal compute time: the first one's wait
    if (mc.blocking_wait.empty() || p.compute_us > mc.blocking_wait.back().compute_us)
      mc.blocking_wait.push_back(p);
  if (!mc.sources.is_object()) mc.sources = json::object();
  mc.sources["interference.blocking_wait"] =
      "ovb-overlap " + files.front() + (files.size() > 1 ? " (and more)" : "") + ": scenario " +
      metrics::kBlockingWaitScenario +
      ", per GEMM shape the mean t_compute_mean_us and the mean wait_us (t_s - t_c - t_m, 0 if "
      "negative) over its collectives (calibrate --overlap; the calibration's \"blocking_wait\" "
      "report)";
  json points = json::array();
  for (const BlockingWaitPoint& p : mc.blocking_wait)
    points.push_back({{"compute_us", p.compute_us}, {"wait_us", p.wait_us}});
  return {{"rows", rows}, {"points", points}};
}

}  // namespace ovb::model
