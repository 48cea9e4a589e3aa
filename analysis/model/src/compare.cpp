// Model vs measurement (see compare.hpp).
#include "ovb/model/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "ovb/error.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/stats.hpp"
#include "ovb/model/table.hpp"
#include "ovb/timing_stats.hpp"
#include "terms.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

using detail::error_or_null;
using detail::gpt4d_terms;
using detail::group_name;
using detail::num;
using detail::predicted_terms;
using detail::Term;
using Key = detail::TermKey;

// Mean over ranks of each (group, kind) of a trace analysis.
std::map<Key, Term> trace_terms(const json& trace) {
  std::map<Key, Term> out;
  const json& ranks = trace["ranks"];
  for (const json& r : ranks)
    for (const json& c : r.value("collectives", json::array())) {
      Term& t = out[{group_name(c.value("group", "")), c.value("kind", "")}];
      t.count += num(c, "count") / static_cast<double>(ranks.size());
      t.time_ms += num(c, "total_us") / 1e3 / static_cast<double>(ranks.size());
    }
  return out;
}

// Terms side by side; a measured term covering n iterations (its count n times the predicted
// one) is divided by n.
json terms_json(const std::map<Key, Term>& pred, const std::map<Key, Term>& meas, json& warnings,
                const std::string& file) {
  std::map<Key, int> keys;
  for (const auto& [k, v] : pred) keys[k] = 1;
  for (const auto& [k, v] : meas) keys[k] = 1;
  json out = json::array();
  for (const auto& [key, unused] : keys) {
    const Term p = pred.count(key) ? pred.at(key) : Term{};
    const Term m = meas.count(key) ? meas.at(key) : Term{};
    double n = 1;
    if (p.count > 0 && m.count > 0) n = m.count / p.count;
    if (std::abs(n - std::round(n)) > 1e-6 || n < 1)
      warnings.push_back(file + ": " + key.first + " " + key.second + ": measured " +
                         fmt(m.count, 0) + " calls, the plan has " + fmt(p.count, 0) +
                         " per iteration");
    if (p.count == 0 || m.count == 0)
      warnings.push_back(
          file + ": " + key.first + " " + key.second + " is " +
          (p.count == 0 ? "measured but not in the plan" : "in the plan but not measured"));
    if (p.bytes > 0 && m.bytes > 0 && std::abs(m.bytes / n / p.bytes - 1) > 0.01)
      warnings.push_back(file + ": " + key.first + " " + key.second + ": measured " +
                         fmt(m.bytes / n, 0) + " bytes per iteration, the plan " + fmt(p.bytes, 0));
    json t = {{"group", key.first},
              {"kind", key.second},
              {"predicted_ms", p.time_ms},
              {"measured_ms", m.time_ms / n},
              {"predicted_exposed_ms", p.exposed_ms},
              {"measured_exposed_ms", m.exposed_ms / n},
              {"predicted_count", p.count},
              {"measured_count", m.count / n}};
    t["error_pct"] = error_or_null(p.time_ms, m.time_ms / n);
    out.push_back(t);
  }
  return out;
}

double measured_iteration_ms(const json& r, const std::string& file) {
  const json& s = r["summary"];
  if (s.contains("median_time_ms") && s["median_time_ms"].is_number())
    return s["median_time_ms"].get<double>();
  std::vector<double> t;
  for (const json& it : r["iterations"])
    if (it.contains("time_ms") && it["time_ms"].is_number()) t.push_back(it["time_ms"]);
  if (t.empty())
    throw UsageError(file + ": gpt4d result without summary.median_time_ms or iterations");
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

json trace_json(const MeasuredRun& run, const Prediction& p, const std::map<Key, Term>& pred,
                json& warnings) {
  std::map<Key, Term> meas = trace_terms(run.trace);
  // Iterations in the trace: the call count ratio of the most frequent collective.
  double iters = 1, best = 0;
  for (const auto& [k, m] : meas)
    if (pred.count(k) && pred.at(k).count > 0 && m.count > best) {
      best = m.count;
      iters = std::max(1.0, std::round(m.count / pred.at(k).count));
    }
  const json& s = run.trace["summary"];
  json t = {{"file", run.trace_file}, {"iterations", iters}};
  t["compute_ms"] = {{"predicted", p.timeline.compute_us / 1e3},
                     {"measured", num(s, "compute_us") / 1e3 / iters}};
  t["exposed_comm_ms"] = {{"predicted", p.timeline.exposed_total_us() / 1e3},
                          {"measured", num(s, "exposed_comm_us") / 1e3 / iters}};
  t["terms"] = terms_json(pred, meas, warnings, run.trace_file);
  return t;
}

std::string placement_text(const json& p) {
  auto n = [&](const char* k) { return p.contains(k) && !p[k].is_null() ? p[k].dump() : "?"; };
  std::string s = n("local_size") + " rank(s) per node";
  if (p.value("backend", json()) == "host") s += " on " + n("cpus") + " CPU(s)";
  return s + ", " + n("ranks_per_device") + " per device";
}

// A calibration taken under another placement is not silently applied: the collectives (and the
// interference) measured with R ranks per device, ranks that share cores or a GPU, do not carry
// over to runs with R' (the GEMM table does: it is per device, and the run's own ranks per device
// divide it; the memory-bound rates do not: the cores share the memory bandwidth). One warning per calibration input and placement, naming the runs.
void check_placement(const Machine& machine, const std::vector<MeasuredRun>& runs, json& warnings) {
  if (!machine.calibration.is_object() || !machine.calibration.contains("measured_under")) return;
  const json& under = machine.calibration["measured_under"];
  for (const char* input : {"collective", "overlap", "membw"}) {
    if (!under.contains(input)) continue;
    const json& cal = under[input];
    std::map<std::string, std::vector<std::string>> off;  // run placement -> files
    for (const MeasuredRun& run : runs) {
      const json p = placement_of(run.result.value("context", json::object()));
      if (p["ranks_per_device"] != cal.value("ranks_per_device", json(1)))
        off[placement_text(p)].push_back(run.file);
    }
    for (const auto& [where, files] : off)
      warnings.push_back(std::string("calibration: the ") + input + " results were measured with " +
                         placement_text(cal) + ", " + std::to_string(files.size()) +
                         " run(s) had " + where + " (e.g. " + files.front() +
                         "): their costs do not carry over; calibrate under the runs' placement");
  }
  // A host GEMM table is one core's rate only when each rank ran one BLAS thread, as gpt4d's do.
  const json gemm = under.value("gemm", json::object());
  const bool host_runs = std::any_of(runs.begin(), runs.end(), [](const MeasuredRun& r) {
    return r.result.value("context", json::object()).value("backend", "") == "host";
  });
  if (host_runs && gemm.value("backend", json()) == "host" && gemm.value("cpus", json(1)) != 1 &&
      gemm.value("blas_threads", json()) != "1")
    warnings.push_back("calibration: the GEMM table was measured with OPENBLAS_NUM_THREADS=" +
                       (gemm["blas_threads"].is_null() ? std::string("unset")
                                                       : gemm["blas_threads"].get<std::string>()) +
                       " on " + gemm["cpus"].dump() +
                       " CPUs, not one core's rate (host ranks run one BLAS thread each)");
}

// Repetitions: the results of one configuration (the same config block, backend, host, device
// and placement) are one row, measured as the median of their medians. Traced runs stay apart from
// untraced ones: tracing costs time of its own.
struct Repeated {
  std::vector<const MeasuredRun*> runs;  // in file order
  std::vector<double> ms;                // each run's median iteration
  const MeasuredRun* middle = nullptr;   // the run at the median (the lower one of an even count)
  double median_ms = 0;
};

std::string repetition_key(const MeasuredRun& r) {
  const json ctx = r.result.value("context", json::object());
  const json dev = ctx.value("device", json::object());
  return r.result["config"].dump() + '|' + ctx.value("backend", json("")).dump() + '|' +
         ctx.value("host", json("")).dump() + '|' +
         (dev.is_object() ? dev.value("name", json("")).dump() : std::string()) + '|' +
         placement_of(ctx).dump() + '|' + (r.trace.is_null() ? "untraced" : "traced");
}

std::vector<Repeated> group_repetitions(const std::vector<MeasuredRun>& runs) {
  std::vector<Repeated> out;
  std::map<std::string, std::size_t> index;
  for (const MeasuredRun& run : runs) {
    const auto [it, added] = index.emplace(repetition_key(run), out.size());
    if (added) out.emplace_back();
    out[it->second].runs.push_back(&run);
    out[it->second].ms.push_back(measured_iteration_ms(run.result, run.file));
  }
  for (Repeated& g : out) {
    std::vector<std::size_t> order(g.ms.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return g.ms[a] < g.ms[b]; });
    g.middle = g.runs[order[(order.size() - 1) / 2]];
    g.median_ms = stats::percentile(g.ms, 50);
  }
  return out;
}

// Spearman's correlation of the configurations' measurements with themselves: the median of the
// odd-numbered repetitions against that of the even-numbered ones, over the configurations that
// ran at least twice (null for fewer than two such). How far their ranking is reproducible at all.
json split_half_spearman(const std::vector<Repeated>& groups) {
  std::vector<double> odd, even;
  for (const Repeated& g : groups) {
    if (g.ms.size() < 2) continue;
    std::vector<double> a, b;
    for (std::size_t i = 0; i < g.ms.size(); ++i) (i % 2 == 0 ? a : b).push_back(g.ms[i]);
    odd.push_back(stats::percentile(a, 50));
    even.push_back(stats::percentile(b, 50));
  }
  const auto rho = spearman(odd, even);
  return rho ? json(*rho) : json(nullptr);
}

}  // namespace

Comparison compare(const std::vector<MeasuredRun>& runs, const Machine& machine, int k) {
  if (k < 1) throw UsageError("compare: --top-k must be >= 1");
  Comparison out;
  json configs = json::array(), warnings = json::array();
  std::vector<double> pred, meas;
  std::vector<std::string> labels;
  TextTable table({"config", "overlap", "predicted ms", "measured ms", "runs", "error %",
                   "exposed pred", "exposed meas"});
  // Per configuration and (dimension, collective kind), per iteration.
  TextTable term_table({"config", "overlap", "group", "kind", "calls", "pred ms", "meas ms",
                        "error %", "exposed pred", "exposed meas"});
  const std::vector<Repeated> groups = group_repetitions(runs);
  for (const Repeated& g : groups) {
    const MeasuredRun& run = *g.middle;
    auto [m, o] = config_of_result(run.result, run.file);
    Machine mc = machine;
    // The run's own sharing of its device: ranks per GPU, or on the host ranks per CPU core.
    const int rpd = ranks_per_device_of(run.result.value("context", json::object()));
    if (rpd > 1) mc.ranks_per_device = rpd;
    const Prediction p = predict(m, o, mc);
    const double measured = g.median_ms;
    const auto pterms = predicted_terms(p);
    const auto mterms = gpt4d_terms(run.result["summary"]);
    json c = summary_json(p);
    c["file"] = run.file;
    c["overlap"] = overlap_string(o);
    c["recompute"] = o.recompute;
    c["measured_ms"] = measured;
    c["repetitions"] = g.runs.size();
    c["measured_runs_ms"] = g.ms;
    c["files"] = json::array();
    for (const MeasuredRun* r : g.runs) c["files"].push_back(r->file);
    c["error_pct"] = error_pct(p.iteration_ms(), measured);
    c["terms"] = terms_json(pterms, mterms, warnings, run.file);
    double mexp = 0;
    for (const json& t : c["terms"]) mexp += t["measured_exposed_ms"].get<double>();
    c["measured_exposed_comm_ms"] = mexp;
    if (!run.trace.is_null()) c["trace"] = trace_json(run, p, pterms, warnings);
    for (const json& t : c["terms"])
      term_table.row({o.grid.str(), c["overlap"], t["group"], t["kind"],
                      fmt(t["predicted_count"].get<double>(), 0),
                      fmt(t["predicted_ms"].get<double>(), 3),
                      fmt(t["measured_ms"].get<double>(), 3),
                      t["error_pct"].is_null() ? "-" : fmt(t["error_pct"].get<double>(), 1),
                      fmt(t["predicted_exposed_ms"].get<double>(), 3),
                      fmt(t["measured_exposed_ms"].get<double>(), 3)});
    table.row({o.grid.str(), c["overlap"], fmt(p.iteration_ms(), 3), fmt(measured, 3),
               std::to_string(g.runs.size()), fmt(c["error_pct"].get<double>(), 1),
               fmt(p.timeline.exposed_total_us() / 1e3, 3), fmt(mexp, 3)});
    pred.push_back(p.iteration_ms());
    meas.push_back(measured);
    labels.push_back(o.grid.str() + " " + c["overlap"].get<std::string>());
    configs.push_back(c);
  }

  // Rank by prediction; is the measured fastest among the first k?
  std::vector<std::size_t> by_pred(pred.size());
  for (std::size_t i = 0; i < by_pred.size(); ++i) by_pred[i] = i;
  std::stable_sort(by_pred.begin(), by_pred.end(),
                   [&](auto a, auto b) { return pred[a] < pred[b]; });
  const std::size_t best =
      static_cast<std::size_t>(std::min_element(meas.begin(), meas.end()) - meas.begin());
  const std::size_t kk = std::min<std::size_t>(static_cast<std::size_t>(k), by_pred.size());
  const bool in_top = std::find(by_pred.begin(), by_pred.begin() + static_cast<std::ptrdiff_t>(kk),
                                best) != by_pred.begin() + static_cast<std::ptrdiff_t>(kk);
  json top = json::array();
  for (std::size_t i = 0; i < kk; ++i) top.push_back(labels[by_pred[i]]);
  double sum_abs = 0, max_abs = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const double e = std::abs(error_pct(pred[i], meas[i]));
    sum_abs += e;
    max_abs = std::max(max_abs, e);
  }
  const auto rho = spearman(pred, meas);

  json& d = out.doc;
  d["machine"] = machine.name;
  // Where the measurements were taken (from the first result's run context).
  const json& rc = runs.front().result.value("context", json::object());
  json dev = rc.value("device", json::object());
  d["measured_on"] = {{"host", rc.value("host", "")},
                      {"backend", rc.value("backend", "")},
                      {"device", dev.is_object() ? dev.value("name", "") : ""},
                      {"world_size", rc.value("world_size", 0)},
                      {"ranks_per_gpu", rc.value("ranks_per_gpu", 1)},
                      {"cpus", rc.value("cpus", json(nullptr))},
                      {"ranks_per_device", ranks_per_device_of(rc)}};
  if (machine.calibration.is_object() && machine.calibration.contains("measured_under"))
    d["calibrated_under"] = machine.calibration["measured_under"];
  check_placement(machine, runs, warnings);
  d["configs"] = configs;
  d["spearman"] = rho ? json(*rho) : json(nullptr);
  const json self_rho = split_half_spearman(groups);
  d["measured_split_half_spearman"] = self_rho;
  d["k"] = k;
  d["measured_best"] = labels[best];
  d["predicted_top_k"] = top;
  d["measured_best_in_top_k"] = in_top;
  d["mean_abs_error_pct"] = sum_abs / static_cast<double>(pred.size());
  d["max_abs_error_pct"] = max_abs;
  d["warnings"] = warnings;

  std::ostringstream os;
  os << table.str() << "Spearman rank correlation: " << (rho ? fmt(*rho, 3) : "n/a")
     << "; mean |error| " << fmt(sum_abs / static_cast<double>(pred.size()), 1) << " %, max "
     << fmt(max_abs, 1) << " %\n";
  if (!self_rho.is_null())
    os << "measured against itself (median of odd vs even repetitions): Spearman "
       << fmt(self_rho.get<double>(), 3) << '\n';
  os << "measured fastest: " << labels[best] << " - " << (in_top ? "in" : "NOT in")
     << " the predicted top " << k << '\n';
  os << "\nper dimension and collective kind (per iteration):\n" << term_table.str();
  for (const json& w : warnings) os << "warning: " << w.get<std::string>() << '\n';
  out.text = os.str();
  return out;
}

}  // namespace ovb::model
