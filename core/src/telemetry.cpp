// Summary of device telemetry samples (see telemetry.hpp).
#include "ovb/telemetry.hpp"

#include <algorithm>

#include "ovb/timing_stats.hpp"

namespace ovb::telemetry {

std::vector<std::string> reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {kGpuIdle, "gpu_idle"},
      {kApplicationsClocksSetting, "applications_clocks_setting"},
      {kSwPowerCap, "sw_power_cap"},
      {kHwSlowdown, "hw_slowdown"},
      {kSyncBoost, "sync_boost"},
      {kSwThermalSlowdown, "sw_thermal_slowdown"},
      {kHwThermalSlowdown, "hw_thermal_slowdown"},
      {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kDisplayClockSetting, "display_clock_setting"}};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) out.emplace_back(name);
  }
  // A bit a newer driver defines is reported rather than dropped.
  if (reasons & ~known) out.push_back("other");
  return out;
}

nlohmann::json not_available(const std::string& why) {
  return {{"available", false}, {"reason", why}};
}

namespace {
nlohmann::json min_median_max(const std::vector<Sample>& s, double Sample::*field) {
  std::vector<double> v;
  for (const Sample& x : s) v.push_back(x.*field);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {{"min", *lo}, {"median", stats::percentile(v, 50)}, {"max", *hi}};
}
}  // namespace

nlohmann::json summarize(const std::vector<Sample>& samples, double interval_s) {
  if (samples.empty()) return not_available("no telemetry sample taken");
  std::uint64_t seen = 0;
  int throttled = 0;
  for (const Sample& s : samples) {
    seen |= s.reasons;
    if (s.reasons & kThrottleMask) ++throttled;
  }
  return {{"available", true},
          {"source", "nvml"},
          {"interval_s", interval_s},
          {"samples", samples.size()},
          {"sm_clock_mhz", min_median_max(samples, &Sample::sm_clock_mhz)},
          {"power_w", min_median_max(samples, &Sample::power_w)},
          {"temperature_c", min_median_max(samples, &Sample::temperature_c)},
          {"throttle_reasons", reason_names(seen)},
          {"throttled_samples", throttled},
          {"throttled", throttled > 0}};
}

}  // namespace ovb::telemetry
