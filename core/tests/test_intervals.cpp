// Interval algebra and trace overlap metrics on hand-made intervals.
#include <gtest/gtest.h>

#include "ovb/intervals.hpp"

using ovb::Interval;

TEST(Intervals, UnionMergesNestedTouchingAndOverlapping) {
  const auto u = ovb::interval_union({{5, 7}, {0, 2}, {1, 3}, {3, 4}, {10, 20}, {12, 15}, {8, 8}});
  ASSERT_EQ(u.size(), 3u);
  EXPECT_DOUBLE_EQ(u[0].begin, 0);
  EXPECT_DOUBLE_EQ(u[0].end, 4);   // [0,2]+[1,3]+[3,4] (touching merges)
  EXPECT_DOUBLE_EQ(u[1].begin, 5);
  EXPECT_DOUBLE_EQ(u[1].end, 7);
  EXPECT_DOUBLE_EQ(u[2].begin, 10);  // [12,15] nested; [8,8] empty dropped
  EXPECT_DOUBLE_EQ(u[2].end, 20);
  EXPECT_DOUBLE_EQ(ovb::total_length(u), 16);
}

TEST(Intervals, Intersection) {
  const auto a = ovb::interval_union({{0, 10}, {20, 30}});
  const auto b = ovb::interval_union({{5, 25}, {28, 40}});
  EXPECT_DOUBLE_EQ(ovb::intersection_length(a, b), 5 + 5 + 2);
  EXPECT_DOUBLE_EQ(ovb::intersection_length(a, {}), 0);
  EXPECT_DOUBLE_EQ(ovb::intersection_length(b, a), 12);
}

TEST(Intervals, TraceOverlapAcrossManyStreams) {
  // Compute on two streams: [0,10] and [8,14]; comm on two streams: [5,12], [16,20], [18,19];
  // a memcpy [14,15]. Nothing in [15,16].
  const auto r = ovb::trace_overlap({{0, 10}, {8, 14}}, {{5, 12}, {16, 20}, {18, 19}}, {{14, 15}});
  EXPECT_DOUBLE_EQ(r.span, 20);
  EXPECT_DOUBLE_EQ(r.compute, 14);
  EXPECT_DOUBLE_EQ(r.comm, 7 + 4);
  EXPECT_DOUBLE_EQ(r.memory, 1);
  EXPECT_DOUBLE_EQ(r.busy, 19);
  EXPECT_DOUBLE_EQ(r.idle, 1);
  EXPECT_DOUBLE_EQ(r.overlapped_comm, 7);
  EXPECT_DOUBLE_EQ(r.exposed_comm, 4);
  EXPECT_NEAR(r.overlap_pct, 100.0 * 7 / 11, 1e-12);
}

TEST(Intervals, NoCommGivesZeroPercentAndEmptyGivesZeros) {
  const auto r = ovb::trace_overlap({{0, 1}}, {}, {});
  EXPECT_DOUBLE_EQ(r.overlap_pct, 0);
  EXPECT_DOUBLE_EQ(r.span, 1);
  const auto e = ovb::trace_overlap({}, {}, {});
  EXPECT_DOUBLE_EQ(e.span, 0);
}
