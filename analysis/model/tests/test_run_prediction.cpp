// gpt4d --predict's side of the model (run_prediction.hpp) on a made-up gpt4d summary: every
// (group, kind) of the plan beside its measurement with error % worked out by hand, bytes summed
// over the slots, a measured term the plan lacks kept as its own row, the machine as a run shares
// its devices, the text table, and a summary without a median rejected.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/run_prediction.hpp"

using namespace ovb;
using namespace ovb::model;
using nlohmann::json;

namespace {

// The summary of a run measuring exactly twice the predicted time of every (group, kind), the
// plan's call counts and bytes, and an iteration of 4 ms.
json summary_of(const Prediction& p) {
  json colls = json::array();
  for (Group g : kGroups)
    for (CollKind k : kKinds) {
      const auto gi = static_cast<std::size_t>(g), ki = static_cast<std::size_t>(k);
      if (p.timeline.count[gi][ki] <= 0) continue;
      double bytes = 0;
      for (const CollOp& op : expand(p.comm))
        if (op.group == g && op.kind == k) bytes += op.bytes();
      colls.push_back({{"kind", name_of(k)},
                       {"group", name_of(g)},
                       {"count", p.timeline.count[gi][ki]},
                       {"bytes", bytes},
                       {"time_ms", 2 * p.timeline.comm_us[gi][ki] / 1e3},
                       {"exposed_ms", 0.0}});
    }
  return {{"median_time_ms", 4.0}, {"collectives", colls}};
}

TEST(RunPrediction, SideBySide) {
  const Machine mc = test::synthetic_machine();
  GptPlanOptions o = test::plan_on("2x2x2x1", 8);
  parse_overlap("oar,ors,oag", o);
  const Prediction p = predict(test::small_gpt(2), o, mc);
  const json vs = prediction_vs_measured(p, mc, summary_of(p));

  EXPECT_EQ(vs["machine"], "synthetic");
  EXPECT_EQ(vs["ranks_per_device"], 1);
  EXPECT_DOUBLE_EQ(vs["predicted_ms"].get<double>(), p.iteration_ms());
  EXPECT_DOUBLE_EQ(vs["measured_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(vs["error_pct"].get<double>(), 100 * (p.iteration_ms() - 4) / 4);
  EXPECT_EQ(vs["breakdown"], summary_json(p));
  EXPECT_TRUE(vs["exposed_error_pct"].is_null());  // nothing measured exposed
  int rows = 0;
  double pred_comm = 0;
  for (const json& t : vs["terms"]) {
    ++rows;
    EXPECT_GT(t["predicted_count"].get<double>(), 0);
    EXPECT_EQ(t["predicted_count"], t["measured_count"]);
    EXPECT_DOUBLE_EQ(t["predicted_bytes"].get<double>(), t["measured_bytes"].get<double>());
    EXPECT_DOUBLE_EQ(t["measured_ms"].get<double>(), 2 * t["predicted_ms"].get<double>());
    EXPECT_NEAR(t["error_pct"].get<double>(), -50.0, 1e-9) << t.dump();
    EXPECT_TRUE(t["exposed_error_pct"].is_null());
    pred_comm += t["predicted_ms"].get<double>();
  }
  EXPECT_GE(rows, 4);  // x, y and z all-reduces, z all-gathers and reduce-scatters, world
  EXPECT_DOUBLE_EQ(vs["predicted_comm_ms"].get<double>(), pred_comm);
  EXPECT_NEAR(vs["measured_comm_ms"].get<double>(), 2 * pred_comm, 1e-12);

  const std::string text = format_vs_measured(vs);
  EXPECT_NE(text.find("predicted (synthetic) vs measured, per iteration:"), std::string::npos);
  EXPECT_NE(text.find("  x all_reduce "), std::string::npos) << text;
  EXPECT_NE(text.find("error -"), std::string::npos) << text;
}

TEST(RunPrediction, MeasuredTermOutsideThePlan) {
  const Machine mc = test::synthetic_machine();
  const Prediction p = predict(test::small_gpt(2), test::plan_on("1x1x1x2", 4), mc);
  json s = summary_of(p);
  s["collectives"].push_back({{"kind", "all_gather"},
                              {"group", "data"},
                              {"count", 3},
                              {"bytes", 12},
                              {"time_ms", 0.5},
                              {"exposed_ms", 0.25}});
  const json vs = prediction_vs_measured(p, mc, s);
  const json& last = vs["terms"].back();
  EXPECT_EQ(last["group"], "data");
  EXPECT_EQ(last["kind"], "all_gather");
  EXPECT_EQ(last["predicted_count"], 0.0);
  EXPECT_EQ(last["measured_count"], 3.0);
  EXPECT_DOUBLE_EQ(last["error_pct"].get<double>(), -100.0);
  EXPECT_DOUBLE_EQ(last["exposed_error_pct"].get<double>(), -100.0);
}

TEST(RunPrediction, MachineForRunAndBadSummary) {
  const Machine mc = test::synthetic_machine();
  EXPECT_EQ(machine_for_run(mc, 1).ranks_per_device, 1);
  EXPECT_EQ(machine_for_run(mc, 4).ranks_per_device, 4);
  Machine shared = mc;
  shared.ranks_per_device = 2;
  EXPECT_EQ(machine_for_run(shared, 1).ranks_per_device, 2);  // the file's, when not shared

  const Prediction p = predict(test::small_gpt(2), test::plan_on("2x1x1x1", 4), mc);
  EXPECT_THROW(prediction_vs_measured(p, mc, json{{"collectives", json::array()}}), Error);
}

}  // namespace
