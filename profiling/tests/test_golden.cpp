// Golden traces: small hand-written Kineto-style and suite-style traces whose overlap numbers were
// worked out by hand (golden/*.expected.json, reasoning in golden/README.md). Every key of the
// expected object is compared with the analysis; numbers exactly (up to 1e-9).
#include <gtest/gtest.h>

#include <string>

#include "analyze/analysis_report.hpp"
#include "ovb/error.hpp"
#include "test_util.hpp"

namespace {

using nlohmann::json;

// Compares `expected` with `actual` key by key, recursively; reports the path of a difference.
void expect_matches(const json& expected, const json& actual, const std::string& where) {
  if (expected.is_object()) {
    ASSERT_TRUE(actual.is_object()) << where;
    for (const auto& [k, v] : expected.items()) {
      ASSERT_TRUE(actual.contains(k)) << where << "." << k << " missing";
      expect_matches(v, actual[k], where + "." + k);
    }
  } else if (expected.is_array()) {
    ASSERT_TRUE(actual.is_array()) << where;
    ASSERT_EQ(expected.size(), actual.size()) << where << ": " << actual.dump();
    for (std::size_t i = 0; i < expected.size(); ++i)
      expect_matches(expected[i], actual[i], where + "[" + std::to_string(i) + "]");
  } else if (expected.is_number() && actual.is_number()) {
    EXPECT_NEAR(expected.get<double>(), actual.get<double>(), 1e-9) << where;
  } else {
    EXPECT_EQ(expected, actual) << where;
  }
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, AnalysisMatchesTheHandComputedNumbers) {
  const std::string base = std::string(OVB_GOLDEN_DIR) + "/" + GetParam();
  const auto reports = ovb::trace::analyze_traces({base + ".json"});
  const json analysis = ovb::trace::report_json(reports, {base + ".json"});
  const json expected = json::parse(ovb::trace::testing::read_file(base + ".expected.json"));
  ASSERT_EQ(analysis["ranks"].size(), 1u);
  expect_matches(expected, analysis["ranks"][0], GetParam());
}

INSTANTIATE_TEST_SUITE_P(Traces, Golden,
                         ::testing::Values("kineto_two_streams", "suite_host_rank1", "array_form",
                                           "gpt_kernels"));

TEST(GoldenSummary, MeanOverRanksAndCollectivesSummed) {
  const std::string dir = OVB_GOLDEN_DIR;
  const std::vector<std::string> paths = {dir + "/suite_host_rank1.json",
                                          dir + "/kineto_two_streams.json"};
  const auto reports = ovb::trace::analyze_traces(paths);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].rank, 0);  // sorted by rank, whatever the input order
  EXPECT_EQ(reports[1].rank, 1);
  const json a = ovb::trace::report_json(reports, paths);
  EXPECT_NEAR(a["summary"]["span_us"].get<double>(), (520.0 + 1300.0) / 2, 1e-9);
  EXPECT_NEAR(a["summary"]["exposed_comm_us"].get<double>(), (130.0 + 750.0) / 2, 1e-9);
  EXPECT_EQ(a["summary"]["ranks"], 2);
  EXPECT_EQ(a["summary"]["collectives"].size(), 4u);
  EXPECT_EQ(a["skipped"]["missing_fields"], 3);
  EXPECT_EQ(a["skipped"]["ignored"], 9);
}

TEST(GoldenSummary, TwoTracesOfOneRankAreRefused) {
  const std::string t = std::string(OVB_GOLDEN_DIR) + "/suite_host_rank1.json";
  try {
    ovb::trace::analyze_traces({t, t});
    FAIL();
  } catch (const ovb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("both of rank 1"), std::string::npos) << e.what();
  }
}

}  // namespace
