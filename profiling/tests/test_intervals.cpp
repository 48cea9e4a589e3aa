// Interval algebra and trace overlap metrics on hand-made intervals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "intervals.hpp"

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

TEST(Intervals, NestedAndTouchingAcrossStreams) {
  // A layer range [0,100] with nested kernels [10,20], [20,30] (touching), [25,26] (nested in the
  // nested one) unions to the layer alone. Kernels only, against comm on another stream: [30,40]
  // touches the [20,30] kernel, [100,110] starts where the layer ends. Nested and touching
  // intervals must neither double-count nor leave gaps, and touching is not overlapping.
  const auto compute = ovb::interval_union({{0, 100}, {10, 20}, {20, 30}, {25, 26}});
  ASSERT_EQ(compute.size(), 1u);
  EXPECT_DOUBLE_EQ(ovb::total_length(compute), 100);
  const auto r = ovb::trace_overlap({{10, 20}, {20, 30}, {25, 26}}, {{30, 40}, {100, 110}}, {});
  EXPECT_DOUBLE_EQ(r.span, 100);      // 10 .. 110
  EXPECT_DOUBLE_EQ(r.compute, 20);    // [10,30]
  EXPECT_DOUBLE_EQ(r.comm, 20);
  EXPECT_DOUBLE_EQ(r.busy, 40);       // [10,40] (touching merges) + [100,110]
  EXPECT_DOUBLE_EQ(r.idle, 60);
  EXPECT_DOUBLE_EQ(r.overlapped_comm, 0);  // touching is not overlapping
  EXPECT_DOUBLE_EQ(r.exposed_comm, 20);
}

TEST(Intervals, IntersectionAndDifferenceAsUnions) {
  const auto a = ovb::interval_union({{0, 10}, {20, 30}, {40, 50}});
  const auto b = ovb::interval_union({{5, 25}, {28, 29}, {45, 60}});
  const auto i = ovb::interval_intersection(a, b);
  ASSERT_EQ(i.size(), 4u);
  EXPECT_DOUBLE_EQ(i[0].begin, 5);
  EXPECT_DOUBLE_EQ(i[0].end, 10);
  EXPECT_DOUBLE_EQ(i[1].begin, 20);
  EXPECT_DOUBLE_EQ(i[1].end, 25);
  EXPECT_DOUBLE_EQ(i[2].begin, 28);
  EXPECT_DOUBLE_EQ(i[3].end, 50);
  const auto d = ovb::interval_difference(a, b);  // [0,5] [25,28] [29,30] [40,45]
  ASSERT_EQ(d.size(), 4u);
  EXPECT_DOUBLE_EQ(d[0].end, 5);
  EXPECT_DOUBLE_EQ(d[1].begin, 25);
  EXPECT_DOUBLE_EQ(d[1].end, 28);
  EXPECT_DOUBLE_EQ(d[2].begin, 29);
  EXPECT_DOUBLE_EQ(d[3].begin, 40);
  EXPECT_DOUBLE_EQ(d[3].end, 45);
  EXPECT_TRUE(ovb::interval_difference(a, a).empty());
  EXPECT_DOUBLE_EQ(ovb::total_length(ovb::interval_difference(a, {})), 30);
  EXPECT_TRUE(ovb::interval_intersection(a, {}).empty());
}

// Many streams of random integer intervals: every quantity equals a count of unit cells, which is
// computed independently of the interval code.
TEST(Intervals, ManyStreamsAgainstCellCount) {
  std::uint32_t seed = 12345;
  auto next = [&seed](int mod) {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<int>((seed >> 8) % static_cast<std::uint32_t>(mod));
  };
  constexpr int kCells = 400;
  for (int round = 0; round < 20; ++round) {
    std::vector<Interval> sets[3];
    std::vector<int> cover[3];
    for (int s = 0; s < 3; ++s) {
      cover[s].assign(kCells, 0);
      const int streams = 1 + next(6);
      for (int st = 0; st < streams; ++st)
        for (int e = 0, n = next(12); e < n; ++e) {
          const int b = next(kCells), len = next(40);
          const int end = std::min(kCells, b + len);
          sets[s].push_back({static_cast<double>(b), static_cast<double>(end)});
          for (int c = b; c < end; ++c) cover[s][c] = 1;
        }
    }
    double compute = 0, comm = 0, busy = 0, overlapped = 0, exposed = 0;
    int first = kCells, last = 0;
    for (int c = 0; c < kCells; ++c) {
      compute += cover[0][c];
      comm += cover[1][c];
      const bool any = cover[0][c] || cover[1][c] || cover[2][c];
      busy += any;
      overlapped += cover[0][c] && cover[1][c];
      exposed += cover[1][c] && !cover[0][c];
      if (any) first = std::min(first, c), last = std::max(last, c + 1);
    }
    const auto r = ovb::trace_overlap(sets[0], sets[1], sets[2]);
    EXPECT_DOUBLE_EQ(r.compute, compute);
    EXPECT_DOUBLE_EQ(r.comm, comm);
    EXPECT_DOUBLE_EQ(r.busy, busy);
    EXPECT_DOUBLE_EQ(r.span, busy > 0 ? last - first : 0);
    EXPECT_DOUBLE_EQ(r.overlapped_comm, overlapped);
    EXPECT_DOUBLE_EQ(r.exposed_comm, exposed);
    const auto uc = ovb::interval_union(sets[0]), um = ovb::interval_union(sets[1]);
    EXPECT_DOUBLE_EQ(ovb::total_length(ovb::interval_difference(um, uc)), exposed);
    EXPECT_DOUBLE_EQ(ovb::total_length(ovb::interval_intersection(um, uc)), overlapped);
  }
}
