// Model vs measurement on measurements made up from the model itself (so every error is known):
// iteration and per-(group, kind) errors, call-count normalisation over several iterations,
// Spearman and top-k, pairing of trace analyses, and messages for bad inputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/model/compare.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/stats.hpp"

using namespace ovb;
using namespace ovb::model;
using nlohmann::json;

namespace {

const GptShape kModel = test::small_gpt(2);

// A gpt4d result whose iteration time is the prediction times (1 + err) and whose collectives
// are the predicted ones over `iters` iterations.
json fake_result(const Machine& mc, const char* grid, const char* overlap, double err, int iters) {
  GptPlanOptions o = test::plan_on(grid, 8);
  parse_overlap(overlap, o);
  const Prediction p = predict(kModel, o, mc);
  const GridShape& g = o.grid;
  json colls = json::array();
  for (int gi = 0; gi < 5; ++gi)
    for (int k = 0; k < 3; ++k)
      if (p.timeline.count[gi][k] > 0)
        colls.push_back({{"kind", name_of(static_cast<CollKind>(k))},
                         {"group", name_of(static_cast<Group>(gi))},
                         {"count", p.timeline.count[gi][k] * iters},
                         {"bytes", 0},
                         {"time_ms", p.timeline.comm_us[gi][k] / 1e3 * iters},
                         {"exposed_ms", p.timeline.exposed_us[gi][k] / 1e3 * iters}});
  json ov = json::array();
  if (o.oar) ov.push_back("oar");
  if (o.ors) ov.push_back("ors");
  if (o.oag) ov.push_back("oag");
  return {{"context", {{"backend", "host"}, {"ranks_per_gpu", 1}}},
          {"config",
           {{"model",
             {{"layers", kModel.layers},
              {"hidden", kModel.hidden},
              {"heads", kModel.heads},
              {"seq", kModel.seq},
              {"vocab", kModel.vocab}}},
            {"grid",
             {{"gx", g.gx}, {"gy", g.gy}, {"gz", g.gz}, {"gdata", g.gdata}, {"order", "x,y,z"}}},
            {"batch", 8},
            {"overlap", ov},
            {"dtype", "fp32"},
            {"recompute", false}}},
          {"iterations", {{{"iter", 0}, {"loss", 5.0}, {"time_ms", 1.0}}}},
          {"summary", {{"median_time_ms", p.iteration_ms() * (1 + err)}, {"collectives", colls}}}};
}

std::string dir_for(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/ovb_model_cmp_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

TEST(Compare, ErrorsRankCorrelationAndTopK) {
  const Machine mc = test::synthetic_machine();
  const std::string d = dir_for("basic");
  const std::tuple<const char*, const char*, double> runs[] = {{"2x2x1x1", "none", 0.10},
                                                               {"1x2x2x1", "all", -0.05},
                                                               {"4x1x1x1", "oar", 0.0},
                                                               {"1x1x2x2", "ors", 0.20}};
  int i = 0;
  for (const auto& [grid, ov, err] : runs)
    write_json(d + "/run" + std::to_string(i++) + ".json", fake_result(mc, grid, ov, err, 5));
  const Comparison c = compare(load_runs({d}), mc, 1);
  ASSERT_EQ(c.doc["configs"].size(), 4u);
  std::vector<double> pred, meas;
  for (std::size_t k = 0; k < 4; ++k) {
    const json& cfg = c.doc["configs"][k];
    EXPECT_NEAR(cfg["error_pct"].get<double>(),
                -100 * std::get<2>(runs[k]) / (1 + std::get<2>(runs[k])), 1e-9);
    for (const json& t : cfg["terms"]) {  // 5 iterations measured: normalised per iteration
      EXPECT_NEAR(t["error_pct"].get<double>(), 0, 1e-9) << t.dump();
      EXPECT_DOUBLE_EQ(t["measured_count"].get<double>(), t["predicted_count"].get<double>());
    }
    pred.push_back(cfg["predicted_ms"]);
    meas.push_back(cfg["measured_ms"]);
  }
  EXPECT_TRUE(c.doc["warnings"].empty()) << c.doc["warnings"].dump();
  EXPECT_NEAR(c.doc["spearman"].get<double>(), *spearman(pred, meas), 1e-12);
  // top-1: is the measured fastest also the predicted fastest?
  const auto best_m = std::min_element(meas.begin(), meas.end()) - meas.begin();
  const auto best_p = std::min_element(pred.begin(), pred.end()) - pred.begin();
  EXPECT_EQ(c.doc["measured_best_in_top_k"].get<bool>(), best_m == best_p);
  EXPECT_EQ(compare(load_runs({d}), mc, 4).doc["measured_best_in_top_k"], true);
  EXPECT_NE(c.text.find("Spearman rank correlation"), std::string::npos);
}

// Host ranks that share cores get a core's rate divided among them; a calibration measured under
// another placement is named in a warning, not applied silently.
TEST(Compare, HostRanksPerCoreAndTheCalibrationsPlacement) {
  Machine mc = test::synthetic_machine();
  const std::string d = dir_for("placement");
  json r = fake_result(mc, "2x2x1x1", "none", 0, 1);
  r["context"] = {{"backend", "host"}, {"world_size", 4}, {"local_size", 4}, {"cpus", 2}};
  write_json(d + "/run.json", r);
  Machine shared = mc;
  shared.ranks_per_device = 2;
  const double two_per_core = predict(kModel, test::plan_on("2x2x1x1", 8), shared).iteration_ms();
  Comparison c = compare(load_runs({d}), mc, 1);
  EXPECT_NEAR(c.doc["configs"][0]["predicted_ms"].get<double>(), two_per_core, 1e-9);
  EXPECT_EQ(c.doc["measured_on"]["ranks_per_device"], 2);
  EXPECT_TRUE(c.doc["warnings"].empty()) << c.doc["warnings"].dump();  // nothing recorded

  // Collectives calibrated with one rank per core (4 ranks on 4 CPUs), the GEMM table with
  // OpenBLAS's default threads: both named.
  mc.calibration = {
      {"measured_under",
       {{"collective",
         {{"backend", "host"}, {"local_size", 4}, {"cpus", 4}, {"ranks_per_device", 1}}},
        {"gemm",
         {{"backend", "host"},
          {"local_size", 1},
          {"cpus", 2},
          {"ranks_per_device", 1},
          {"blas_threads", nullptr}}}}}};
  c = compare(load_runs({d}), mc, 1);
  ASSERT_EQ(c.doc["warnings"].size(), 2u) << c.doc["warnings"].dump();
  EXPECT_NE(c.doc["warnings"][0].get<std::string>().find(
                "collective results were measured with 4 rank(s) per node on 4 CPU(s), 1 per "
                "device, 1 run(s) had 4 rank(s) per node on 2 CPU(s), 2 per device"),
            std::string::npos)
      << c.doc["warnings"][0];
  EXPECT_NE(c.doc["warnings"][1].get<std::string>().find("OPENBLAS_NUM_THREADS=unset"),
            std::string::npos);
  EXPECT_EQ(c.doc["calibrated_under"]["collective"]["cpus"], 4);
  // Measured under the runs' placement, one BLAS thread: no warning.
  mc.calibration["measured_under"]["collective"]["cpus"] = 2;
  mc.calibration["measured_under"]["collective"]["ranks_per_device"] = 2;
  mc.calibration["measured_under"]["gemm"]["blas_threads"] = "1";
  c = compare(load_runs({d}), mc, 1);
  EXPECT_TRUE(c.doc["warnings"].empty()) << c.doc["warnings"].dump();
}

TEST(Compare, TraceAnalysisIsPairedAndNormalised) {
  const Machine mc = test::synthetic_machine();
  const std::string d = dir_for("trace");
  write_json(d + "/run.json", fake_result(mc, "2x2x1x1", "none", 0, 1));
  GptPlanOptions o = test::plan_on("2x2x1x1", 8);
  const Prediction p = predict(kModel, o, mc);
  const double x_ar = p.timeline.comm_us[0][0], x_n = p.timeline.count[0][0];
  json rank = {{"rank", 0},
               {"collectives",
                {{{"kind", "all_reduce"},
                  {"group", "x"},
                  {"count", 3 * x_n},
                  {"total_us", 3 * x_ar * 1.1}}}}};
  write_json(d + "/run.trace-analysis.json",
             {{"ranks", {rank, rank}},
              {"summary", {{"compute_us", 3 * p.timeline.compute_us}, {"exposed_comm_us", 0.0}}}});
  const std::vector<MeasuredRun> runs = load_runs({d});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trace_file, d + "/run.trace-analysis.json");
  const json cfg = compare(runs, mc, 3).doc["configs"][0];
  EXPECT_EQ(cfg["trace"]["iterations"], 3);
  EXPECT_NEAR(cfg["trace"]["compute_ms"]["measured"].get<double>(), p.timeline.compute_us / 1e3,
              1e-9);
  bool found = false;
  for (const json& t : cfg["trace"]["terms"])
    if (t["group"] == "x" && t["kind"] == "all_reduce") {
      found = true;
      EXPECT_NEAR(t["error_pct"].get<double>(), 100 * (1 / 1.1 - 1), 1e-9);
    }
  EXPECT_TRUE(found);
}

// Repeated runs of one configuration are one row measured at the median of their medians (the
// terms from the run at that median); a traced run of the same configuration stays a row of its
// own; the odd-vs-even split of the repetitions gives the measurement's own rank correlation.
TEST(Compare, RepetitionsAreOneRowAtTheirMedian) {
  const Machine mc = test::synthetic_machine();
  const std::string d = dir_for("repeats");
  // Errors per repetition, in file order (a.json, b.json, ...): the median is the middle value.
  const std::vector<double> a_err = {0.30, -0.10, 0.10}, b_err = {0.05, 0.25, -0.20, 0.00};
  const char* names = "abcdefg";
  for (std::size_t i = 0; i < a_err.size(); ++i)
    write_json(d + "/A-" + names[i] + ".json", fake_result(mc, "2x2x1x1", "none", a_err[i], 1));
  for (std::size_t i = 0; i < b_err.size(); ++i)
    write_json(d + "/B-" + names[i] + ".json", fake_result(mc, "1x1x2x2", "oar", b_err[i], 1));
  write_json(d + "/C.json", fake_result(mc, "4x1x1x1", "ors", 0.5, 1));
  write_json(d + "/C2.json", fake_result(mc, "4x1x1x1", "ors", 0.7, 1));
  const Comparison c = compare(load_runs({d}), mc, 1);
  ASSERT_EQ(c.doc["configs"].size(), 3u) << c.text;
  const json& a = c.doc["configs"][0];
  const json& b = c.doc["configs"][1];
  const double pa = a["predicted_ms"], pb = b["predicted_ms"];
  const double pc = c.doc["configs"][2]["predicted_ms"];
  EXPECT_EQ(a["repetitions"], 3);
  EXPECT_EQ(b["repetitions"], 4);
  EXPECT_NEAR(a["measured_ms"].get<double>(), pa * 1.10, 1e-9);
  EXPECT_NEAR(b["measured_ms"].get<double>(), pb * (1.00 + 1.05) / 2, 1e-9);  // even count
  EXPECT_NEAR(a["measured_runs_ms"][0].get<double>(), pa * 1.30, 1e-9);  // file order kept
  EXPECT_EQ(a["files"].size(), 3u);
  EXPECT_EQ(a["file"], d + "/A-c.json");  // the run at the median
  EXPECT_EQ(b["file"], d + "/B-d.json");  // the lower of the two middle runs (1.00)
  EXPECT_NEAR(a["error_pct"].get<double>(), 100 * (1 / 1.10 - 1), 1e-9);
  // Odd-numbered repetitions vs even-numbered ones, per configuration.
  const std::vector<double> odd = {pa * (1.30 + 1.10) / 2, pb * (1.05 + 0.80) / 2, pc * 1.5},
                            even = {pa * 0.90, pb * (1.25 + 1.00) / 2, pc * 1.7};
  EXPECT_NEAR(c.doc["measured_split_half_spearman"].get<double>(), *spearman(odd, even), 1e-12);
  EXPECT_NE(c.text.find("measured against itself"), std::string::npos);

  // A traced run is not a repetition of an untraced one: C and C2 become two rows of one run
  // each, left out of the split-half correlation, which is over A and B alone.
  write_json(d + "/C.trace-analysis.json",
             {{"ranks", {{{"rank", 0}, {"collectives", json::array()}}}},
              {"summary", {{"compute_us", 1.0}, {"exposed_comm_us", 0.0}}}});
  const Comparison t = compare(load_runs({d}), mc, 1);
  ASSERT_EQ(t.doc["configs"].size(), 4u);
  EXPECT_NEAR(t.doc["measured_split_half_spearman"].get<double>(),
              *spearman({odd[0], odd[1]}, {even[0], even[1]}), 1e-12);
  // With one configuration left that ran twice there is no correlation to give.
  std::filesystem::remove(d + "/B-c.json");
  std::filesystem::remove(d + "/B-d.json");
  std::filesystem::remove(d + "/B-b.json");
  EXPECT_TRUE(compare(load_runs({d}), mc, 1).doc["measured_split_half_spearman"].is_null());
}

TEST(Compare, BadInputsAreNamed) {
  const Machine mc = test::synthetic_machine();
  const std::string d = dir_for("bad");
  json r = fake_result(mc, "2x2x1x1", "none", 0, 1);
  r["config"]["model"].erase("hidden");
  write_json(d + "/run.json", r);
  try {
    compare(load_runs({d}), mc, 3);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'config.model.hidden'"), std::string::npos) << e.what();
  }
  write_json(d + "/other.json", json{{"x", 1}});
  EXPECT_THROW(load_runs({d + "/other.json"}), UsageError);
  EXPECT_THROW(load_runs({d + "/missing.json"}), UsageError);
  const std::string d2 = dir_for("orphan");
  write_json(d2 + "/a.json", fake_result(mc, "2x2x1x1", "none", 0, 1));
  write_json(d2 + "/b.trace-analysis.json",
             {{"ranks", json::array()}, {"summary", json::object()}});
  EXPECT_THROW(load_runs({d2}), UsageError);
  r = fake_result(mc, "2x2x1x1", "none", 0, 1);
  r["config"]["overlap"] = {"oar", "fast"};
  write_json(d2 + "/a.json", r);
  std::filesystem::remove(d2 + "/b.trace-analysis.json");
  EXPECT_THROW(compare(load_runs({d2}), mc, 3), UsageError);
  // An impossible configuration: the plan's own message.
  r = fake_result(mc, "2x2x1x1", "none", 0, 1);
  r["config"]["grid"]["gy"] = 3;
  write_json(d2 + "/a.json", r);
  try {
    compare(load_runs({d2}), mc, 3);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not divisible"), std::string::npos) << e.what();
  }
}
