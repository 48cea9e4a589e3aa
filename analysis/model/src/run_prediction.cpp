// A gpt4d run's prediction beside its measurement (see run_prediction.hpp).
#include "ovb/model/run_prediction.hpp"

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ovb/error.hpp"
#include "ovb/model/stats.hpp"
#include "ovb/model/table.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

struct Term {
  std::string group, kind;
  double count = 0, bytes = 0, time_ms = 0, exposed_ms = 0;
};

double num(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

json error_or_null(double predicted, double measured) {
  return measured > 0 ? json(error_pct(predicted, measured)) : json(nullptr);
}

// The model's terms per (group, kind), in group then kind order; bytes summed over the slots.
std::vector<Term> predicted_terms(const Prediction& p) {
  std::vector<Term> out;
  const Timeline& t = p.timeline;
  for (Group g : kGroups)
    for (CollKind k : kKinds) {
      const auto gi = static_cast<std::size_t>(g), ki = static_cast<std::size_t>(k);
      if (t.count[gi][ki] <= 0) continue;
      Term term{std::string(name_of(g)), std::string(name_of(k)),   t.count[gi][ki], 0,
                t.comm_us[gi][ki] / 1e3, t.exposed_us[gi][ki] / 1e3};
      for_each_slot(p.comm, [&](const CommSlot& s, double mult) {
        if (s.cost.group == g && s.cost.kind == k) term.bytes += s.cost.bytes * mult;
      });
      out.push_back(std::move(term));
    }
  return out;
}

Term* find(std::vector<Term>& v, const std::string& group, const std::string& kind) {
  for (Term& t : v)
    if (t.group == group && t.kind == kind) return &t;
  return nullptr;
}

}  // namespace

Machine machine_for_run(Machine mc, int ranks_per_gpu) {
  if (ranks_per_gpu > 1) mc.ranks_per_device = ranks_per_gpu;
  return mc;
}

json prediction_vs_measured(const Prediction& p, const Machine& mc, const json& summary) {
  if (!summary.contains("median_time_ms") || !summary["median_time_ms"].is_number())
    throw Error("prediction_vs_measured: the summary has no median_time_ms");
  std::vector<Term> pred = predicted_terms(p);
  // Measured terms in the model's row order; any the plan does not have come after.
  std::vector<Term> meas(pred.size());
  for (std::size_t i = 0; i < pred.size(); ++i) meas[i] = {pred[i].group, pred[i].kind};
  for (const json& c : summary.value("collectives", json::array())) {
    const std::string g = c.value("group", ""), k = c.value("kind", "");
    Term* t = find(meas, g, k);
    if (!t) {
      meas.push_back({g, k});
      pred.push_back({g, k});
      t = &meas.back();
    }
    t->count += num(c, "count");
    t->bytes += num(c, "bytes");
    t->time_ms += num(c, "time_ms");
    t->exposed_ms += num(c, "exposed_ms");
  }
  json terms = json::array();
  double meas_comm = 0, meas_exposed = 0, pred_comm = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const Term &a = pred[i], &b = meas[i];
    terms.push_back({{"group", a.group},
                     {"kind", a.kind},
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
