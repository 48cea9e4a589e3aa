// A gpt4d run's prediction beside its measurement (see run_prediction.hpp).
#include "ovb/model/run_prediction.hpp"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ovb/error.hpp"
#include "ovb/model/stats.hpp"
#include "ovb/model/table.hpp"
#include "terms.hpp"

namespace ovb::model {

using nlohmann::json;

using detail::error_or_null;
using detail::Term;
using detail::TermKey;

Machine machine_for_run(Machine mc, int ranks_per_device) {
  if (ranks_per_device > 1) mc.ranks_per_device = ranks_per_device;
  return mc;
}

json prediction_vs_measured(const Prediction& p, const Machine& mc, const json& summary) {
  if (!summary.contains("median_time_ms") || !summary["median_time_ms"].is_number())
    throw Error("prediction_vs_measured: the summary has no median_time_ms");
  const auto pred = detail::predicted_terms(p);
  const auto meas = detail::gpt4d_terms(summary);
  // Rows in the model's order (group, then kind); any the plan does not have come after.
  std::vector<TermKey> keys;
  for (Group g : kGroups)
    for (CollKind k : kKinds)
      if (pred.count({std::string(name_of(g)), std::string(name_of(k))}))
        keys.emplace_back(std::string(name_of(g)), std::string(name_of(k)));
  for (const auto& [key, unused] : meas)
    if (!pred.count(key)) keys.push_back(key);
  json terms = json::array();
  double meas_comm = 0, meas_exposed = 0, pred_comm = 0;
  for (const TermKey& key : keys) {
    const Term a = pred.count(key) ? pred.at(key) : Term{};
    const Term b = meas.count(key) ? meas.at(key) : Term{};
    terms.push_back({{"group", key.first},
                     {"kind", key.second},
                     {"predicted_count", a.count},
                     {"measured_count", b.count},
                     {"predicted_bytes", a.bytes},
                     {"measured_bytes", b.bytes},
                     {"predicted_ms", a.time_ms},
                     {"measured_ms", b.time_ms},
                     {"error_pct", error_or_null(a.time_ms, b.time_ms)},
                     {"predicted_exposed_ms", a.exposed_ms},
                     {"measured_exposed_ms", b.exposed_ms},
                     {"exposed_error_pct", error_or_null(a.exposed_ms, b.exposed_ms)}});
    pred_comm += a.time_ms;
    meas_comm += b.time_ms;
    meas_exposed += b.exposed_ms;
  }
  const double measured = summary["median_time_ms"].get<double>();
  const double pred_exposed = p.timeline.exposed_total_us() / 1e3;
  return {{"machine", mc.name},
          {"machine_file", mc.origin},
          {"ranks_per_device", mc.ranks_per_device},
          {"predicted_ms", p.iteration_ms()},
          {"measured_ms", measured},
          {"error_pct", error_or_null(p.iteration_ms(), measured)},
          {"predicted_comm_ms", pred_comm},
          {"measured_comm_ms", meas_comm},
          {"predicted_exposed_comm_ms", pred_exposed},
          {"measured_exposed_comm_ms", meas_exposed},
          {"exposed_error_pct", error_or_null(pred_exposed, meas_exposed)},
          {"breakdown", summary_json(p)},
          {"terms", terms}};
}

std::string format_vs_measured(const json& vs) {
  auto pct = [](const json& v) { return v.is_number() ? fmt(v.get<double>(), 1) : "-"; };
  TextTable table({"group kind", "calls pred", "calls meas", "comm pred ms", "comm meas ms",
                   "error %", "exposed pred ms", "exposed meas ms"});
  for (const json& t : vs["terms"])
    table.row({t["group"].get<std::string>() + " " + t["kind"].get<std::string>(),
               fmt(t["predicted_count"].get<double>(), 0),
               fmt(t["measured_count"].get<double>(), 0), fmt(t["predicted_ms"].get<double>(), 3),
               fmt(t["measured_ms"].get<double>(), 3), pct(t["error_pct"]),
               fmt(t["predicted_exposed_ms"].get<double>(), 3),
               fmt(t["measured_exposed_ms"].get<double>(), 3)});
  table.row({"all", "", "", fmt(vs["predicted_comm_ms"].get<double>(), 3),
             fmt(vs["measured_comm_ms"].get<double>(), 3), "",
             fmt(vs["predicted_exposed_comm_ms"].get<double>(), 3),
             fmt(vs["measured_exposed_comm_ms"].get<double>(), 3)});
  std::ostringstream os;
  os << "predicted (" << vs["machine"].get<std::string>() << ") vs measured, per iteration:\n"
     << table.str("  ") << "  iteration: predicted " << fmt(vs["predicted_ms"].get<double>(), 3)
     << " ms, measured " << fmt(vs["measured_ms"].get<double>(), 3) << " ms (median), error "
     << pct(vs["error_pct"]) << " %\n";
  return os.str();
}

}  // namespace ovb::model
