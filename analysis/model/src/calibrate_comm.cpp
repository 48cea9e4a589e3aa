// Calibration of the communication term from ovb-collective results (see calibrate.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/gbench.hpp"
#include "ovb/model/stats.hpp"
#include "ovb/run_config.hpp"

namespace ovb::model {

using nlohmann::json;

namespace {

// The grid of a run: given with the file, else in the entry's label, else in the context.
std::optional<GridShape> grid_of(const CollectiveFile& f, const BenchRow& r, const json& doc) {
  if (f.grid) return f.grid;
  if (const std::string g = r.tag("grid"); !g.empty()) return GridShape::parse(g);
  if (doc.contains("context") && doc["context"].contains("grid")) {
    const json& g = doc["context"]["grid"];
    if (g.is_string()) return GridShape::parse(g.get<std::string>());
    if (g.is_object()) return grid_from_json(g, f.path + ": 'context.grid.");
    throw UsageError(f.path + ": 'context.grid' must be GXxGYxGZxGD or an object, got " + g.dump());
  }
  return std::nullopt;
}

}  // namespace

std::vector<CollectivePoint> read_collective_points(const CollectiveFile& f) {
  const json doc = read_gbench(f.path);
  std::vector<CollectivePoint> out;
  for (const CollKind kind :
       {CollKind::all_reduce, CollKind::reduce_scatter, CollKind::all_gather}) {
    for (const BenchRow& r : benchmark_rows(doc, name_of(kind), f.path)) {
      const std::string group = r.tag("group").empty() ? "world" : r.tag("group");
      int p = static_cast<int>(r.number("ranks"));
      int ip = 1;
      if (group != "world") {
        const Dim d = parse_dim(group);
        const std::optional<GridShape> g = grid_of(f, r, doc);
        if (!g)
          throw UsageError(f.path + ": benchmark '" + r.name + "' runs over group " + group +
                           " but the file does not say the grid: pass it as FILE@GXxGYxGZxGD" +
                           " (the --gx/--gy/--gz/--gdata of the ovb-collective run)");
        const Grid grid(*g, g->world());
        ip = grid.stride(d);
        p = grid.size(d);
      }
      // busbw / algbw is the bus factor of the group actually measured.
      if (r.has("busbw") && r.has("algbw") && r.number("algbw") > 0 && p > 1) {
        const double ratio = r.number("busbw") / r.number("algbw");
        if (std::abs(ratio / metrics::bus_factor(kind, p) - 1) > 0.02)
          throw UsageError(
              f.path + ": benchmark '" + r.name + "': busbw/algbw = " + std::to_string(ratio) +
              " does not fit a group of " + std::to_string(p) + " ranks (wrong grid?)");
      }
      if (p < 2) continue;  // nothing is communicated
      const double t = r.has("time_max_us") ? r.number("time_max_us") : r.number("time_us");
      if (!(t > 0)) continue;
      out.push_back({kind, p, ip, r.number("bytes"), t});
    }
  }
  return out;
}

std::vector<SeriesFit> fit_collectives(const std::vector<CollectivePoint>& pts,
                                       int ranks_per_node) {
  std::map<std::tuple<int, int, int>, std::pair<std::vector<double>, std::vector<double>>> series;
  for (const CollectivePoint& pt : pts) {
    auto& s = series[{static_cast<int>(pt.kind), pt.p, pt.ip}];
    s.first.push_back(pt.bytes * metrics::bus_factor(pt.kind, pt.p));
    s.second.push_back(pt.time_us);
  }
  std::vector<SeriesFit> out;
  for (const auto& [key, xy] : series) {
    const auto [kind, p, ip] = key;
    // Relative least squares (weights 1/t^2): sizes span orders of magnitude, and the small
    // ones, which decide the latency, would otherwise count for nothing.
    std::vector<double> w;
    for (double t : xy.second) w.push_back(1.0 / (t * t));
    const LineFit lf = fit_line(xy.first, xy.second, w);
    if (!(lf.slope > 0)) continue;  // time does not grow with size: no bandwidth to report
    SeriesFit f;
    f.kind = static_cast<CollKind>(kind);
    f.p = p;
    f.ip = ip;
    f.points = static_cast<int>(xy.first.size());
    f.alpha_us = lf.intercept;
    f.bw_gbps = 1e-3 / lf.slope;  // bytes/us -> GB/s
    f.r2 = lf.r2;
    f.max_rel_err = lf.max_rel_err;
    const bool intra = static_cast<long long>(ip) * p <= ranks_per_node;
    f.placement = intra ? Placement::intra : Placement::inter;
    if (!intra) f.node_gbps = f.bw_gbps * std::min(ip, ranks_per_node);
    out.push_back(f);
  }
  return out;
}

}  // namespace ovb::model
