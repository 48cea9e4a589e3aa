// Unit tests: sweep files applied to CLI11 options (harness/sweep.hpp), and the argument split
// and JSON clean-up of the rank-aware reporting (harness/reporting.hpp).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/env.hpp"
#include "harness/gbench_compat.hpp"
#include "harness/sweep.hpp"
#include "harness/reporting.hpp"
#include "ovb/cli.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {
namespace {

struct Opts {
  std::vector<std::string> dtypes{"default"};
  int warmup = 3;
  double min_time = 0;
  bool flag = false;
};

void add(CLI::App& app, Opts& o) {
  app.add_option("--dtypes", o.dtypes)
      ->delimiter(',')
      ->check(CLI::IsMember({"default", "bf16", "fp32"}));
  app.add_option("--warmup", o.warmup)->check(ovb::non_negative());
  app.add_option("--min-time", o.min_time);
  app.add_flag("--flag", o.flag);
}

std::string write_sweep(const std::string& body) {
  const std::string path =
      ::testing::TempDir() + "/ovb_sweep_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << body;
  return path;
}

void parse(CLI::App& app, std::vector<std::string> args) {
  std::vector<char*> argv;
  std::string prog = "ovb-x";
  argv.push_back(prog.data());
  for (auto& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

TEST(Preset, FillsUnsetOptionsAndTheCommandLineWins) {
  const std::string path = write_sweep(
      R"({"ovb-x": {"dtypes": ["bf16", "fp32"], "warmup": 7, "min-time": 0.25, "flag": true,
                    "_note": "ignored"}})");
  CLI::App app;
  Opts o;
  add(app, o);
  parse(app, {"--warmup", "1"});
  apply_sweep(app, "ovb-x", path);
  EXPECT_EQ(o.dtypes, (std::vector<std::string>{"bf16", "fp32"}));
  EXPECT_EQ(o.warmup, 1);
  EXPECT_DOUBLE_EQ(o.min_time, 0.25);
  EXPECT_TRUE(o.flag);
}

TEST(Sweep, TheBackendsSectionWinsOverTheProgramsAndTheCommandLineOverBoth) {
  const std::string path = write_sweep(
      R"({"ovb-x": {"dtypes": ["bf16"], "warmup": 7, "min-time": 0.25},
          "ovb-x@host": {"dtypes": ["fp32"], "warmup": 2}})");
  {
    CLI::App app;
    Opts o;
    add(app, o);
    parse(app, {"--warmup", "1"});
    apply_sweep(app, "ovb-x", path, "host");
    EXPECT_EQ(o.dtypes, (std::vector<std::string>{"fp32"}));
    EXPECT_EQ(o.warmup, 1);
    EXPECT_DOUBLE_EQ(o.min_time, 0.25);  // not in the host section: the program's
  }
  {
    CLI::App app;
    Opts o;
    add(app, o);
    parse(app, {});
    apply_sweep(app, "ovb-x", path, "cuda");  // no ovb-x@cuda: the program's section alone
    EXPECT_EQ(o.dtypes, (std::vector<std::string>{"bf16"}));
    EXPECT_EQ(o.warmup, 7);
  }
}

TEST(Reporting, TheDebugBuildWarningBecomesANote) {
  const std::string in =
      "Run on (2 X 2000 MHz CPU s)\n"
      "***WARNING*** Library was built as DEBUG. Timings may be affected.\n"
      "---\n";
  const std::string out = debug_note(in);
  EXPECT_EQ(out.find("***WARNING*** Library was built as DEBUG"), std::string::npos) << out;
  EXPECT_NE(out.find("note: Google Benchmark was built without NDEBUG"), std::string::npos) << out;
  EXPECT_NE(out.find("Run on (2 X 2000 MHz CPU s)\n"), std::string::npos) << out;
  EXPECT_EQ(debug_note("a\nb\n"), "a\nb\n");
}

TEST(Reporting, EveryCaseErroredOnlyWhenNoCaseWasMeasured) {
  RunRecord ok, bad, agg;
  ok.name = "gemm/fp32/8x8x8";
  bad.name = "gemm/bf16/8x8x8";
  bad.error = true;
  bad.error_message = "the host backend's GEMM supports fp32 only, not bf16";
  agg.aggregate = true;
  EXPECT_EQ(every_case_errored({}), "");
  EXPECT_EQ(every_case_errored({ok, bad}), "");
  EXPECT_EQ(every_case_errored({bad, ok}), "");
  const std::string all = every_case_errored({bad, bad, agg});
  EXPECT_NE(all.find("every one of the 2 benchmark case(s)"), std::string::npos) << all;
  EXPECT_NE(all.find("gemm/bf16/8x8x8: the host backend's GEMM supports fp32 only"),
            std::string::npos)
      << all;
}

TEST(Preset, ErrorsNameTheFileAndKey) {
  auto fails = [](const std::string& body, const std::string& needle) {
    const std::string path = write_sweep(body);
    CLI::App app;
    Opts o;
    add(app, o);
    parse(app, {});
    try {
      apply_sweep(app, "ovb-x", path);
      ADD_FAILURE() << "no error for " << body;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails(R"({"ovb-y": {}})", "no \"ovb-x\" section");
  fails(R"({"ovb-x": {"no-such": 1}})", "ovb-x.no-such: no such option");
  fails(R"({"ovb-x": {"dtypes": ["fp64"]}})", "ovb-x.dtypes");
  fails(R"({"ovb-x": {"warmup": {"a": 1}}})", "ovb-x.warmup");
  fails(R"({"ovb-x": )", "ovb_sweep_");  // malformed JSON: read_json names the file
  CLI::App app;
  Opts o;
  add(app, o);
  EXPECT_THROW(apply_sweep(app, "ovb-x", "/nonexistent/p.json"), UsageError);
}

TEST(Preset, NamesResolveToThePresetFolder) {
  EXPECT_EQ(sweep_path("./mine.json"), "./mine.json");
  EXPECT_EQ(sweep_path("sub/dir"), "sub/dir");
  const std::string q = sweep_path("quick");
  EXPECT_EQ(q.substr(q.size() - 18), "/sweeps/quick.json");
  setenv("OVB_SWEEP_DIR", "/tmp/p", 1);
  EXPECT_EQ(sweep_path("full"), "/tmp/p/full.json");
  unsetenv("OVB_SWEEP_DIR");
}

TEST(Reporting, SplitsOwnAndGoogleBenchmarkFlags) {
  std::vector<std::string> args{"prog",
                                "--dtypes",
                                "bf16",
                                "--benchmark_filter=gemm",
                                "--benchmark_out=/tmp/x.json",
                                "--benchmark_out_format=json",
                                "--benchmark_format=json",
                                "--benchmark_counters_tabular=true",
                                "--benchmark_repetitions=3"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const SplitArgs s = split_args(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(s.own, (std::vector<std::string>{"prog", "--dtypes", "bf16"}));
  EXPECT_EQ(s.gbench, (std::vector<std::string>{"prog", "--benchmark_filter=gemm",
                                                "--benchmark_repetitions=3"}));
  EXPECT_EQ(s.out.out_path, "/tmp/x.json");
  EXPECT_EQ(s.out.format, "json");
  EXPECT_TRUE(s.out.tabular);

  for (std::string bad : {"--benchmark_out_format=csv", "--benchmark_format=tsv",
                          "--benchmark_enable_random_interleaving=true", "--benchmark_out="}) {
    std::string prog = "prog";
    char* v[] = {prog.data(), bad.data()};
    EXPECT_THROW(split_args(2, v), UsageError) << bad;
  }
}

TEST(Reporting, NanAndInfinityBecomeNullOutsideStrings) {
  const std::string in =
      R"({"a": NaN, "b": -NaN, "c": Infinity, "d": -Infinity, "label": "x NaN \" Infinity", "e": 1})";
  const nlohmann::json j = nlohmann::json::parse(json_without_nan(in));
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_TRUE(j["d"].is_null());
  EXPECT_EQ(j["label"], "x NaN \" Infinity");
  EXPECT_EQ(j["e"], 1);
}

}  // namespace
}  // namespace ovb::mb

// A repetition after a reported call is reported too (Google Benchmark reuses the first
// repetition's iteration count and reports it whatever its time): the slot remembers that for
// its benchmark only, so the timed loop tops up every repetition to 20 samples.
TEST(Reporting, ThePreparedSlotRemembersAReportedCallForItsBenchmarkOnly) {
  ovb::mb::PreparedSlot slot;
  const std::function<std::unique_ptr<int>()> make = [] { return std::make_unique<int>(1); };
  slot.get<int>("a", make);
  EXPECT_FALSE(slot.reported());
  slot.set_reported();
  slot.get<int>("a", make);  // the next repetition of the same benchmark
  EXPECT_TRUE(slot.reported());
  slot.get<int>("b", make);  // another benchmark
  EXPECT_FALSE(slot.reported());
}

// The run record of both Google Benchmark generations (harness/gbench_compat.hpp): fake records
// with only the old or only the new members, and the installed version's own record.
namespace ovb::mb {
namespace {
struct RunBefore18 {
  bool error_occurred = false;
  std::string error_message;
};
struct RunFrom18 {
  enum Skipped { NotSkipped = 0, SkippedWithMessage, SkippedWithError };
  Skipped skipped = NotSkipped;
  std::string skip_message;
};

TEST(GbenchCompat, ReadsTheSkipOfEitherGeneration) {
  RunBefore18 old_run;
  EXPECT_FALSE(run_skipped(old_run));
  old_run = {true, "no GPU"};
  EXPECT_TRUE(run_skipped(old_run));
  EXPECT_EQ(run_skip_message(old_run), "no GPU");

  RunFrom18 new_run;
  EXPECT_FALSE(run_skipped(new_run));
  new_run.skipped = RunFrom18::SkippedWithError;
  new_run.skip_message = "size not divisible";
  EXPECT_TRUE(run_skipped(new_run));
  EXPECT_EQ(run_skip_message(new_run), "size not divisible");
  new_run.skipped = RunFrom18::SkippedWithMessage;
  EXPECT_TRUE(run_skipped(new_run));

  benchmark::BenchmarkReporter::Run installed;  // not skipped by default
  EXPECT_FALSE(run_skipped(installed));
  EXPECT_EQ(run_skip_message(installed), "");
}
}  // namespace
}  // namespace ovb::mb
