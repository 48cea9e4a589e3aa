// Grid rank/coordinate mapping, strides, group membership and validation messages.
#include <gtest/gtest.h>

#include "ovb/error.hpp"
#include "ovb/grid.hpp"

using ovb::Dim;
using ovb::Grid;
using ovb::GridShape;

static GridShape shape(int gx, int gy, int gz, int gd, const char* order = "x,y,z") {
  GridShape s;
  s.gx = gx; s.gy = gy; s.gz = gz; s.gdata = gd;
  s.order = GridShape::parse_order(order);
  return s;
}

TEST(Grid, SpecFormulaForDefaultOrder) {
  // x = r % Gx; y = (r / Gx) % Gy; z = (r / (Gx*Gy)) % Gz; d = r / (Gx*Gy*Gz)
  for (auto s : {shape(2, 2, 2, 1), shape(2, 3, 1, 2), shape(4, 1, 2, 3), shape(1, 1, 1, 5)}) {
    Grid g(s, s.world());
    for (int r = 0; r < s.world(); ++r) {
      const auto c = g.coords(r);
      EXPECT_EQ(c[Dim::x], r % s.gx);
      EXPECT_EQ(c[Dim::y], (r / s.gx) % s.gy);
      EXPECT_EQ(c[Dim::z], (r / (s.gx * s.gy)) % s.gz);
      EXPECT_EQ(c[Dim::data], r / (s.gx * s.gy * s.gz));
      EXPECT_EQ(g.rank_of(c), r);
    }
  }
}

TEST(Grid, StridesAreTheInnerProduct) {
  Grid g(shape(2, 4, 3, 2), 48);
  EXPECT_EQ(g.stride(Dim::x), 1);
  EXPECT_EQ(g.stride(Dim::y), 2);
  EXPECT_EQ(g.stride(Dim::z), 8);
  EXPECT_EQ(g.stride(Dim::data), 24);
}

TEST(Grid, GroupsIn2x2x2) {
  Grid g(shape(2, 2, 2, 1), 8);
  EXPECT_EQ(g.group(Dim::x, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(g.group(Dim::y, 5), (std::vector<int>{5, 7}));
  EXPECT_EQ(g.group(Dim::z, 5), (std::vector<int>{1, 5}));
  EXPECT_EQ(g.group(Dim::data, 5), (std::vector<int>{5}));
  EXPECT_EQ(g.group_id(Dim::y, 7), g.group_id(Dim::y, 5));
  EXPECT_NE(g.group_id(Dim::y, 4), g.group_id(Dim::y, 5));
}

TEST(Grid, GroupsIn2x1x2x2) {
  Grid g(shape(2, 1, 2, 2), 8);
  EXPECT_EQ(g.group(Dim::x, 6), (std::vector<int>{6, 7}));
  EXPECT_EQ(g.group(Dim::y, 6), (std::vector<int>{6}));
  EXPECT_EQ(g.group(Dim::z, 6), (std::vector<int>{4, 6}));
  EXPECT_EQ(g.group(Dim::data, 6), (std::vector<int>{2, 6}));
}

TEST(Grid, EveryRankInExactlyOneGroupPerDim) {
  Grid g(shape(3, 2, 2, 2), 24);
  for (Dim d : ovb::kAllDims) {
    std::vector<int> seen(24, 0);
    for (int r = 0; r < 24; ++r)
      if (g.group_id(d, r) == r)  // r leads its group
        for (int m : g.group(d, r)) ++seen[static_cast<std::size_t>(m)];
    for (int r = 0; r < 24; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], 1) << "dim " << ovb::name_of(d);
  }
}

TEST(Grid, PermutedOrderYFastest) {
  Grid g(shape(2, 4, 2, 1, "y,x,z"), 16);
  EXPECT_EQ(g.stride(Dim::y), 1);
  EXPECT_EQ(g.stride(Dim::x), 4);
  EXPECT_EQ(g.stride(Dim::z), 8);
  EXPECT_EQ(g.stride(Dim::data), 16);
  EXPECT_EQ(g.group(Dim::y, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(g.group(Dim::x, 5), (std::vector<int>{1, 5}));
  const auto c = g.coords(13);  // 13 = y 1 + x 1*4 + z 1*8
  EXPECT_EQ(c[Dim::y], 1);
  EXPECT_EQ(c[Dim::x], 1);
  EXPECT_EQ(c[Dim::z], 1);
}

TEST(Grid, PermutedOrderZFastest) {
  Grid g(shape(2, 2, 3, 1, "z,y,x"), 12);
  EXPECT_EQ(g.stride(Dim::z), 1);
  EXPECT_EQ(g.stride(Dim::y), 3);
  EXPECT_EQ(g.stride(Dim::x), 6);
  for (int r = 0; r < 12; ++r) EXPECT_EQ(g.rank_of(g.coords(r)), r);
}

static std::string error_of(const GridShape& s, int world) {
  try {
    Grid g(s, world);
  } catch (const ovb::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Grid, RejectsWrongDataFactorNamingIt) {
  const auto msg = error_of(shape(2, 2, 2, 1), 16);
  EXPECT_NE(msg.find("does not match the world size 16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Gdata must be 2"), std::string::npos) << msg;
}

TEST(Grid, RejectsTensorProductThatDoesNotDivide) {
  const auto msg = error_of(shape(2, 3, 1, 1), 8);
  EXPECT_NE(msg.find("Gx*Gy*Gz = 6 does not divide 8"), std::string::npos) << msg;
}

TEST(Grid, RejectsNonPositiveFactor) {
  const auto msg = error_of(shape(2, 0, 1, 1), 2);
  EXPECT_NE(msg.find("Gy must be >= 1, got 0"), std::string::npos) << msg;
}

TEST(Grid, RejectsAProductThatOverflowsAnInt) {
  // 65536 * 65536 wraps to 0 in 32 bits: without the check this divided by zero.
  const auto msg = error_of(shape(65536, 65536, 1, 1), 4);
  EXPECT_NE(msg.find("larger than any world size"), std::string::npos) << msg;
  EXPECT_THROW((void)shape(1 << 16, 1 << 15, 1, 1).world(), ovb::UsageError);
  EXPECT_EQ(shape(1 << 15, 1 << 15, 1, 1).world(), 1 << 30);
}

TEST(Grid, ParseAndPrint) {
  const auto s = GridShape::parse("4x2x1x3");
  EXPECT_EQ(s.gx, 4);
  EXPECT_EQ(s.gy, 2);
  EXPECT_EQ(s.gz, 1);
  EXPECT_EQ(s.gdata, 3);
  EXPECT_EQ(s.str(), "4x2x1x3");
  EXPECT_EQ(GridShape::parse("2x2x2x1:y,x,z").str(), "2x2x2x1:y,x,z");
  EXPECT_THROW(GridShape::parse("2x2x2"), ovb::UsageError);
  EXPECT_THROW(GridShape::parse("2x2xax1"), ovb::UsageError);
  EXPECT_THROW(GridShape::parse("2x2x2x1x1"), ovb::UsageError);
  EXPECT_THROW(GridShape::parse_order("x,x,z"), ovb::UsageError);
  EXPECT_THROW(GridShape::parse_order("x,y"), ovb::UsageError);
  EXPECT_THROW(GridShape::parse_order("x,y,w"), ovb::UsageError);
}
