// Collectives in flight together share the link that bounds them (link_share.hpp): each end
// worked out here by hand from the latency and bandwidth terms - two equal collectives on one NIC
// end at latency + twice the bandwidth term, on different links at their cost, a short one inside a
// long one delays it by exactly its own bandwidth term, pairs that fill under a third of NVLink do
// not slow each other; and the replay of a hand-made schedule on Perlmutter ends where
// cost_collective()'s terms say.
#include <gtest/gtest.h>

#include "ovb/model/comm_cost.hpp"
#include "ovb/model/link_share.hpp"
#include "ovb/model/predict.hpp"

using namespace ovb;
using namespace ovb::model;

namespace {

LinkUse use(double latency, double bandwidth, Link l, double share = 1) {
  LinkUse u;
  u.us = latency + bandwidth;
  u.latency_us = latency;
  u.link = l;
  u.share = share;
  return u;
}

constexpr int kTp = 1, kGather = 2, kGrad = 3;  // StreamId's communication streams

// Sums of a few terms of ~100 us: exact to far below this.
constexpr double kTol = 1e-9;

}  // namespace

TEST(LinkShare, TwoEqualCollectivesOnOneNicTakeTwiceTheBandwidthTerm) {
  LinkShare ls;
  ls.clear();
  const double a = 10, w = 100;
  ls.add(kGather, 0, {}, use(a, w, Link::nic), 1);
  ls.add(kGrad, 0, {}, use(a, w, Link::nic), 1);
  EXPECT_NEAR(ls.end(0), a + 2 * w, kTol);  // both latencies at once, then half the NIC each
  EXPECT_NEAR(ls.end(1), a + 2 * w, kTol);
  EXPECT_TRUE(ls.shared(0));
  EXPECT_TRUE(ls.shared(1));
}

TEST(LinkShare, CollectivesOnDifferentLinksRunAtTheirCost) {
  LinkShare ls;
  ls.clear();
  ls.add(kTp, 0, {}, use(10, 100, Link::nvlink), 1);
  ls.add(kGrad, 0, {}, use(20, 300, Link::nic), 1);
  EXPECT_DOUBLE_EQ(ls.end(0), 110);
  EXPECT_DOUBLE_EQ(ls.end(1), 320);
  EXPECT_FALSE(ls.shared(0));
  EXPECT_FALSE(ls.shared(1));
}

// Long: latency a, bandwidth W from 0. Short: latency a, bandwidth w, issued at t1 > a. The long
// one runs alone until t1 + a (W - t1 done), both at half rate for 2w (the short one's end), then
// the long one alone: it ends at a + W + w.
TEST(LinkShare, AShortCollectiveInsideALongOneDelaysItByItsBandwidthTerm) {
  LinkShare ls;
  ls.clear();
  const double a = 10, W = 1000, w = 50, t1 = 200;
  ls.add(kGather, 0, {}, use(a, W, Link::nic), 1);
  ls.run_through(t1);
  ls.add(kGrad, t1, {}, use(a, w, Link::nic), 1);
  EXPECT_NEAR(ls.end(1), t1 + a + 2 * w, kTol);
  EXPECT_NEAR(ls.end(0), a + W + w, kTol);
  EXPECT_NEAR(ls.ran_before(0, 500), 500, kTol);
  EXPECT_NEAR(ls.ran_before(1, 500), ls.end(1) - t1, kTol);
}

// The stretch (comm_slowdown under compute) scales both terms; a stream's collectives run in
// order and a dependency holds a collective back until it ends.
TEST(LinkShare, StretchStreamOrderAndDependencies) {
  LinkShare ls;
  ls.clear();
  ls.add(kGrad, 0, {}, use(10, 90, Link::nic), 1.5);   // 0: ends at 150
  ls.add(kGrad, 0, {}, use(10, 90, Link::nvlink), 1);  // 1: after 0 on its stream
  ls.add(kTp, 0, {0}, use(0, 40, Link::nvlink), 1);    // 2: after 0, beside 1 on NVLink
  EXPECT_DOUBLE_EQ(ls.end(0), 150);
  EXPECT_DOUBLE_EQ(ls.start(1), 150);
  EXPECT_DOUBLE_EQ(ls.start(2), 150);
  // 1 is in its latency for 10 us (2 alone: 10 of its 40 done), then both at half rate: 2's 30
  // left take 60, 1 does 30 of its 90 meanwhile, then 60 alone.
  EXPECT_NEAR(ls.end(2), 150 + 10 + 60, kTol);
  EXPECT_NEAR(ls.end(1), 150 + 10 + 60 + 60, kTol);
}

// Max-min fairness: a pair group using a third of NVLink (Perlmutter: 76 of 225 GB/s) beside
// another pair runs at full rate; beside a node-wide group it keeps its third and the node-wide
// one gets the rest (2/3 of its rate).
TEST(LinkShare, SmallSharesFitTogether) {
  LinkShare ls;
  ls.clear();
  const double third = 76.0 / 225.0;
  ls.add(kTp, 0, {}, use(0, 100, Link::nvlink, third), 1);
  ls.add(kGrad, 0, {}, use(0, 100, Link::nvlink, third), 1);
  EXPECT_DOUBLE_EQ(ls.end(0), 100);
  EXPECT_DOUBLE_EQ(ls.end(1), 100);

  ls.clear();
  ls.add(kTp, 0, {}, use(0, 100, Link::nvlink, third), 1);
  ls.add(kGrad, 0, {}, use(0, 300, Link::nvlink, 1), 1);
  EXPECT_NEAR(ls.end(0), 100, kTol);
  // The node-wide group: 100 us at 1 - third, then alone.
  EXPECT_NEAR(ls.end(1), 100 + (300 - 100 * (1 - third)), 1e-9);
}

TEST(LinkShare, LinkOfACollectiveFollowsItsPlacement) {
  const Machine mc = load_machine("perlmutter-a100");  // 4 GPUs per node: 76 / 225 GB/s inside
  const CollCost pair = cost_collective(mc, CollKind::all_reduce, Group::x, 2, 1, 1 << 26);
  const CollCost node = cost_collective(mc, CollKind::all_reduce, Group::x, 4, 1, 1 << 26);
  const CollCost across = cost_collective(mc, CollKind::all_reduce, Group::data, 4, 4, 1 << 26);
  EXPECT_EQ(link_use(mc, pair).link, Link::nvlink);
  EXPECT_NEAR(link_use(mc, pair).share, pair.bw_gbps / 225.0, 1e-12);
  EXPECT_DOUBLE_EQ(link_use(mc, node).share, 1);
  EXPECT_EQ(link_use(mc, across).link, Link::nic);
  EXPECT_DOUBLE_EQ(link_use(mc, across).share, 1);
  EXPECT_DOUBLE_EQ(link_use(mc, across).us, across.time_us);
  EXPECT_DOUBLE_EQ(link_use(mc, across).latency_us, across.alpha_us);
}

namespace {

// A schedule of collectives only: each issued, then all waited for in order.
GptSchedule issues_then_waits(const std::vector<std::pair<CollOp, StreamId>>& colls) {
  GptSchedule s;
  for (std::size_t i = 0; i < colls.size(); ++i) {
    Step st;
    st.kind = StepKind::issue;
    st.stream = colls[i].second;
    st.op = "test";
    st.coll = static_cast<int>(i);
    s.collectives.push_back(colls[i].first);
    s.steps.push_back(st);
  }
  for (std::size_t i = 0; i < colls.size(); ++i) {
    Step w;
    w.kind = StepKind::wait;
    w.op = "test";
    w.coll = static_cast<int>(i);
    s.steps.push_back(w);
  }
  return s;
}

CollOp op(Group g, int p, CollKind k, std::int64_t count) {
  return CollOp{Phase::backward, 0, "test", CollRole::data_grad_reduce, k, g, p, count, DType::f32};
}

}  // namespace

// The replay (timeline.cpp) on Perlmutter, 4 GPUs per node, grid 4x1x1x4: X inside a node (the
// rank's NVLink), data across nodes (the NICs). Without interference factors, so that the ends are
// the links' alone.
TEST(LinkShare, ReplayedCollectivesShareTheirLink) {
  Machine mc = load_machine("perlmutter-a100");
  mc.comm_slowdown = 0;
  mc.compute_slowdown = 0;
  const GptShape m = gpt_preset("125M");
  GptPlanOptions o;
  o.grid = GridShape::parse("4x1x1x4");
  o.batch = 16;
  const Prediction p = predict(m, o, mc);
  const Grid grid(o.grid, o.grid.world());
  const std::int64_t count = 1 << 24;
  const CollOp data = op(Group::data, 4, CollKind::all_reduce, count);
  const CollOp x = op(Group::x, 4, CollKind::all_reduce, count);
  const CollCost cd = cost_collective(mc, grid, data), cx = cost_collective(mc, grid, x);
  ASSERT_EQ(cd.placement, Placement::inter);
  ASSERT_EQ(cx.placement, Placement::intra);
  const double tol = 1e-9 * cd.time_us;

  // Two data all-reduces on two streams: the NIC's bandwidth is halved for both.
  const Timeline two =
      replay_schedule(issues_then_waits({{data, StreamId::grad}, {data, StreamId::gather}}), m,
                      p.compute, p.comm, o, mc);
  const double bw = cd.time_us - cd.alpha_us;
  EXPECT_NEAR(two.iteration_us, cd.alpha_us + 2 * bw, tol);
  EXPECT_NEAR(two.exposed_total_us(), two.iteration_us, tol);

  // A data and an X all-reduce: different links, the longer one's cost.
  const Timeline apart = replay_schedule(
      issues_then_waits({{data, StreamId::grad}, {x, StreamId::tp}}), m, p.compute, p.comm, o, mc);
  EXPECT_NEAR(apart.iteration_us, std::max(cd.time_us, cx.time_us), tol);

  // The same two data all-reduces on one stream: one after the other, as without sharing.
  const Timeline queued =
      replay_schedule(issues_then_waits({{data, StreamId::grad}, {data, StreamId::grad}}), m,
                      p.compute, p.comm, o, mc);
  EXPECT_NEAR(queued.iteration_us, 2 * cd.time_us, tol);
}
