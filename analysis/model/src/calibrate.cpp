// Calibration: a machine description from ovb-collective, ovb-gemm and ovb-overlap results
// (see calibrate.hpp).
#include "ovb/model/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "ovb/context.hpp"
#include "ovb/error.hpp"
#include "ovb/model/compute_cost.hpp"
#include "ovb/model/gbench.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

int context_int(const json& doc, const char* key, int dflt) {
  if (!doc.contains("context") || !doc["context"].contains(key)) return dflt;
  const json& v = doc["context"][key];
  return v.is_number_integer() ? v.get<int>() : dflt;
}

const json& context_of(const json& doc) {
  static const json none = json::object();
  return doc.contains("context") && doc["context"].is_object() ? doc["context"] : none;
}

// GEMM table: device TFLOP/s per shape. Ranks that shared the device each saw a share of it.
// `inputs` collects the data each row was timed on (ovb-gemm --inputs; "inputs=random" in the
// label, exact otherwise): a GEMM's rate under a power cap depends on it.
std::vector<GemmPoint> read_gemm(const std::string& path, std::set<std::string>& inputs) {
  const json doc = read_gbench(path);
  const int sharing =
      context_int(doc, "world_size", 1) > 1 ? ranks_per_device_of(context_of(doc)) : 1;
  std::vector<GemmPoint> out;
  for (const BenchRow& r : benchmark_rows(doc, "gemm", path)) {
    GemmPoint g{static_cast<std::int64_t>(r.number("m")), static_cast<std::int64_t>(r.number("n")),
                static_cast<std::int64_t>(r.number("k")), r.number("tflops") * sharing,
                r.tag("dtype")};
    if (g.m > 0 && g.n > 0 && g.k > 0 && g.tflops > 0) {
      out.push_back(g);
      inputs.insert(r.entry->value("label", "").find("inputs=random") != std::string::npos
                        ? "random"
                        : "exact");
    }
  }
  return out;
}

// Leave-one-out relative error of the table's interpolation: how well the table predicts a
// shape it has not measured.
json gemm_quality(const Machine& mc) {
  double max_err = 0, sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < mc.gemm_table.size() && mc.gemm_table.size() > 1; ++i) {
    Machine rest = mc;
    rest.gemm_max_efficiency = 0;  // the interpolation itself, not the ceiling on it
    rest.gemm_training_factor = 1;  // nor training's factor: table against table
    rest.gemm_table.erase(rest.gemm_table.begin() + static_cast<std::ptrdiff_t>(i));
    const GemmPoint& g = mc.gemm_table[i];
    if (std::none_of(rest.gemm_table.begin(), rest.gemm_table.end(),
                     [&](const GemmPoint& o) { return o.dtype == g.dtype; }))
      continue;
    const double pred = gemm_rate(rest, g.m, g.n, g.k, g.dtype).tflops;
    const double err = std::abs(pred - g.tflops) / g.tflops;
    max_err = std::max(max_err, err);
    sum += err;
    ++n;
  }
  json j = {{"points", mc.gemm_table.size()}};
  j["loo_max_rel_err"] = n ? json(max_err) : json(nullptr);
  j["loo_mean_rel_err"] = n ? json(sum / n) : json(nullptr);
  // Measured rates the machine's ceiling (gpu.gemm_max_efficiency) will cap when they are used,
  // at training's rate (gpu.gemm_training_factor, kept from the base like the ceiling).
  if (mc.gemm_training_factor != 1) j["training_factor"] = mc.gemm_training_factor;
  if (const std::optional<double> ceiling = mc.gemm_ceiling_tflops()) {
    j["above_ceiling"] =
        std::count_if(mc.gemm_table.begin(), mc.gemm_table.end(), [&](const GemmPoint& g) {
          return g.tflops * mc.gemm_training_factor > *ceiling;
        });
    j["ceiling_tflops"] = *ceiling;
  }
  return j;
}

struct Spread {
  int n = 0;
  double sum = 0, lo = 0, hi = 0;
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = n ? std::min(lo, v) : v;
    hi = n ? std::max(hi, v) : v;
    sum += v;
    ++n;
  }
  double mean() const { return n ? sum / n : 0; }
  json to_json() const { return {{"mean", mean()}, {"min", lo}, {"max", hi}}; }
};

json series_json(const SeriesFit& f) {
  json j = {{"kind", name_of(f.kind)},
            {"p", f.p},
            {"ip", f.ip},
            {"placement", name_of(f.placement)},
            {"points", f.points},
            {"alpha_us", f.alpha_us},
            {"bw_gbps", f.bw_gbps},
            {"max_rel_err", f.max_rel_err}};
  j["r2"] = f.r2 ? json(*f.r2) : json(nullptr);
  if (f.placement == Placement::inter) j["node_gbps"] = f.node_gbps;
  return j;
}

void apply_comm(Machine& mc, const std::vector<SeriesFit>& fits) {
  std::map<int, CommParams> by_kind;
  for (const SeriesFit& f : fits) {
    CommParams& c = by_kind[static_cast<int>(f.kind)];
    if (f.placement == Placement::intra)
      c.intra.push_back({f.p, f.ip, f.bw_gbps, f.alpha_us});
    else
      c.inter.push_back({f.p, f.ip, f.node_gbps, f.alpha_us});
  }
  std::vector<double> per_gpu;
  for (const SeriesFit& f : fits) per_gpu.push_back(f.alpha_us / f.p);
  for (auto& [k, c] : by_kind) mc.comm_kind[k] = c;
  // Defaults for kinds and placements that were not measured: the all-reduce's (else the first
  // measured kind's) tables, and the median latency per GPU.
  for (int k : {0, 1, 2}) {
    auto it = by_kind.find(k);
    if (it == by_kind.end()) continue;
    if (!it->second.intra.empty()) mc.comm_default.intra = it->second.intra;
    if (!it->second.inter.empty()) mc.comm_default.inter = it->second.inter;
    break;
  }
  if (!per_gpu.empty()) {
    std::sort(per_gpu.begin(), per_gpu.end());
    mc.comm_default.alpha_us_per_gpu = per_gpu[per_gpu.size() / 2];
  }
}

}  // namespace

int ranks_per_device_of(const json& context) {
  auto whole = [&](const char* key, int dflt) {
    return context.contains(key) && context[key].is_number_integer() ? context[key].get<int>()
                                                                     : dflt;
  };
  if (context.value("backend", "") == "host") {
    const int local = whole("local_size", 1), cpus = whole("cpus", 0);
    return cpus > 0 && local > cpus ? (local + cpus - 1) / cpus : 1;
  }
  return std::max(1, whole("ranks_per_gpu", 1));
}

json placement_of(const json& context) {
  json p = {{"ranks_per_device", ranks_per_device_of(context)}};
  for (const char* k : {"backend", "host", "world_size", "local_size", "cpus"})
    p[k] = context.contains(k) ? context[k] : json(nullptr);
  const json env = context.value("environment", json::object());
  p["blas_threads"] = env.is_object() && env.contains("OPENBLAS_NUM_THREADS")
                          ? env["OPENBLAS_NUM_THREADS"]
                          : json(nullptr);
  return p;
}

Calibration calibrate(const CalibrateOptions& opt) {
  if (opt.collective.empty() && opt.gemm.empty() && opt.overlap.empty() && opt.mem.empty())
    throw UsageError(
        "calibrate needs at least one --collective, --gemm, --overlap or --mem result file");
  Calibration cal;
  Machine& mc = cal.machine;
  mc = opt.base;
  mc.name = opt.name.empty() ? opt.base.name + "-calibrated" : opt.name;
  mc.description =
      "Calibrated by ovb-model calibrate from microbenchmark results; base: " + opt.base.name +
      " (" + opt.base.origin + ").";
  mc.calibration = nullptr;
  json inputs = json::array(), under = json::object();

  // Node shape from the collective runs' context.
  if (!opt.collective.empty()) {
    const json doc = read_gbench(opt.collective.front().path);
    const int rpg = ranks_per_device_of(context_of(doc));
    const int local = context_int(doc, "local_size", 0);
    under["collective"] = placement_of(context_of(doc));
    mc.ranks_per_device = opt.ranks_per_device.value_or(rpg);
    if (opt.gpus_per_node)
      mc.gpus_per_node = *opt.gpus_per_node;
    else if (local > 0)
      mc.gpus_per_node = std::max(1, local / mc.ranks_per_device);
  } else {
    if (opt.ranks_per_device) mc.ranks_per_device = *opt.ranks_per_device;
    if (opt.gpus_per_node) mc.gpus_per_node = *opt.gpus_per_node;
  }

  std::vector<CollectivePoint> pts;
  for (const CollectiveFile& f : opt.collective) {
    const auto p = read_collective_points(f);
    pts.insert(pts.end(), p.begin(), p.end());
    inputs.push_back(f.path);
  }
  cal.series = fit_collectives(pts, mc.ranks_per_node());
  if (!opt.collective.empty() && cal.series.empty())
    throw UsageError(
        "calibrate: the collective results hold no usable measurement (groups of "
        "2 ranks or more, times growing with the size)");
  apply_comm(mc, cal.series);

  if (!opt.gemm.empty()) mc.gemm_table.clear();
  std::map<std::string, int> dtypes;
  std::set<std::string> gemm_inputs;
  if (!opt.gemm.empty()) under["gemm"] = placement_of(context_of(read_gbench(opt.gemm.front())));
  for (const std::string& f : opt.gemm) {
    for (const GemmPoint& g : read_gemm(f, gemm_inputs)) {
      mc.gemm_table.push_back(g);
      ++dtypes[g.dtype];
    }
    inputs.push_back(f);
  }
  if (!opt.gemm.empty() && mc.gemm_table.empty())
    throw UsageError("calibrate: the GEMM results hold no usable measurement");
  if (!dtypes.empty()) {
    const auto most =
        std::max_element(dtypes.begin(), dtypes.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (!most->first.empty()) mc.precision = most->first;
  }

  Spread comp, comm;
  if (!opt.overlap.empty())
    under["overlap"] = placement_of(context_of(read_gbench(opt.overlap.front())));
  for (const std::string& f : opt.overlap) {
    const json doc = read_gbench(f);
    for (const BenchRow& r : benchmark_rows(doc, "overlap", f)) {
      if (overlap_scenario(r) != opt.overlap_scenario) continue;
      if (!opt.overlap_filter.empty() &&
          r.entry->value("label", "").find(opt.overlap_filter) == std::string::npos)
        continue;
      comp.add(r.number("compute_slowdown"));
      comm.add(r.number("comm_slowdown"));
    }
    inputs.push_back(f);
  }
  if (!opt.overlap.empty()) {
    if (comp.n == 0)
      throw UsageError(
          "calibrate: no ovb-overlap measurement of scenario '" + opt.overlap_scenario + "'" +
          (opt.overlap_filter.empty() ? std::string()
                                      : " with '" + opt.overlap_filter + "' in its label"));
    mc.compute_slowdown = comp.mean();
    mc.comm_slowdown = comm.mean();
  }
  const json blocking_wait = calibrate_blocking_wait(mc, opt.overlap);

  json memory;
  if (!opt.mem.empty()) {
    under["membw"] = placement_of(context_of(read_gbench(opt.mem.front())));
    memory = calibrate_memory(mc, opt.mem, opt.mem_bandwidth_from_copy);
    for (const std::string& f : opt.mem) inputs.push_back(f);
  } else if (opt.mem_bandwidth_from_copy) {
    throw UsageError("calibrate: --mem-bandwidth-from-copy needs --mem results");
  }

  json& rep = cal.report;
  rep["date"] = utc_now_iso8601();
  rep["inputs"] = inputs;
  rep["measured_under"] = under;
  rep["base"] = opt.base.name;
  rep["collectives"] = json::array();
  for (const SeriesFit& f : cal.series) rep["collectives"].push_back(series_json(f));
  rep["gemm"] = gemm_quality(mc);
  if (!gemm_inputs.empty()) rep["gemm"]["inputs"] = gemm_inputs;  // ["exact"], ["random"] or both
  rep["interference"] = {{"rows", comp.n},
                         {"scenario", opt.overlap_scenario},
                         {"filter", opt.overlap_filter},
                         {"compute_slowdown", comp.to_json()},
                         {"comm_slowdown", comm.to_json()}};
  if (!memory.is_null()) rep["memory"] = memory;
  if (!blocking_wait.is_null()) rep["blocking_wait"] = blocking_wait;
  mc.calibration = rep;
  return cal;
}

}  // namespace ovb::model
