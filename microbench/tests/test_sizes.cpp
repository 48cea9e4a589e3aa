// Unit tests: byte counts, size sweeps, knobs and lists (harness/sizes.hpp).
// Run: ctest -R mb.unit (or build/.../microbench/tests/ovb-microbench-tests).
#include <gtest/gtest.h>

#include "harness/comm_options.hpp"
#include "harness/sizes.hpp"
#include "ovb/error.hpp"

namespace ovb::mb {
namespace {

TEST(Sizes, ParsesBinarySuffixesLikeNcclTests) {
  EXPECT_EQ(parse_bytes("8"), 8u);
  EXPECT_EQ(parse_bytes("64K"), 64u * 1024);
  EXPECT_EQ(parse_bytes("1M"), 1u << 20);
  EXPECT_EQ(parse_bytes("2G"), 2ull << 30);
  EXPECT_EQ(parse_bytes("16MB"), 16u << 20);
  EXPECT_EQ(parse_bytes("3k"), 3u * 1024);
}

TEST(Sizes, RejectsMalformedSizes) {
  for (const char* bad : {"", "K", "-1", "1.5M", "12Q", "1MM", "99999999999999999999999"})
    EXPECT_THROW(parse_bytes(bad), UsageError) << bad;
  try {
    parse_bytes("abc", "--min-bytes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--min-bytes 'abc'"), std::string::npos) << e.what();
  }
}

TEST(Sizes, SweepsLikeNcclTests) {
  EXPECT_EQ(size_sweep(8, 128, 2), (std::vector<std::size_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(size_sweep(1024, 5000, 4), (std::vector<std::size_t>{1024, 4096}));
  EXPECT_EQ(size_sweep(64, 64, 1), (std::vector<std::size_t>{64}));
  EXPECT_THROW(size_sweep(0, 8, 2), UsageError);
  EXPECT_THROW(size_sweep(16, 8, 2), UsageError);
  EXPECT_THROW(size_sweep(8, 16, 1), UsageError);
  // No overflow at the top of the range.
  const auto top = size_sweep(1ull << 62, ~0ull, 2);
  EXPECT_EQ(top.size(), 2u);
}

// NCCL knobs are int64 axes with the word "default" (harness/comm_options.hpp).
TEST(Sizes, Knobs) {
  auto knob = [](const std::string& s) {
    Axis<std::int64_t> a = knob_axis("--x", "");
    a.set({s});
    return a.values().at(0);
  };
  EXPECT_EQ(knob("default"), -1);
  EXPECT_EQ(knob("-1"), -1);
  EXPECT_EQ(knob("8"), 8);
  EXPECT_THROW(knob("eight"), UsageError);
  EXPECT_THROW(knob(""), UsageError);
  EXPECT_EQ(knob_text(-1), "default");
  EXPECT_EQ(knob_text(4), "4");
}

TEST(Sizes, ListsAndHumanBytes) {
  EXPECT_EQ(split_list("a,,b,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_list("4096x1024x8", 'x'), (std::vector<std::string>{"4096", "1024", "8"}));
  EXPECT_TRUE(split_list("").empty());
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(3ull << 30), "3 GiB");
}

}  // namespace
}  // namespace ovb::mb
