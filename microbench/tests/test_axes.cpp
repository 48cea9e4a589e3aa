// Unit tests: typed sweep axes (harness/axes.hpp): values and ranges of each type, the exact
// one-line errors, the same checks through the command line and a sweep file, and the order and
// count of the points enumerated from them.
// Run: ctest -R mb.unit (or ovb-microbench-tests --gtest_filter='Axes*').
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "harness/axes.hpp"
#include "harness/gemm_cases.hpp"
#include "harness/sweep.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {
namespace {

// The message of the UsageError that `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

enum class Color { red, green };

TEST(Axes, Int64ValuesRangesAndWords) {
  Axis<std::int64_t> a = int64_axis("--n", "", {"3"}, -5, 100, {{"default", -1}});
  EXPECT_EQ(a.values(), (std::vector<std::int64_t>{3}));  // the default, parsed at declaration
  a.set({"7", "1:4", "0:12:5", "-5", "default", "100"});
  EXPECT_EQ(a.values(), (std::vector<std::int64_t>{7, 1, 2, 3, 4, 0, 5, 10, -5, -1, 100}));
  a.set({"9:9"});
  EXPECT_EQ(a.values(), (std::vector<std::int64_t>{9}));
}

TEST(Axes, Int64ErrorsNameTheFlagAndTheValue) {
  Axis<std::int64_t> a = int64_axis("--n", "", {}, 0, 10, {{"default", -1}, {"-1", -1}});
  EXPECT_EQ(error_of([&] { a.set({"x"}); }), "--n: 'x' is neither 'default' nor an integer");
  EXPECT_EQ(error_of([&] { a.set({"11"}); }), "--n: '11' is outside 0..10");
  EXPECT_EQ(error_of([&] { a.set({"2", "-3"}); }), "--n: '-3' is outside 0..10");
  EXPECT_EQ(error_of([&] { a.set({"5:1"}); }),
            "--n: '5:1' is not a range FIRST:LAST[:STEP] with FIRST <= LAST and STEP >= 1");
  EXPECT_EQ(error_of([&] { a.set({"1:5:0"}); }),
            "--n: '1:5:0' is not a range FIRST:LAST[:STEP] with FIRST <= LAST and STEP >= 1");
  EXPECT_EQ(error_of([&] { a.set({"1::5"}); }),
            "--n: '1::5' is not a range FIRST:LAST[:STEP] of integers");
  EXPECT_EQ(error_of([&] { a.set({"1:2:3:4"}); }),
            "--n: '1:2:3:4' is not a range FIRST:LAST[:STEP] of integers");
  EXPECT_EQ(error_of([&] { a.set({"0:11"}); }), "--n: '0:11' is outside 0..10");
  EXPECT_EQ(error_of([&] { a.set({"99999999999999999999"}); }),
            "--n: '99999999999999999999' is neither 'default' nor an integer");
  Axis<std::int64_t> wide = int64_axis("--w", "", {}, 0, 1'000'000'000);
  EXPECT_EQ(error_of([&] { wide.set({"0:1000000000"}); }),
            "--w: '0:1000000000' has more than 100000 values");
  EXPECT_EQ(error_of([&] { wide.set({""}); }), "--w: '' is not an integer");
  // A failed set leaves the values as they were.
  a.set({"4"});
  EXPECT_THROW(a.set({"1", "bad"}), UsageError);
  EXPECT_EQ(a.values(), (std::vector<std::int64_t>{4}));
}

TEST(Axes, BytesValuesAndGeometricRanges) {
  Axis<std::size_t> b = bytes_axis("--sizes", "", {"16M"});
  EXPECT_EQ(b.values(), (std::vector<std::size_t>{16u << 20}));
  b.set({"8", "64K", "1K:16K:4", "1M:4M"});
  EXPECT_EQ(b.values(), (std::vector<std::size_t>{8, 64u << 10, 1u << 10, 4u << 10, 16u << 10,
                                                  1u << 20, 2u << 20, 4u << 20}));
  EXPECT_EQ(error_of([&] { b.set({"1Q"}); }),
            "--sizes: '1Q' is not a byte count (examples: 8, 64K, 1M, 2G) or a range "
            "MIN:MAX[:FACTOR]");
  EXPECT_EQ(error_of([&] { b.set({"4K:1K"}); }),
            "--sizes: '4K:1K' is not a range: the maximum size 1024 is below the minimum 4096");
  EXPECT_EQ(error_of([&] { b.set({"1K:4K:1"}); }),
            "--sizes: '1K:4K:1' is not a range: the size step factor must be at least 2, got 1");
}

TEST(Axes, EnumBoolAndString) {
  Axis<Color> c =
      enum_axis<Color>("--colors", "", {"red"}, {{"red", Color::red}, {"green", Color::green}});
  EXPECT_EQ(c.values(), (std::vector<Color>{Color::red}));
  c.set({"green", "red", "green"});
  EXPECT_EQ(c.values(), (std::vector<Color>{Color::green, Color::red, Color::green}));
  EXPECT_EQ(error_of([&] { c.set({"blue"}); }), "--colors: 'blue' is not one of red, green");

  Axis<bool> b = bool_axis("--in-place", "", {"0", "1"});
  EXPECT_EQ(b.values(), (std::vector<bool>{false, true}));
  b.set({"true", "false"});
  EXPECT_EQ(b.values(), (std::vector<bool>{true, false}));
  EXPECT_EQ(error_of([&] { b.set({"2"}); }), "--in-place: '2' is not one of 0, 1, false, true");

  Axis<std::string> s = string_axis("--tag", "", {"any"}, [](const std::string& v) {
    return v.size() > 3 ? "is longer than 3 characters" : "";
  });
  s.set({"a", "abc"});
  EXPECT_EQ(s.values(), (std::vector<std::string>{"a", "abc"}));
  EXPECT_EQ(error_of([&] { s.set({"abcd"}); }), "--tag: 'abcd' is longer than 3 characters");
}

TEST(Axes, GemmShapesAreParsedOnceAsTheyAreRead) {
  GemmSelection sel;
  sel.shapes.set({"8x16x32:tn", "4x4x4"});
  ASSERT_EQ(sel.shapes.size(), 2u);
  EXPECT_EQ(sel.shapes.values()[0], (GemmShape{8, 16, 32, Trans::t, Trans::n}));
  EXPECT_EQ(error_of([&] { sel.shapes.set({"1x2"}); }),
            "--shapes: GEMM shape '1x2' is not MxNxK or MxNxK:TATB (e.g. 4096x4096x4096, "
            "4096x1024x512:nt)");
  EXPECT_EQ(error_of([&] { sel.dtypes.set({"fp64"}); }),
            "--dtypes: 'fp64' is not one of default, fp32, tf32, fp16, bf16, fp8");
}

TEST(Axes, TheCommandLineAndSweepFilesGoThroughTheAxis) {
  Axis<std::size_t> sizes = bytes_axis("--sizes", "", {"16M"});
  Axis<std::int64_t> n = int64_axis("--n", "", {"1"}, 0, 10);
  CLI::App app;
  sizes.add_to(app);
  n.add_to(app);
  app.parse("--sizes 1K,2K --sizes 4K", false);
  EXPECT_EQ(sizes.values(), (std::vector<std::size_t>{1024, 2048, 4096}));
  EXPECT_EQ(n.values(), (std::vector<std::int64_t>{1}));  // untouched: the default

  const std::string path = ::testing::TempDir() + "/ovb_axes_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"ovb-x": {"sizes": "1M", "n": [2, "4:6"]}})";
  apply_sweep(app, "ovb-x", path);
  EXPECT_EQ(sizes.values(), (std::vector<std::size_t>{1024, 2048, 4096}));  // the command line won
  EXPECT_EQ(n.values(), (std::vector<std::int64_t>{2, 4, 5, 6}));

  CLI::App bad;
  Axis<std::int64_t> m = int64_axis("--n", "", {"1"}, 0, 10);
  m.add_to(bad);
  std::ofstream(path) << R"({"ovb-x": {"n": [3, 12]}})";
  EXPECT_EQ(error_of([&] { apply_sweep(bad, "ovb-x", path); }),
            "sweep file " + path + ": ovb-x.n: --n: '12' is outside 0..10");
  CLI::App fresh;
  Axis<std::int64_t> k = int64_axis("--n", "", {"1"}, 0, 10);
  k.add_to(fresh);
  EXPECT_EQ(error_of([&] { fresh.parse("--n 1,x", false); }), "--n: 'x' is not an integer");
  std::remove(path.c_str());
}

TEST(Axes, PointsAreEveryCombinationFirstAxisSlowest) {
  Axis<std::int64_t> a = int64_axis("--a", "", {"1:2"}, 0, 10);
  Axis<Color> c =
      enum_axis<Color>("--c", "", {"red", "green"}, {{"red", Color::red}, {"green", Color::green}});
  const auto d = Axis<std::string>::derived("d", {"x", "y", "z"});
  std::vector<std::string> seen;
  for_each_point({&a, &c, &d}, [&](const Point& p) {
    seen.push_back(std::to_string(a.at(p)) + (c.at(p) == Color::red ? "r" : "g") + d.at(p));
  });
  const std::vector<std::string> expect{"1rx", "1ry", "1rz", "1gx", "1gy", "1gz",
                                        "2rx", "2ry", "2rz", "2gx", "2gy", "2gz"};
  EXPECT_EQ(seen, expect);

  // No points when an axis is empty; one when there are no axes.
  const auto none = Axis<int>::derived("none", {});
  int count = 0;
  for_each_point({&a, &none}, [&](const Point&) { ++count; });
  EXPECT_EQ(count, 0);
  for_each_point({}, [&](const Point&) { ++count; });
  EXPECT_EQ(count, 1);

  // Reading an axis the sweep does not contain is a bug, not a silent default.
  for_each_point({&a}, [&](const Point& p) { EXPECT_THROW(c.at(p), std::logic_error); });
}

}  // namespace
}  // namespace ovb::mb
