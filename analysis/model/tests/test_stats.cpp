// Line fits, ranks with ties, Spearman's rho, relative errors.
#include <gtest/gtest.h>

#include "ovb/error.hpp"
#include "ovb/model/stats.hpp"

using namespace ovb::model;

TEST(Stats, LineFitRecoversAnExactLine) {
  const LineFit f = fit_line({1, 2, 3, 4}, {7, 9, 11, 13});
  EXPECT_DOUBLE_EQ(f.intercept, 5);
  EXPECT_DOUBLE_EQ(f.slope, 2);
  ASSERT_TRUE(f.r2);
  EXPECT_DOUBLE_EQ(*f.r2, 1);
  EXPECT_DOUBLE_EQ(f.max_rel_err, 0);
  EXPECT_FALSE(f.through_origin);
}

TEST(Stats, NegativeInterceptIsRefittedThroughTheOrigin) {
  const LineFit f = fit_line({1, 2, 3}, {0.5, 2.5, 4.5});  // best line: -1.5 + 2x
  EXPECT_TRUE(f.through_origin);
  EXPECT_DOUBLE_EQ(f.intercept, 0);
  EXPECT_DOUBLE_EQ(f.slope, (0.5 + 5 + 13.5) / 14);  // sum xy / sum xx
  EXPECT_LT(*f.r2, 1);
  EXPECT_GT(f.max_rel_err, 0);
  EXPECT_THROW(fit_line({}, {}), ovb::Error);
  EXPECT_THROW(fit_line({0, 0}, {1, 2}), ovb::Error);
}

TEST(Stats, WeightedFitFollowsTheHeavyPoints) {
  // Three points off a line: with all the weight on the first two, the line goes through them.
  const LineFit f = fit_line({1, 2, 3}, {4, 5, 9}, {1e6, 1e6, 1e-6});
  EXPECT_NEAR(f.intercept, 3, 1e-5);
  EXPECT_NEAR(f.slope, 1, 1e-5);
  const LineFit u = fit_line({1, 2, 3}, {4, 5, 9});
  EXPECT_NEAR(u.slope, 2.5, 1e-12);  // unweighted: sxy / sxx = 5 / 2
  EXPECT_NEAR(u.intercept, 1, 1e-12);
  EXPECT_THROW(fit_line({1, 2}, {1, 2}, {1}), ovb::Error);
}

TEST(Stats, RanksAndSpearman) {
  EXPECT_EQ(ranks({10, 30, 20, 20}), (std::vector<double>{1, 4, 2.5, 2.5}));
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // rho = 1 - 6 sum d^2 / (n (n^2 - 1)) without ties: d = (0, 1, -1, 0, 0) -> 1 - 12/120.
  EXPECT_NEAR(*spearman({1, 2, 3, 4, 5}, {1, 3, 2, 4, 5}), 0.9, 1e-12);
  EXPECT_FALSE(spearman({1}, {1}));
  EXPECT_FALSE(spearman({1, 1}, {1, 2}));
  EXPECT_DOUBLE_EQ(error_pct(110, 100), 10);
}
