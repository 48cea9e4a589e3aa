// Memory-bound kernel calibration (calibrate --mem): synthetic ovb-membw files with known rates
// give known per-class efficiencies, bandwidth and default (ranks that shared a core counted); the
// machine file's memory_efficiency_by_class round-trips, falls back to memory_efficiency for a
// class it lacks, and bad entries are named.
#include <gtest/gtest.h>

#include <string>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/calibrate.hpp"

using namespace ovb;
using namespace ovb::model;
using nlohmann::json;

namespace {

std::string tmp(const std::string& name) {
  return ::testing::TempDir() + "/ovb_model_calmem_" + name;
}

json row(const std::string& cls, const std::string& dtype, double size, double gbps) {
  const std::string name = "membw/" + cls + "/" + dtype + "/" + std::to_string(long(size));
  return {{"name", name},
          {"run_name", name},
          {"run_type", "iteration"},
          {"label", "class=" + cls + " dtype=" + dtype + " row=4096"},
          {"size", size},
          {"gbps", gbps}};
}

// 4 ranks on 2 cores (2 per core): each rank saw half of a core's rate.
std::string membw_file() {
  json b = json::array({row("copy", "fp32", 1 << 20, 10), row("copy", "fp32", 1 << 26, 4),
                        row("layernorm", "fp32", 1 << 26, 2), row("softmax", "fp32", 1 << 26, 1),
                        row("softmax", "bf16", 1 << 26, 3)});
  b.push_back({{"name", "membw/adamw/fp32/64"}, {"error_occurred", true}});
  const json doc = {
      {"context", {{"backend", "host"}, {"world_size", 4}, {"local_size", 4}, {"cpus", 2}}},
      {"benchmarks", b}};
  write_json(tmp("membw.json"), doc);
  return tmp("membw.json");
}

CalibrateOptions mem_options() {
  CalibrateOptions o;
  o.base = test::synthetic_machine();
  o.base.precision = "fp32";
  o.mem = {membw_file()};
  return o;
}

}  // namespace

TEST(CalibrateMem, EfficienciesAgainstTheCopyBandwidth) {
  CalibrateOptions o = mem_options();
  o.mem_bandwidth_from_copy = true;
  const Calibration cal = calibrate(o);
  const Machine& m = cal.machine;
  // copy at its largest size, 4 GB/s per rank x 2 ranks per core.
  EXPECT_DOUBLE_EQ(m.memory_bandwidth_gbps, 8);
  ASSERT_EQ(m.memory_efficiency_by_class.size(), 3u);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::copy), 1.0);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::layernorm), 0.5);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::softmax), 0.25);  // fp32, the precision
  // Default: the median of layernorm and softmax (the upper one of two), copy left out.
  EXPECT_DOUBLE_EQ(m.memory_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::adamw), 0.5);  // not measured (skipped)
  EXPECT_EQ(cal.report["measured_under"]["membw"]["ranks_per_device"], 2);
  EXPECT_EQ(cal.report["memory"]["classes"].size(), 3u);
  for (const char* key :
       {"gpu.memory_bandwidth_gbps", "gpu.memory_efficiency_by_class", "gpu.memory_efficiency"})
    EXPECT_NE(m.sources.value(key, "").find("ovb-membw"), std::string::npos) << key;
}

TEST(CalibrateMem, EfficienciesAgainstTheBaseBandwidthAndThePrecision) {
  CalibrateOptions o = mem_options();
  o.base.precision = "bf16";  // only softmax has bf16 rows: the other classes' fp32 are not used
  const Calibration cal = calibrate(o);
  EXPECT_DOUBLE_EQ(cal.machine.memory_bandwidth_gbps, 1000);  // the base's
  ASSERT_EQ(cal.machine.memory_efficiency_by_class.size(), 1u);
  EXPECT_DOUBLE_EQ(cal.machine.memory_efficiency_for(MemClass::softmax), 6.0 / 1000);
}

TEST(CalibrateMem, BadInputsAreNamed) {
  CalibrateOptions o = mem_options();
  o.mem_bandwidth_from_copy = true;
  json doc = read_json(o.mem[0]);
  doc["benchmarks"] = json::array({row("softmax", "fp32", 1 << 20, 1)});
  write_json(tmp("nocopy.json"), doc);
  o.mem = {tmp("nocopy.json")};
  EXPECT_THROW(calibrate(o), UsageError);  // no copy class to take the bandwidth from
  doc["benchmarks"] = json::array({row("gelu", "fp32", 1 << 20, 1)});
  write_json(tmp("badclass.json"), doc);
  o.mem = {tmp("badclass.json")};
  EXPECT_THROW(calibrate(o), UsageError);
  CalibrateOptions flag_only;
  flag_only.base = test::synthetic_machine();
  flag_only.gemm = {};
  flag_only.mem_bandwidth_from_copy = true;
  EXPECT_THROW(calibrate(flag_only), UsageError);
}

TEST(MachineMem, PerClassEfficienciesRoundTripAndBadEntriesAreNamed) {
  json j = test::synthetic_machine_json();
  j["gpu"]["memory_efficiency"] = 0.7;
  j["gpu"]["memory_efficiency_by_class"] = {{"layernorm", 0.4}, {"adamw", 0.9}};
  const Machine m = machine_from_json(j, "m.json");
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::layernorm), 0.4);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::adamw), 0.9);
  EXPECT_DOUBLE_EQ(m.memory_efficiency_for(MemClass::softmax), 0.7);
  const Machine back = machine_from_json(machine_to_json(m), "back.json");
  EXPECT_EQ(back.memory_efficiency_by_class, m.memory_efficiency_by_class);
  EXPECT_FALSE(machine_to_json(test::synthetic_machine())["gpu"].contains(
      "memory_efficiency_by_class"));  // absent stays absent

  j["gpu"]["memory_efficiency_by_class"] = {{"layer_norm", 0.4}};
  try {
    machine_from_json(j, "m.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("machine file m.json: 'gpu.memory_efficiency_by_class."
                                          "layer_norm' is not a memory-bound kernel class",
                                          0),
              0u)
        << e.what();
  }
  j["gpu"]["memory_efficiency_by_class"] = {{"softmax", 0}};
  EXPECT_THROW(machine_from_json(j, "m.json"), UsageError);
  j["gpu"]["memory_efficiency_by_class"] = json::array();
  EXPECT_THROW(machine_from_json(j, "m.json"), UsageError);
}
