// Calibration of the memory-bound kernels from ovb-membw results (see calibrate.hpp): the device
// GB/s of each class, its efficiency against the machine's memory bandwidth, and (when asked) that
// bandwidth itself from the copy class.
#include <algorithm>
#include <map>

#include "ovb/error.hpp"
#include "ovb/model/calibrate.hpp"
#include "ovb/model/gbench.hpp"

namespace ovb::model {

using nlohmann::json;

std::vector<MemClassRate> read_mem_rates(const std::vector<std::string>& files,
                                         const std::string& precision) {
  std::vector<MemClassRate> all;
  for (const std::string& path : files) {
    const json doc = read_gbench(path);
    const json ctx = doc.value("context", json::object());
    const int sharing = ctx.value("world_size", 1) > 1 ? ranks_per_device_of(ctx) : 1;
    for (const BenchRow& r : benchmark_rows(doc, "membw/", path)) {
      const std::string cls = r.tag("class");
      const auto c = find_mem_class(cls);
      if (!c) throw UsageError(path + ": " + r.name + ": label has no known class ('" + cls + "')");
      const double gbps = r.number("gbps");
      if (!(gbps > 0)) continue;
      all.push_back({*c, r.tag("dtype"), r.number("size"), gbps, sharing, gbps * sharing, 0, path});
    }
  }
  // One rate per class: the machine's precision when measured, then the largest size (beyond the
  // caches when the sweep reaches there), the last file's when several give it.
  const bool has_precision = std::any_of(
      all.begin(), all.end(), [&](const MemClassRate& m) { return m.dtype == precision; });
  std::map<MemClass, MemClassRate> best;
  for (const MemClassRate& m : all) {
    if (has_precision && m.dtype != precision) continue;
    auto it = best.find(m.c);
    if (it == best.end() || m.size >= it->second.size) best[m.c] = m;
  }
  std::vector<MemClassRate> out;
  for (const auto& [c, m] : best) out.push_back(m);
  return out;
}

json calibrate_memory(Machine& mc, const std::vector<std::string>& files,
                      bool bandwidth_from_copy) {
  std::vector<MemClassRate> rates = read_mem_rates(files, mc.precision);
  if (rates.empty())
    throw UsageError("calibrate: the ovb-membw results hold no usable measurement");
  const std::string from = "ovb-membw " + files.front() + (files.size() > 1 ? " (and more)" : "");
  if (!mc.sources.is_object()) mc.sources = json::object();
  if (bandwidth_from_copy) {
    const auto copy = std::find_if(rates.begin(), rates.end(),
                                   [](const MemClassRate& m) { return m.c == MemClass::copy; });
    if (copy == rates.end())
      throw UsageError(
          "calibrate: --mem-bandwidth-from-copy needs the copy class in the ovb-membw "
          "results");
    mc.memory_bandwidth_gbps = copy->gbps_device;
    mc.sources["gpu.memory_bandwidth_gbps"] = from + ": the copy class (read + write) at " +
                                              std::to_string(copy->size) + " bytes, " +
                                              std::to_string(copy->ranks_per_device) +
                                              " rank(s) per device (calibrate --mem-bandwidth-"
                                              "from-copy)";
  }
  std::vector<double> effs;
  json rows = json::array();
  mc.memory_efficiency_by_class.clear();
  for (MemClassRate& m : rates) {
    m.efficiency = m.gbps_device / mc.memory_bandwidth_gbps;
    mc.memory_efficiency_by_class[m.c] = m.efficiency;
    if (m.c != MemClass::copy || rates.size() == 1) effs.push_back(m.efficiency);
    rows.push_back({{"class", name_of(m.c)},
                    {"dtype", m.dtype},
                    {"size", m.size},
                    {"gbps_per_rank", m.gbps_rank},
                    {"ranks_per_device", m.ranks_per_device},
                    {"gbps_device", m.gbps_device},
                    {"efficiency", m.efficiency},
                    {"file", m.file}});
  }
  std::sort(effs.begin(), effs.end());
  mc.memory_efficiency = effs[effs.size() / 2];
  mc.sources["gpu.memory_efficiency_by_class"] =
      from +
      ": each class's achieved GB/s at its largest size, times the ranks per device, over "
      "gpu.memory_bandwidth_gbps (calibrate --mem; the calibration's \"memory\" report)";
  mc.sources["gpu.memory_efficiency"] =
      from +
      ": the median of the measured classes' efficiencies (copy left out), for the "
      "memory-bound kernels no class covers";
  return {{"bandwidth_gbps", mc.memory_bandwidth_gbps},
          {"bandwidth_from_copy", bandwidth_from_copy},
          {"default_efficiency", mc.memory_efficiency},
          {"classes", rows}};
}

}  // namespace ovb::model
