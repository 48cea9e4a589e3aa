// The JSON result of a gpt4d run (written by the smoke test gpt4d.smoke.host.4ranks, path in
// OVB_GPT4D_RESULT, collective dump in OVB_GPT4D_COLLECTIVES): the keys of results/SCHEMA.md,
// sane values, and per (kind, group) collective counts equal to gpt_collectives().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "config.hpp"
#include "ovb/gpt_plan.hpp"
#include "ovb/io.hpp"
#include "ovb/run_config.hpp"

using namespace ovb;

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// The configuration the smoke test runs (endtoend/tests/CMakeLists.txt).
std::pair<GptShape, GptPlanOptions> smoke_plan(const nlohmann::json& cfg) {
  GptShape m = gpt_preset("tiny");
  m.seq = cfg["model"]["seq"];
  m.vocab = cfg["model"]["vocab"];
  GptPlanOptions o;
  o.grid.gx = cfg["grid"]["gx"];
  o.grid.gy = cfg["grid"]["gy"];
  o.grid.gz = cfg["grid"]["gz"];
  o.grid.gdata = cfg["grid"]["gdata"];
  o.batch = cfg["batch"];
  o.recompute = cfg["recompute"];
  o.cache_weights = cfg["cache_weights"];
  o.ors_window = cfg["ors_window"];
  o.micro_batch = cfg["micro_batch"];
  o.shard_optimizer = cfg.value("shard_optimizer", false);
  o.shard_gradients = cfg.value("shard_gradients", false);
  return {m, o};
}
}  // namespace

TEST(ResultFile, HasTheSchemaKeysAndPlannedCollectives) {
  const char* path = env("OVB_GPT4D_RESULT");
  if (!path) GTEST_SKIP() << "OVB_GPT4D_RESULT not set (run through ctest)";
  const nlohmann::json r = read_json(path);
  for (const char* k : {"context", "config", "iterations", "summary"})
    ASSERT_TRUE(r.contains(k)) << k;
  const auto& cfg = r["config"];
  for (const char* k : {"model", "grid", "batch", "iters", "seed", "lr", "data", "overlap", "dtype",
                        "recompute", "world_size"})
    EXPECT_TRUE(cfg.contains(k)) << k;
  EXPECT_EQ(r["context"]["schema_version"], 1);
  ASSERT_EQ(r["iterations"].size(), cfg["iters"].get<std::size_t>());
  for (const auto& it : r["iterations"]) {
    for (const char* k : {"iter", "loss", "time_ms", "tokens_per_s", "tflops_per_gpu", "mfu"})
      EXPECT_TRUE(it.contains(k)) << k;
    EXPECT_GT(it["loss"].get<double>(), 0);
    EXPECT_GT(it["time_ms"].get<double>(), 0);
  }
  const auto& s = r["summary"];
  for (const char* k :
       {"warmup_iters", "median_time_ms", "p10_time_ms", "p90_time_ms", "tokens_per_s",
        "tflops_per_gpu", "mfu", "peak_memory_bytes", "memory_estimate_bytes", "collectives"})
    EXPECT_TRUE(s.contains(k)) << k;
  EXPECT_TRUE(s["mfu"].is_null());  // a CPU has no entry in the peak table
  EXPECT_EQ(s["peak_memory_bytes"].get<double>(), s["memory_estimate_bytes"].get<double>());
  EXPECT_LE(s["p10_time_ms"].get<double>(), s["median_time_ms"].get<double>());

  // Timed figures (docs/metrics.md): the warm-up rule on --iters N leaves max(3, ceil(N/10)) out
  // (but one timed), and the percentiles are those of the remaining iterations' times.
  const int n_iters = cfg["iters"].get<int>();
  const int warm = n_iters <= 1 ? 0 : std::min(std::max(3, (n_iters + 9) / 10), n_iters - 1);
  EXPECT_EQ(s["warmup"].get<int>(), warm);
  EXPECT_EQ(s["iterations_timed"].get<int>(), n_iters - warm);
  EXPECT_EQ(s["enough_samples"].get<bool>(), n_iters - warm >= 20);
  std::vector<double> timed;
  for (const auto& it : r["iterations"])
    if (it["iter"].get<int>() >= warm) timed.push_back(it["time_ms"].get<double>());
  std::sort(timed.begin(), timed.end());
  const std::size_t h = timed.size() / 2;
  const double median = timed.size() % 2 ? timed[h] : 0.5 * (timed[h - 1] + timed[h]);
  EXPECT_NEAR(s["p50_ms"].get<double>(), median, 1e-9 * median);
  EXPECT_EQ(s["p50_ms"], s["median_time_ms"]);
  EXPECT_GE(s["p10_ms"].get<double>(), timed.front());
  EXPECT_LE(s["p90_ms"].get<double>(), timed.back());
  // A host run has no device to measure: null, and the context says telemetry is unavailable.
  EXPECT_TRUE(s["device_memory_peak_bytes"].is_null());
  EXPECT_EQ(r["context"]["gpu_telemetry"]["available"], false);

  const auto [m, o] = smoke_plan(cfg);
  std::map<std::string, double> want, got;
  for (const CollOp& c : gpt_collectives(m, o))
    want[std::string(name_of(c.kind)) + " " + std::string(name_of(c.group))] += 1;
  for (const auto& c : s["collectives"]) {
    got[c["kind"].get<std::string>() + " " + c["group"].get<std::string>()] = c["count"];
    EXPECT_GE(c["time_ms"].get<double>(), c["exposed_ms"].get<double>() - 1e-9);
    EXPECT_GE(c["exposed_ms"].get<double>(), 0);
  }
  EXPECT_EQ(got, want);

  if (const char* log = env("OVB_GPT4D_COLLECTIVES")) {
    std::ifstream in(log);
    std::string line;
    std::size_t n = 0;
    std::map<int, std::size_t> per_step, planned;  // collectives per micro-step
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      EXPECT_TRUE(j.contains("role") && j.contains("count") && j.contains("phase"));
      ++per_step[j["micro_step"].get<int>()];
      ++n;
    }
    EXPECT_EQ(n, gpt_collectives(m, o).size());
    for (const CollOp& c : gpt_collectives(m, o)) ++planned[c.micro_step];
    EXPECT_EQ(per_step, planned);
    EXPECT_EQ(static_cast<std::int64_t>(planned.size()), micro_steps(o));
  }
}

// The result's config is the run configuration's JSON form: the one reader (run_config_from_json)
// reads what the hand-read plan above says, and writing it again gives the file's values back.
// CUDA_DEVICE_MAX_CONNECTIONS as the context's environment recorded it (null when unset); the
// warning only where it serialises streams, never on the host backend.
TEST(ResultFile, RecordsDeviceMaxConnections) {
  const char* path = env("OVB_GPT4D_RESULT");
  if (!path) GTEST_SKIP() << "OVB_GPT4D_RESULT not set (run through ctest)";
  const nlohmann::json c = read_json(path)["context"];
  ASSERT_TRUE(c.contains("device_max_connections"));
  const auto& e = c["environment"];
  if (e.contains("CUDA_DEVICE_MAX_CONNECTIONS")) {
    EXPECT_EQ(c["device_max_connections"],
              std::stoi(e["CUDA_DEVICE_MAX_CONNECTIONS"].get<std::string>()));
  } else {
    EXPECT_TRUE(c["device_max_connections"].is_null());
  }
  ASSERT_TRUE(c["warnings"].is_array());
  if (c["backend"] == "host") {
    EXPECT_TRUE(c["warnings"].empty());
  }
}

TEST(ResultFile, ConfigReadsBackWithTheRunConfigReader) {
  const char* path = env("OVB_GPT4D_RESULT");
  if (!path) GTEST_SKIP() << "OVB_GPT4D_RESULT not set (run through ctest)";
  const nlohmann::json cfg = read_json(path)["config"];
  const RunConfig c = run_config_from_json(cfg, std::string(path) + ": 'config.");
  const auto [m, o] = smoke_plan(cfg);
  EXPECT_EQ(c.model.layers, m.layers);
  EXPECT_EQ(c.model.hidden, m.hidden);
  EXPECT_EQ(c.model.heads, m.heads);
  EXPECT_EQ(c.model.seq, m.seq);
  EXPECT_EQ(c.model.vocab, m.vocab);
  EXPECT_EQ(c.plan.grid.str(), o.grid.str());
  EXPECT_EQ(c.plan.batch, o.batch);
  EXPECT_EQ(c.plan.micro_batch, o.micro_batch);
  EXPECT_EQ(c.plan.recompute, o.recompute);
  EXPECT_EQ(c.plan.cache_weights, o.cache_weights);
  EXPECT_EQ(c.plan.shard_optimizer, o.shard_optimizer);
  EXPECT_EQ(c.plan.shard_gradients, o.shard_gradients);
  const nlohmann::json back = to_json(c);
  for (const auto& [k, v] : back.items()) {
    if (k == "model") {
      for (const auto& [mk, mv] : v.items()) EXPECT_EQ(mv, cfg["model"][mk]) << "model." << mk;
    } else {
      EXPECT_EQ(v, cfg[k]) << k;
    }
  }
}
