// The summary of device telemetry (min/median/max, throttle reasons, the throttled flag) on
// synthetic samples, and the sampler's behaviour where NVML or the device is missing.
#include <gtest/gtest.h>

#include <chrono>

#include "ovb/telemetry.hpp"

namespace t = ovb::telemetry;

namespace {
t::Sample sample(double clock, double power, double temp, std::uint64_t reasons) {
  t::Sample s;
  s.sm_clock_mhz = clock;
  s.power_w = power;
  s.temperature_c = temp;
  s.reasons = reasons;
  return s;
}
}  // namespace

TEST(Telemetry, SummaryOfAThrottledRun) {
  const std::vector<t::Sample> v{
      sample(1980, 700, 60, 0), sample(1755, 650.5, 62, t::kGpuIdle),
      sample(1980, 690, 65, t::kSwPowerCap),
      sample(1410, 400, 70, t::kHwThermalSlowdown | t::kSwThermalSlowdown)};
  const nlohmann::json j = t::summarize(v, 0.1);
  EXPECT_EQ(j["available"], true);
  EXPECT_EQ(j["samples"], 4);
  // Medians of four: the mean of the middle two. Clocks 1410 1755 1980 1980 -> 1867.5.
  EXPECT_DOUBLE_EQ(j["sm_clock_mhz"]["min"].get<double>(), 1410);
  EXPECT_DOUBLE_EQ(j["sm_clock_mhz"]["median"].get<double>(), 1867.5);
  EXPECT_DOUBLE_EQ(j["sm_clock_mhz"]["max"].get<double>(), 1980);
  EXPECT_DOUBLE_EQ(j["power_w"]["median"].get<double>(), 670.25);  // (650.5 + 690) / 2
  EXPECT_DOUBLE_EQ(j["power_w"]["min"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["median"].get<double>(), 63.5);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["max"].get<double>(), 70);
  EXPECT_EQ(j["throttle_reasons"], (nlohmann::json{"gpu_idle", "sw_power_cap",
                                                   "sw_thermal_slowdown", "hw_thermal_slowdown"}));
  EXPECT_EQ(j["throttled_samples"], 2);
  EXPECT_EQ(j["throttled"], true);
}

TEST(Telemetry, IdleApplicationClocksAndSyncBoostAreNotThrottling) {
  const std::vector<t::Sample> v{sample(1980, 700, 60, t::kGpuIdle | t::kApplicationsClocksSetting),
                                 sample(1980, 700, 60, t::kSyncBoost | t::kDisplayClockSetting)};
  const nlohmann::json j = t::summarize(v, 0.1);
  EXPECT_EQ(j["throttled"], false);
  EXPECT_EQ(j["throttled_samples"], 0);
  EXPECT_EQ(j["throttle_reasons"].size(), 4u);
}

TEST(Telemetry, UnknownReasonBitsAreReportedAndNoSamplesIsNotAvailable) {
  EXPECT_EQ(t::reason_names(0x10000 | t::kHwSlowdown),
            (std::vector<std::string>{"hw_slowdown", "other"}));
  const nlohmann::json none = t::summarize({}, 0.1);
  EXPECT_EQ(none["available"], false);
  EXPECT_EQ(none["reason"], "no telemetry sample taken");
}

TEST(Telemetry, SamplerWithoutTheDeviceSaysWhyAndStopsPromptly) {
  // No GPU with this bus id anywhere (and no NVML on CPU machines): the run goes on, the summary
  // says why nothing was sampled.
  const auto t0 = std::chrono::steady_clock::now();
  {
    t::Sampler s("0000:FF:1F.7", 0.05);
    const nlohmann::json j = s.summary();
    EXPECT_EQ(j["available"], false);
    EXPECT_FALSE(j["reason"].get<std::string>().empty());
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}
