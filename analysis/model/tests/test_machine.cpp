// Machine files: presets load, every required field is named when missing, bad values and
// malformed JSON give one clear message, and a machine survives a JSON round trip.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/machine.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    machine_from_json(j, "m.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Machine, PresetsLoadWithTheirPeaks) {
  const std::vector<std::string> names = preset_machine_names();
  for (const char* n :
       {"perlmutter-a100", "frontier-mi250x", "generic-h100-8nic", "generic-h100-4nic",
        "generic-h200-8nic", "host-cpu"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const std::string& n : names) {
    const Machine m = load_machine(n);
    EXPECT_GT(m.peak(), 0) << n;
    EXPECT_FALSE(m.sources.is_null()) << n << " says where its numbers come from";
  }
  EXPECT_DOUBLE_EQ(load_machine("perlmutter-a100").peak(), 312);
  EXPECT_DOUBLE_EQ(load_machine("frontier-mi250x").peak(), 191.5);
  EXPECT_DOUBLE_EQ(load_machine("generic-h100-8nic").peak(), 989);
  EXPECT_DOUBLE_EQ(*load_machine("generic-h100-8nic").comm_default.inter_node_gbps, 8 * 47);
  EXPECT_DOUBLE_EQ(*load_machine("generic-h100-4nic").comm_default.inter_node_gbps, 4 * 47);
  // The H200: the H100's GPU with 141 GB of HBM3e at 4.8 TB/s (datasheet), the same node.
  const Machine h200 = load_machine("generic-h200-8nic");
  EXPECT_DOUBLE_EQ(h200.peak(), 989);
  EXPECT_DOUBLE_EQ(h200.memory_bandwidth_gbps, 4800);
  EXPECT_DOUBLE_EQ(h200.memory_bytes, 141.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*h200.comm_default.inter_node_gbps, 8 * 47);
}

TEST(Machine, GpuPresetsHaveNcclLatencyAndASourcePerNumber) {
  for (const char* n : {"perlmutter-a100", "perlmutter-a100-80gb", "dgx-a100-80gb", "dgx-h100",
                        "alps-gh200", "frontier-mi250x", "generic-h100-8nic", "generic-h100-4nic",
                        "generic-h200-8nic"}) {
    const Machine m = load_machine(n);
    ASSERT_TRUE(m.comm_default.latency.has_value()) << n << ": no NCCL latency model";
    EXPECT_FALSE(m.comm_default.alpha_us_per_gpu.has_value()) << n << ": linear latency left";
    EXPECT_TRUE(m.comm_default.latency->tree.has_value()) << n;
    for (const char* key : {"gpus_per_node", "gpu.memory_bytes", "gpu.memory_bandwidth_gbps",
                            "gpu.gemm_efficiency", "comm.default.intra",
                            "comm.default.inter_node_gbps", "comm.default.latency"})
      EXPECT_TRUE(m.sources.contains(key)) << n << " has no source for " << key;
  }
  // The DGX H100 and Alps GEMM efficiencies come from the suite's H100 measurements (a table).
  EXPECT_GE(load_machine("dgx-h100").gemm_table.size(), 30u);
  EXPECT_GE(load_machine("alps-gh200").gemm_table.size(), 30u);
  EXPECT_EQ(load_machine("dgx-a100-80gb").gpus_per_node, 8);
  EXPECT_EQ(load_machine("alps-gh200").gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(load_machine("perlmutter-a100-80gb").memory_bytes, 80.0 * (1 << 30));
}

namespace {

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

}  // namespace

// Every efficiency a preset feeds the model says where it comes from: a public measurement (a
// URL or an arXiv paper), this suite's results, or an explicit estimate/placeholder. The GPU
// presets' GEMM efficiency must be measured, not guessed.
TEST(Machine, EfficiencyInputsHaveASource) {
  for (const std::string& n : preset_machine_names()) {
    const Machine m = load_machine(n);
    std::vector<std::string> keys = {"gpu.gemm_efficiency", "gpu.attention_efficiency",
                                     "gpu.memory_efficiency"};
    if (!m.gemm_table.empty()) keys.push_back("gemm_table");
    if (m.gemm_max_efficiency > 0) keys.push_back("gpu.gemm_max_efficiency");
    if (m.gemm_training_factor != 1) keys.push_back("gpu.gemm_training_factor");
    if (m.fused_epilogues) keys.push_back("gpu.fused_epilogues");
    if (m.unfused_attention_efficiency > 0) keys.push_back("gpu.unfused_attention_efficiency");
    for (const std::string& key : keys) {
      ASSERT_TRUE(m.sources.contains(key) && m.sources[key].is_string()) << n << ": " << key;
      const std::string src = m.sources[key].get<std::string>();
      const bool cited = has(src, "github.com") || has(src, "arXiv") || has(src, "results/");
      const bool marked = has(src, "Estimate") || has(src, "estimate") || has(src, "Placeholder");
      EXPECT_TRUE(cited || marked) << n << ": the source of " << key
                                   << " neither cites a measurement nor says it is an estimate: "
                                   << src;
    }
    if (m.gpu_name == "host CPU") continue;
    const std::string gemm = m.sources["gpu.gemm_efficiency"].get<std::string>();
    EXPECT_TRUE(has(gemm, "github.com") || has(gemm, "results/")) << n << ": " << gemm;
    EXPECT_NE(gemm.rfind("Estimate", 0), 0u) << n << ": GEMM efficiency still a guess";
    if (m.gemm_max_efficiency > 0) {
      // The ceiling is a measurement on random inputs, published: the value its source quotes.
      const std::string ceiling = m.sources["gpu.gemm_max_efficiency"].get<std::string>();
      EXPECT_TRUE(has(ceiling, "github.com") && has(ceiling, "randn")) << n << ": " << ceiling;
      char quoted[32];
      std::snprintf(quoted, sizeof quoted, "%.1f of", m.gemm_max_efficiency * m.peak());
      EXPECT_TRUE(has(ceiling, quoted)) << n << ": " << quoted << " not in " << ceiling;
    }
  }
  // A training factor is this suite's measurement of its own trainer, derived by a committed
  // script whose output quotes the value (results/model/h100-gemm-training-rate.txt).
  for (const std::string& n : preset_machine_names()) {
    const Machine m = load_machine(n);
    if (m.gemm_training_factor == 1) continue;
    const std::string src = m.sources["gpu.gemm_training_factor"].get<std::string>();
    char quoted[64];
    std::snprintf(quoted, sizeof quoted, "gpu.gemm_training_factor = %.3f", m.gemm_training_factor);
    EXPECT_TRUE(has(src, "results/model/h100-gemm-training-rate.py") && has(src, quoted))
        << n << ": " << src;
  }
  // One device, one number: the H100 presets without a table take the H100 table's median at
  // its training factor, as dgx-h100's shapes off its table do.
  const Machine h100 = load_machine("dgx-h100");
  for (const char* n : {"generic-h100-8nic", "generic-h100-4nic", "generic-h200-8nic"}) {
    const Machine m = load_machine(n);
    EXPECT_DOUBLE_EQ(m.gemm_efficiency, h100.gemm_efficiency) << n;
    EXPECT_DOUBLE_EQ(m.gemm_training_factor, h100.gemm_training_factor) << n;
  }
  // The H100 presets share the H100's ceiling (794.5 of 989 TFLOP/s).
  for (const char* n : {"dgx-h100", "generic-h100-8nic", "generic-h100-4nic", "generic-h200-8nic"})
    EXPECT_NEAR(load_machine(n).gemm_max_efficiency * 989, 794.5, 0.05) << n;
  // Where the efficiency is itself the sweep's best (A100, MI250X), the ceiling is that number.
  for (const char* n : {"dgx-a100-80gb", "perlmutter-a100", "perlmutter-a100-80gb", "frontier-mi250x"}) {
    const Machine m = load_machine(n);
    EXPECT_NEAR(m.gemm_max_efficiency, m.gemm_efficiency, 1e-3) << n;
    EXPECT_GE(m.gemm_max_efficiency, m.gemm_efficiency) << n << ": the ceiling would bind";
  }
  // One device, one number: the three A100 presets share the measured efficiency.
  const double a100 = load_machine("dgx-a100-80gb").gemm_efficiency;
  EXPECT_DOUBLE_EQ(load_machine("perlmutter-a100").gemm_efficiency, a100);
  EXPECT_DOUBLE_EQ(load_machine("perlmutter-a100-80gb").gemm_efficiency, a100);
}

TEST(Machine, LatencyModelRoundTripsAndBadValuesAreNamed) {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["default"].erase("alpha_us_per_gpu");
  j["comm"]["default"]["latency"] = {
      {"ring", {{"base_us", 8}, {"intra_hop_us", 2}, {"inter_hop_us", 10}}},
      {"tree", {{"base_us", 0}, {"intra_hop_us", 5}, {"inter_hop_us", 20}, {"bw_factor", 0.5}}}};
  const Machine m = machine_from_json(j, "m.json");
  const Machine back = machine_from_json(machine_to_json(m), "back");
  EXPECT_DOUBLE_EQ(back.comm_default.latency->ring.inter_hop_us, 10);
  EXPECT_DOUBLE_EQ(back.comm_default.latency->tree->intra_hop_us, 5);
  EXPECT_DOUBLE_EQ(back.comm_default.latency->tree_bw_factor, 0.5);
  j["comm"]["default"]["latency"]["ring"]["intra_hop_us"] = -1;
  EXPECT_NE(error_of(j).find("'comm.default.latency.ring.intra_hop_us' must be >= 0"),
            std::string::npos)
      << error_of(j);
  j["comm"]["default"]["latency"]["ring"].erase("intra_hop_us");
  EXPECT_NE(error_of(j).find("'comm.default.latency.ring.intra_hop_us' is missing"),
            std::string::npos);
}

TEST(Machine, MissingFieldsAreNamed) {
  const nlohmann::json good = test::synthetic_machine_json();
  EXPECT_EQ(error_of(good), "");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"gpus_per_node"}, "'gpus_per_node' is missing"},
      {{"gpu", "memory_bandwidth_gbps"}, "'gpu.memory_bandwidth_gbps' is missing"},
      {{"gpu", "gemm_efficiency"}, "'gpu.gemm_efficiency' is missing"},
      {{"comm", "default", "intra"}, "'comm.default.intra' is missing"},
      {{"comm", "default", "alpha_us_per_gpu"}, "'comm.default.alpha_us_per_gpu' is missing"},
      {{"interference", "comm_slowdown"}, "'interference.comm_slowdown' is missing"},
      {{"interference"}, "'interference' is missing"},
  };
  for (const auto& [path, msg] : cases) {
    nlohmann::json j = good;
    nlohmann::json* p = &j;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) p = &(*p)[path[i]];
    p->erase(path.back());
    const std::string e = error_of(j);
    EXPECT_NE(e.find("machine file m.json: " + msg), std::string::npos) << e;
  }
}

TEST(Machine, BadValuesAreNamed) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpus_per_node"] = 0;
  EXPECT_NE(error_of(j).find("'gpus_per_node' must be an integer >= 1"), std::string::npos);
  j = test::synthetic_machine_json();
  j["comm"]["default"]["intra"][1]["gbps"] = "fast";
  EXPECT_NE(error_of(j).find("'comm.default.intra[1].gbps' is not a number"), std::string::npos);
  j = test::synthetic_machine_json();
  j["gpu"]["memory_bytes"] = -1;
  EXPECT_NE(error_of(j).find("'gpu.memory_bytes' must be > 0"), std::string::npos);
  j = test::synthetic_machine_json();
  j["comm"]["default"]["intra"] = nlohmann::json::array();
  EXPECT_NE(error_of(j).find("must list at least one group size"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("the top level' is not a JSON object"),
            std::string::npos);
}

TEST(Machine, FilesAndPresetsErrors) {
  const std::string dir = ::testing::TempDir() + "/ovb_model_machine";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/broken.json") << "{\"name\": \"x\", "; }
  EXPECT_THROW(load_machine(dir + "/broken.json"), UsageError);
  try {
    load_machine("no-such-machine");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not a preset (known: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("perlmutter-a100"), std::string::npos);
  }
  nlohmann::json j = test::synthetic_machine_json();
  j["gpu"].erase("peak_tflops");
  const Machine m = machine_from_json(j, "t");
  EXPECT_THROW(m.peak(), UsageError);  // "test device": peak unknown
}

TEST(Machine, JsonRoundTrip) {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["all_gather"] = {{"intra", {{{"p", 2}, {"ip", 2}, {"gbps", 10}, {"alpha_us", 3}}}},
                             {"inter", {{{"p", 8}, {"node_gbps", 40}}}}};
  j["gemm_table"] = {{{"m", 8}, {"n", 16}, {"k", 32}, {"tflops", 1.5}, {"dtype", "fp32"}}};
  j["gpu"]["unfused_attention_efficiency"] = 0.75;
  const Machine a = machine_from_json(j, "t");
  const nlohmann::json out = machine_to_json(a);
  const Machine b = machine_from_json(out, "t2");
  EXPECT_EQ(machine_to_json(b), out);
  EXPECT_DOUBLE_EQ(b.unfused_attention_efficiency, 0.75);
  // Absent, the unfused products run at attention_efficiency.
  EXPECT_DOUBLE_EQ(test::synthetic_machine().unfused_attention_efficiency, 0);
  EXPECT_EQ(b.comm_kind[static_cast<int>(CollKind::all_gather)]->intra[0].ip, 2);
  EXPECT_DOUBLE_EQ(b.comm_kind[static_cast<int>(CollKind::all_gather)]->inter[0].node_gbps, 40);
  EXPECT_EQ(b.gemm_table.size(), 1u);
}
