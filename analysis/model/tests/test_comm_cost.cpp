// Communication term: ring volumes, placement inside and across nodes, NIC sharing, latency, and
// the preset tables reproducing AxoNN's published get_bw for Perlmutter and Frontier.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ovb/error.hpp"
#include "ovb/model/comm_cost.hpp"

using namespace ovb;
using namespace ovb::model;

TEST(CommCost, RingVolumesAndTimeByHand) {
  const Machine mc = test::synthetic_machine();
  const double S = 8e6;  // bytes
  // All-reduce over 4 ranks in a node: moved = 2*3/4 S = 12e6 bytes at 200 GB/s = 60 us, + 2*4 us.
  CollCost c = cost_collective(mc, CollKind::all_reduce, Group::x, 4, 1, S);
  EXPECT_DOUBLE_EQ(c.moved, 12e6);
  EXPECT_DOUBLE_EQ(c.bw_gbps, 200);
  EXPECT_DOUBLE_EQ(c.alpha_us, 8);
  EXPECT_DOUBLE_EQ(c.time_us, 68);
  EXPECT_EQ(c.placement, Placement::intra);
  // Reduce-scatter and all-gather: (p-1)/p S = 6e6 -> 30 us + 8.
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::reduce_scatter, Group::z, 4, 1, S).time_us, 38);
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::all_gather, Group::z, 4, 1, S).time_us, 38);
  // Two ranks: 2*1/2 S = 8e6 at 100 GB/s = 80 us + 4.
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::all_reduce, Group::y, 2, 2, S).time_us, 84);
  // A group of one rank is not issued.
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::all_reduce, Group::y, 1, 1, S).time_us, 0);
}

TEST(CommCost, PlacementInsideAndAcrossNodesWithNicSharing) {
  const Machine mc = test::synthetic_machine();  // 4 ranks per node, node 50 GB/s
  // ip*p <= 4: inside a node, whatever the stride.
  EXPECT_EQ(link_params(mc, CollKind::all_reduce, 2, 2).placement, Placement::intra);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 2, 2).bw_gbps, 100);
  // ip=1, p=8: crosses nodes, one group per node crosses: 50 / min(1, 4).
  LinkParams l = link_params(mc, CollKind::all_reduce, 8, 1);
  EXPECT_EQ(l.placement, Placement::inter);
  EXPECT_EQ(l.sharing, 1);
  EXPECT_DOUBLE_EQ(l.bw_gbps, 50);
  // ip=2, p=4: 2 groups share the node's NICs; ip=8: all 4 GPUs of the node do.
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 4, 2).bw_gbps, 25);
  EXPECT_EQ(link_params(mc, CollKind::all_reduce, 4, 8).sharing, 4);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 4, 8).bw_gbps, 12.5);
  // Latency stays alpha * p.
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 16, 4).alpha_us, 32);
}

TEST(CommCost, GroupStrideFollowsTheGridOrder) {
  const Grid g(GridShape::parse("2x4x2x3:y,z,x"), 48);
  EXPECT_EQ(group_stride(g, Group::y), 1);
  EXPECT_EQ(group_stride(g, Group::z), 4);
  EXPECT_EQ(group_stride(g, Group::x), 8);
  EXPECT_EQ(group_stride(g, Group::data), 16);
  EXPECT_EQ(group_stride(g, Group::world), 1);
}

TEST(CommCost, IntraTableInterpolatesInLog2pAndEntryLatencyWins) {
  nlohmann::json j = test::synthetic_machine_json();
  j["gpus_per_node"] = 16;
  j["comm"]["default"]["intra"] = {{{"p", 2}, {"gbps", 100}, {"alpha_us", 7}},
                                   {{"p", 8}, {"gbps", 400}}};
  const Machine mc = machine_from_json(j, "t");
  // log2(4) is halfway between log2(2) and log2(8): 100 + (400 - 100) / 2.
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 4, 1).bw_gbps, 250);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 16, 1).bw_gbps, 400);  // clamped
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 2, 1).alpha_us, 7);    // entry's own
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 4, 1).alpha_us, 8);    // 2 us * 4
}

TEST(CommCost, KindSectionOverridesTheDefault) {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["all_gather"] = {{"intra", {{{"p", 2}, {"gbps", 10}}}}, {"alpha_us_per_gpu", 1}};
  const Machine mc = machine_from_json(j, "t");
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_gather, 2, 1).bw_gbps, 10);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_gather, 2, 1).alpha_us, 2);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_reduce, 2, 1).bw_gbps, 100);
  EXPECT_DOUBLE_EQ(link_params(mc, CollKind::all_gather, 8, 1).bw_gbps, 50);  // default inter
}

TEST(CommCost, NoInterNodeBandwidthIsAClearError) {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["default"].erase("inter_node_gbps");
  const Machine mc = machine_from_json(j, "t");
  EXPECT_NO_THROW(link_params(mc, CollKind::all_reduce, 4, 1));
  try {
    link_params(mc, CollKind::all_reduce, 8, 1);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no inter-node bandwidth"), std::string::npos);
  }
}

// AxoNN's get_bw(ip, p) for Perlmutter and Frontier (Megatron-AxoNN examples/comm_model.py).
static double axonn_perlmutter(int ip, int p) {
  if (ip == 1) return p == 2 ? 76 : p == 4 ? 225 : 80;
  if (ip == 2) return p == 2 ? 76 : 40;
  return 20;
}
static double axonn_frontier(int ip, int p) {
  if (ip == 1) return p == 2 ? 129 : p == 4 ? 52 : p == 8 ? 135 : 40;
  if (ip == 2) return p == 2 ? 50 : p == 4 ? 72 : 20;
  if (ip == 4) return p == 2 ? 36 : 10;
  return 5;
}

TEST(CommCost, PresetsReproduceAxonnTables) {
  const Machine perl = load_machine("perlmutter-a100");
  const Machine fron = load_machine("frontier-mi250x");
  for (int ip : {1, 2, 4, 8, 16, 64})
    for (int p : {2, 4, 8, 16, 32}) {
      EXPECT_DOUBLE_EQ(link_params(perl, CollKind::all_reduce, p, ip).bw_gbps,
                       axonn_perlmutter(ip, p))
          << "perlmutter ip=" << ip << " p=" << p;
      EXPECT_DOUBLE_EQ(link_params(fron, CollKind::reduce_scatter, p, ip).bw_gbps,
                       axonn_frontier(ip, p))
          << "frontier ip=" << ip << " p=" << p;
    }
  EXPECT_DOUBLE_EQ(link_params(perl, CollKind::all_reduce, 4, 1).alpha_us, 36);  // 0.009 ms * 4
}
