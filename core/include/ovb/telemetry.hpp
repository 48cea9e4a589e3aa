// Device telemetry of a run ("gpu_telemetry" in every result's context): SM clock, power,
// temperature and clock-limit ("throttle") reasons, sampled through NVML in a background thread
// while the run goes on, summarised at the end. A run whose clocks were held down by power or
// heat is flagged, so its figures are not taken for the device's sustained speed.
// See docs/metrics.md ("Device telemetry") and results/SCHEMA.md.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ovb::telemetry {

// NVML's clock-event ("throttle") reason bits (nvmlClocksThrottleReasons in the NVML API
// reference); the values are NVML's, repeated here so the summary builds without nvml.h.
enum Reason : std::uint64_t {
  kGpuIdle = 0x1,
  kApplicationsClocksSetting = 0x2,
  kSwPowerCap = 0x4,
  kHwSlowdown = 0x8,
  kSyncBoost = 0x10,
  kSwThermalSlowdown = 0x20,
  kHwThermalSlowdown = 0x40,
  kHwPowerBrakeSlowdown = 0x80,
  kDisplayClockSetting = 0x100,
};

// The reasons that mean the clocks were held below what the work asked for: power cap, thermal
// and hardware slowdowns. Idle, application-clock and sync-boost settings are not throttling.
inline constexpr std::uint64_t kThrottleMask =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;

struct Sample {
  double t_s = 0;            // since sampling began
  double sm_clock_mhz = 0;   // NVML_CLOCK_SM
  double power_w = 0;        // board power
  double temperature_c = 0;  // GPU core
  std::uint64_t reasons = 0;
};

// Names of the set reason bits, in bit order ("sw_power_cap", "hw_thermal_slowdown", ...).
std::vector<std::string> reason_names(std::uint64_t reasons);

// {"available": true, "source", "interval_s", "samples", "sm_clock_mhz": {min, median, max},
//  "power_w": {...}, "temperature_c": {...}, "throttle_reasons": [names seen in any sample],
//  "throttled_samples": n, "throttled": n > 0}. Medians as in ovb/timing_stats.hpp. No samples:
// not_available("no telemetry sample taken").
nlohmann::json summarize(const std::vector<Sample>& samples, double interval_s);

// {"available": false, "reason": why}: what a result says where there is nothing to sample.
nlohmann::json not_available(const std::string& why);

// Samples one GPU (by PCI bus id, so CUDA_VISIBLE_DEVICES cannot mix devices up) every
// interval_s in a background thread from construction to destruction. NVML is loaded at run time
// (libnvidia-ml.so.1 comes with the driver, not the toolkit): where it or the device is missing,
// summary() says so instead of failing the run.
class Sampler {
 public:
  Sampler(std::string pci_bus_id, double interval_s = 0.1);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  nlohmann::json summary() const;

 private:
  struct Nvml;
  void loop();
  std::unique_ptr<Nvml> nvml_;
  double interval_s_;
  std::string problem_;  // why nothing is sampled ("" when sampling)
  mutable std::mutex mu_;
  std::vector<Sample> samples_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ovb::telemetry
