// Calibration on synthetic measurements generated from known parameters recovers them (exactly
// without noise, closely with noise); the GEMM table, interference factors and Google Benchmark
// aggregates are read as the schema says; bad inputs are named. Also the committed microbench
// fixtures calibrate.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/io.hpp"
#include "ovb/metrics.hpp"
#include "ovb/model/calibrate.hpp"

using namespace ovb;
using namespace ovb::model;
using nlohmann::json;

namespace {

struct Truth {
  CollKind kind;
  const char* group;
  int p, ip;
  double alpha_us, bw_gbps;  // bw as the model uses it (after NIC sharing)
};

// 2 nodes of 4 ranks, grid 2x2x2x1: x (p 2, ip 1) and y (p 2, ip 2) inside a node; z (p 2, ip 4)
// and the world (p 8) across nodes.
const Truth kTruth[] = {
    {CollKind::all_reduce, "x", 2, 1, 6, 90},      {CollKind::all_reduce, "y", 2, 2, 7, 60},
    {CollKind::all_reduce, "z", 2, 4, 12, 10},     {CollKind::all_reduce, "world", 8, 1, 30, 40},
    {CollKind::reduce_scatter, "z", 2, 4, 11, 11}, {CollKind::all_gather, "z", 2, 4, 10, 12},
    {CollKind::all_gather, "x", 2, 1, 5, 95},
};

std::string tmp(const std::string& name) {
  return ::testing::TempDir() + "/ovb_model_cal_" + name;
}

json context(int world, int local, int rpg) {
  return {
      {"world_size", world}, {"local_size", local}, {"ranks_per_gpu", rpg}, {"backend", "cuda"}};
}

json collective_file(double noise) {
  json b = json::array();
  int i = 0;
  for (const Truth& t : kTruth)
    for (double S = 1 << 20; S <= (1 << 26); S *= 4) {
      const double moved = S * metrics::bus_factor(t.kind, t.p);
      const double us = (t.alpha_us + moved / (t.bw_gbps * 1e3)) * (1 + noise * std::sin(++i));
      const std::string name =
          std::string(name_of(t.kind)) + "/" + std::to_string(long(S)) + "/group:" + t.group;
      b.push_back({{"name", name},
                   {"run_name", name},
                   {"run_type", "iteration"},
                   {"label", std::string("dtype=bf16 group=") + t.group + " inplace=0"},
                   {"bytes", S},
                   {"ranks", t.p},
                   {"time_us", us * 0.9},
                   {"time_max_us", us},
                   {"algbw", S / us / 1e3},
                   {"busbw", S / us / 1e3 * metrics::bus_factor(t.kind, t.p)},
                   {"wrong", 0}});
    }
  return {{"context", context(8, 4, 1)}, {"benchmarks", b}};
}

CalibrateOptions options_with(const json& coll) {
  write_json(tmp("coll.json"), coll);
  CalibrateOptions o;
  o.base = test::synthetic_machine();
  o.collective.push_back({tmp("coll.json"), GridShape::parse("2x2x2x1")});
  return o;
}

}  // namespace

TEST(Calibrate, RecoversKnownParametersExactly) {
  const Calibration cal = calibrate(options_with(collective_file(0)));
  const Machine& mc = cal.machine;
  EXPECT_EQ(mc.gpus_per_node, 4);  // local_size / ranks_per_gpu
  EXPECT_EQ(mc.ranks_per_device, 1);
  ASSERT_EQ(cal.series.size(), std::size(kTruth));
  for (const Truth& t : kTruth) {
    const auto it = std::find_if(cal.series.begin(), cal.series.end(), [&](const SeriesFit& f) {
      return f.kind == t.kind && f.p == t.p && f.ip == t.ip;
    });
    ASSERT_NE(it, cal.series.end()) << t.group;
    EXPECT_NEAR(it->alpha_us, t.alpha_us, 1e-6 * t.alpha_us) << t.group;
    EXPECT_NEAR(it->bw_gbps, t.bw_gbps, 1e-9 * t.bw_gbps) << t.group;
    EXPECT_NEAR(*it->r2, 1, 1e-12);
    EXPECT_LT(it->max_rel_err, 1e-9);
    const bool inter = t.ip * t.p > 4;
    EXPECT_EQ(it->placement, inter ? Placement::inter : Placement::intra);
    if (inter) {
      EXPECT_NEAR(it->node_gbps, t.bw_gbps * std::min(t.ip, 4), 1e-6);
    }
    // The calibrated machine predicts the generating times.
    const LinkParams l = link_params(mc, t.kind, t.p, t.ip);
    EXPECT_NEAR(l.bw_gbps, t.bw_gbps, 1e-9 * t.bw_gbps) << t.group;
    EXPECT_NEAR(l.alpha_us, t.alpha_us, 1e-6 * t.alpha_us) << t.group;
  }
  // Kinds measured only across nodes keep the default (here the all-reduce's) intra table.
  EXPECT_NEAR(link_params(mc, CollKind::reduce_scatter, 2, 1).bw_gbps, 90, 1e-6);
  EXPECT_EQ(cal.report["collectives"].size(), std::size(kTruth));
  // The machine file written from it loads again.
  write_json(tmp("machine.json"), machine_to_json(mc));
  EXPECT_NO_THROW(load_machine(tmp("machine.json")));
}

TEST(Calibrate, RecoversParametersCloselyWithNoise) {
  const Calibration cal = calibrate(options_with(collective_file(0.02)));
  for (const SeriesFit& f : cal.series) {
    const Truth* t = nullptr;
    for (const Truth& c : kTruth)
      if (c.kind == f.kind && c.p == f.p && c.ip == f.ip) t = &c;
    ASSERT_TRUE(t);
    EXPECT_NEAR(f.bw_gbps, t->bw_gbps, 0.05 * t->bw_gbps);
    EXPECT_LT(*f.r2, 1);
    EXPECT_GT(*f.r2, 0.99);
    EXPECT_GT(f.max_rel_err, 0);
  }
}

TEST(Calibrate, GemmTableInterferenceAndAggregates) {
  json gemm = {{"context", context(4, 4, 4)}, {"benchmarks", json::array()}};
  // Repetitions: the median aggregate is used, not the iterations.
  for (double tf : {100.0, 300.0, 200.0})
    gemm["benchmarks"].push_back({{"name", "gemm_bf16/64x64x64"},
                                  {"run_name", "gemm_bf16/64x64x64"},
                                  {"run_type", "iteration"},
                                  {"label", "dtype=bf16"},
                                  {"m", 64},
                                  {"n", 64},
                                  {"k", 64},
                                  {"tflops", tf}});
  gemm["benchmarks"].push_back({{"name", "gemm_bf16/64x64x64_median"},
                                {"run_name", "gemm_bf16/64x64x64"},
                                {"run_type", "aggregate"},
                                {"aggregate_name", "median"},
                                {"label", "dtype=bf16"},
                                {"m", 64},
                                {"n", 64},
                                {"k", 64},
                                {"tflops", 200.0}});
  gemm["benchmarks"].push_back({{"name", "gemm_bf16/8x8x8"},
                                {"run_type", "iteration"},
                                {"label", "dtype=bf16 inputs=random"},
                                {"m", 8},
                                {"n", 8},
                                {"k", 8},
                                {"tflops", 1.0}});
  gemm["benchmarks"].push_back({{"name", "gemm_bf16/9x9x9"}, {"error_occurred", true}});
  write_json(tmp("gemm.json"), gemm);
  json ov = {{"context", context(2, 2, 1)}, {"benchmarks", json::array()}};
  const std::pair<const char*, std::pair<double, double>> rows[] = {{"prio=equal", {0.1, 0.2}},
                                                                    {"prio=comm_high", {0.3, 0.4}}};
  for (const auto& [label, s] : rows)
    ov["benchmarks"].push_back({{"name", std::string("overlap/") + label},
                                {"run_type", "iteration"},
                                {"label", std::string("coll=all_reduce ") + label},
                                {"compute_slowdown", s.first},
                                {"comm_slowdown", s.second}});
  write_json(tmp("overlap.json"), ov);

  CalibrateOptions o;
  o.base = test::synthetic_machine();
  o.gemm = {tmp("gemm.json")};
  o.overlap = {tmp("overlap.json")};
  Calibration cal = calibrate(o);
  ASSERT_EQ(cal.machine.gemm_table.size(), 2u);
  // 4 ranks shared the GPU: the device ran 4 x what one rank saw.
  EXPECT_DOUBLE_EQ(cal.machine.gemm_table[0].tflops, 800);
  EXPECT_EQ(cal.machine.gemm_table[0].dtype, "bf16");
  EXPECT_EQ(cal.machine.precision, "bf16");
  EXPECT_NEAR(cal.machine.compute_slowdown, 0.2, 1e-12);
  EXPECT_NEAR(cal.machine.comm_slowdown, 0.3, 1e-12);
  EXPECT_TRUE(cal.report["gemm"]["loo_max_rel_err"].is_number());
  // The data the rows were timed on: 64x64x64 on ovb-gemm's exact inputs, 8x8x8 on random ones.
  EXPECT_EQ(cal.report["gemm"]["inputs"], json({"exact", "random"}));
  o.overlap_filter = "prio=equal";
  cal = calibrate(o);
  EXPECT_NEAR(cal.machine.compute_slowdown, 0.1, 1e-12);
  o.overlap_filter = "prio=nothing";
  EXPECT_THROW(calibrate(o), UsageError);
}

// Rows of two scenarios in one file never mix: the interference factors are the means of one
// scenario's rows (by default gemm_coll, which a label without a scenario is: files written
// before the label carried it), and each scenario alone gives its own.
TEST(Calibrate, OverlapScenariosDoNotMix) {
  json ov = {{"context", context(2, 2, 1)}, {"benchmarks", json::array()}};
  struct Row {
    const char* name;
    const char* label;
    double compute, comm;
  };
  const Row rows[] = {
      {"overlap/all_reduce/a", "coll=all_reduce prio=equal", 0.10, 0.20},  // old: gemm_coll
      {"overlap/all_reduce/b", "coll=all_reduce prio=equal scenario=gemm_coll", 0.30, 0.40},
      {"overlap/attn_ag/all_gather/a", "coll=all_gather prio=equal scenario=attn_ag", 0.90, 0.70},
      {"overlap/attn_ag/all_gather/b", "coll=all_gather prio=equal scenario=attn_ag", 0.50, 0.30}};
  for (const Row& r : rows)
    ov["benchmarks"].push_back({{"name", r.name},
                                {"run_type", "iteration"},
                                {"label", r.label},
                                {"compute_slowdown", r.compute},
                                {"comm_slowdown", r.comm}});
  write_json(tmp("overlap-scenarios.json"), ov);
  CalibrateOptions o;
  o.base = test::synthetic_machine();
  o.overlap = {tmp("overlap-scenarios.json")};
  Calibration cal = calibrate(o);
  EXPECT_NEAR(cal.machine.compute_slowdown, (0.10 + 0.30) / 2, 1e-12);
  EXPECT_NEAR(cal.machine.comm_slowdown, (0.20 + 0.40) / 2, 1e-12);
  EXPECT_EQ(cal.report["interference"]["rows"], 2);
  EXPECT_EQ(cal.report["interference"]["scenario"], "gemm_coll");
  o.overlap_scenario = "attn_ag";
  cal = calibrate(o);
  EXPECT_NEAR(cal.machine.compute_slowdown, (0.90 + 0.50) / 2, 1e-12);
  EXPECT_NEAR(cal.machine.comm_slowdown, (0.70 + 0.30) / 2, 1e-12);
  EXPECT_EQ(cal.report["interference"]["scenario"], "attn_ag");
  o.overlap_scenario = "none_such";
  try {
    calibrate(o);
    FAIL() << "no error for a scenario without rows";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "calibrate: no ovb-overlap measurement of scenario 'none_such'");
  }
}

TEST(Calibrate, HostRanksShareCoresAndThePlacementIsRecorded) {
  const json host = {{"backend", "host"}, {"local_size", 4}, {"cpus", 2}, {"ranks_per_gpu", 1}};
  EXPECT_EQ(ranks_per_device_of(host), 2);  // 4 ranks time-slice 2 cores
  EXPECT_EQ(ranks_per_device_of(json{{"backend", "host"}, {"local_size", 3}, {"cpus", 2}}), 2);
  EXPECT_EQ(ranks_per_device_of(json{{"backend", "host"}, {"local_size", 1}, {"cpus", 2}}), 1);
  EXPECT_EQ(ranks_per_device_of(json{{"backend", "host"}, {"local_size", 4}}), 1);  // no cpus
  EXPECT_EQ(ranks_per_device_of(context(4, 4, 4)), 4);  // a GPU under MPS
  EXPECT_EQ(ranks_per_device_of(json::object()), 1);

  json coll = collective_file(0);
  coll["context"] = {{"backend", "host"},
                     {"host", "vm"},
                     {"world_size", 8},
                     {"local_size", 4},
                     {"cpus", 2},
                     {"ranks_per_gpu", 1},
                     {"environment", {{"OPENBLAS_NUM_THREADS", "1"}}}};
  CalibrateOptions o = options_with(coll);
  // One rank's GEMM (one core) and four ranks' GEMM on 2 cores (each saw half a core).
  const std::tuple<const char*, int, double> gemms[] = {{"gemm1", 1, 0.04}, {"gemm4", 4, 0.02}};
  for (const auto& [name, world, tf] : gemms) {
    json g = {{"context",
               {{"backend", "host"}, {"world_size", world}, {"local_size", world}, {"cpus", 2}}},
              {"benchmarks",
               {{{"name", "gemm/fp32/64x64x64"},
                 {"run_type", "iteration"},
                 {"m", 64},
                 {"n", 64},
                 {"k", 64},
                 {"tflops", tf}}}}};
    write_json(tmp(std::string(name) + ".json"), g);
    o.gemm = {tmp(std::string(name) + ".json")};
    const Calibration cal = calibrate(o);
    EXPECT_EQ(cal.machine.ranks_per_device, 2);  // the collective run's ranks per core
    EXPECT_EQ(cal.machine.gpus_per_node, 2);     // a host device is a core
    ASSERT_EQ(cal.machine.gemm_table.size(), 1u);
    EXPECT_DOUBLE_EQ(cal.machine.gemm_table[0].tflops, 0.04) << name;  // one core's rate
    const json& under = cal.report["measured_under"];
    EXPECT_EQ(under["collective"]["ranks_per_device"], 2);
    EXPECT_EQ(under["collective"]["cpus"], 2);
    EXPECT_EQ(under["collective"]["blas_threads"], "1");
    EXPECT_EQ(under["gemm"]["world_size"], world);
    EXPECT_TRUE(under["gemm"]["blas_threads"].is_null());
  }
}

TEST(Calibrate, BadInputsAreNamed) {
  CalibrateOptions o = options_with(collective_file(0));
  o.collective[0].grid.reset();
  try {
    calibrate(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("FILE@GXxGYxGZxGD"), std::string::npos) << e.what();
  }
  o.collective[0].grid = GridShape::parse("4x2x1x1");  // x would have 4 ranks: busbw/algbw says 2
  try {
    calibrate(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit a group of 4 ranks"), std::string::npos);
  }
  CalibrateOptions none;
  none.base = test::synthetic_machine();
  EXPECT_THROW(calibrate(none), UsageError);
  none.gemm = {tmp("does-not-exist.json")};
  EXPECT_THROW(calibrate(none), UsageError);
  write_json(tmp("not-gbench.json"), json{{"a", 1}});
  none.gemm = {tmp("not-gbench.json")};
  EXPECT_THROW(calibrate(none), UsageError);
}

TEST(Calibrate, CommittedMicrobenchFixtures) {
  const std::string dir = OVB_FIXTURES_DIR "/microbench/";
  CalibrateOptions o;
  o.base = load_machine("generic-h100-8nic");
  // Its x group has 2 ranks (and the file does not say the grid: it must be given).
  o.collective.push_back({dir + "collective.json", GridShape::parse("2x2x2x1")});
  o.gemm = {dir + "gemm.json"};
  o.overlap = {dir + "overlap.json"};
  const Calibration cal = calibrate(o);
  EXPECT_FALSE(cal.series.empty());
  EXPECT_EQ(cal.machine.gemm_table.size(), 3u);
  EXPECT_GT(cal.machine.compute_slowdown, 0);
}

TEST(Calibrate, BlockingWaitTableFromItsScenarioRows) {
  json ov = {{"context", context(4, 4, 2)}, {"benchmarks", json::array()}};
  ov["benchmarks"].push_back({{"name", "overlap/all_reduce/a"},
                              {"run_type", "iteration"},
                              {"label", "coll=all_reduce prio=equal scenario=gemm_coll"},
                              {"compute_slowdown", 0.1},
                              {"comm_slowdown", 0.2}});
  struct Row {
    const char* name;
    int mnk;
    double compute, wait;
  };
  // Two shapes: 100 and 300 us (mean over kinds), waits 30 and -10 (0: noise) and 500.
  const Row rows[] = {{"overlap/blocking_wait/all_reduce/a", 128, 90, 30},
                      {"overlap/blocking_wait/all_gather/a", 128, 110, -10},
                      {"overlap/blocking_wait/all_reduce/b", 512, 300, 500}};
  for (const Row& r : rows)
    ov["benchmarks"].push_back(
        {{"name", r.name},
         {"run_type", "iteration"},
         {"label", "coll=all_reduce prio=equal order=sequence scenario=blocking_wait"},
         {"t_compute_mean_us", r.compute},
         {"t_comm_us", 20.0},
         {"wait_us", r.wait},
         {"m", r.mnk},
         {"n", r.mnk},
         {"k", r.mnk}});
  write_json(tmp("overlap-wait.json"), ov);
  CalibrateOptions o;
  o.base = test::synthetic_machine();
  o.overlap = {tmp("overlap-wait.json")};
  const Calibration cal = calibrate(o);
  ASSERT_EQ(cal.machine.blocking_wait.size(), 2u);
  EXPECT_DOUBLE_EQ(cal.machine.blocking_wait[0].compute_us, 100);
  EXPECT_DOUBLE_EQ(cal.machine.blocking_wait[0].wait_us, 10);  // (30 - 10) / 2
  EXPECT_DOUBLE_EQ(cal.machine.blocking_wait[1].compute_us, 300);
  EXPECT_DOUBLE_EQ(cal.machine.blocking_wait[1].wait_us, 500);
  EXPECT_NEAR(cal.machine.compute_slowdown, 0.1, 1e-12);  // the interference's rows unchanged
  EXPECT_EQ(cal.report["interference"]["rows"], 1);
  EXPECT_EQ(cal.report["blocking_wait"]["rows"].size(), 3u);
  EXPECT_TRUE(cal.machine.sources.contains("interference.blocking_wait"));
  // Written and read back; without blocking_wait rows the base's (empty) table stays.
  const Machine back = machine_from_json(machine_to_json(cal.machine), "round trip");
  ASSERT_EQ(back.blocking_wait.size(), 2u);
  EXPECT_DOUBLE_EQ(back.blocking_wait[1].wait_us, 500);
  EXPECT_DOUBLE_EQ(back.blocking_wait_us(200), 10 + (500 - 10) * 0.5);
  json bad = machine_to_json(cal.machine);
  bad["interference"]["blocking_wait"][1]["compute_us"] = 50;
  try {
    machine_from_json(bad, "bad");
    FAIL() << "no error for a table whose compute time does not grow";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("compute_us' must grow"), std::string::npos) << e.what();
  }
  json only = {{"context", context(4, 4, 2)}, {"benchmarks", {ov["benchmarks"][0]}}};
  write_json(tmp("overlap-no-wait.json"), only);
  o.overlap = {tmp("overlap-no-wait.json")};
  EXPECT_TRUE(calibrate(o).machine.blocking_wait.empty());
}
