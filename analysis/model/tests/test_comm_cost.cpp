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
  // NCCL's Simple-protocol ring inside a node: 8.4 + 2*3 * 3.4 us.
  EXPECT_DOUBLE_EQ(link_params(perl, CollKind::all_reduce, 4, 1).alpha_us, 8.4 + 6 * 3.4);
}

namespace {
// The synthetic machine with NCCL-like latency: ring base 8, 2 us per NVLink hop, 10 per network
// hop; tree base 0, 5 and 20 us per hop, at half the ring's bandwidth.
Machine nccl_machine() {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["default"].erase("alpha_us_per_gpu");
  j["comm"]["default"]["latency"] = {
      {"ring", {{"base_us", 8}, {"intra_hop_us", 2}, {"inter_hop_us", 10}}},
      {"tree", {{"base_us", 0}, {"intra_hop_us", 5}, {"inter_hop_us", 20}, {"bw_factor", 0.5}}}};
  return machine_from_json(j, "synthetic-nccl");
}
}  // namespace

TEST(CommCost, NodesSpannedByAGroup) {
  EXPECT_EQ(group_nodes(4, 4, 1), 1);     // fits in a node
  EXPECT_EQ(group_nodes(4, 2, 2), 1);     // ip*p = 4
  EXPECT_EQ(group_nodes(4, 8, 2), 4);     // 2 members per node
  EXPECT_EQ(group_nodes(4, 16, 8), 16);   // stride beyond a node: one member per node
  EXPECT_EQ(group_nodes(4, 1024, 1), 256);
}

TEST(CommCost, NcclLatencySmallGroupIsTheRing) {
  const Machine mc = nccl_machine();
  // 4 ranks in one node, 8 MB: ring alpha 8 + 6 hops * 2 = 20 us, 12e6 B / 200 GB/s = 60 us;
  // tree 2 * (3 * 5) = 30 us + 12e6 / 100 GB/s = 120 us: the ring wins (80 us).
  CollCost c = cost_collective(mc, CollKind::all_reduce, Group::x, 4, 1, 8e6);
  EXPECT_EQ(c.algorithm, "ring");
  EXPECT_EQ(c.nodes, 1);
  EXPECT_DOUBLE_EQ(c.alpha_us, 20);
  EXPECT_DOUBLE_EQ(c.time_us, 80);
  // Reduce-scatter: 8 + 3 * 2 = 14 us + 6e6 / 200 GB/s = 30 us.
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::reduce_scatter, Group::z, 4, 1, 8e6).time_us, 44);
}

TEST(CommCost, NcclLatencyLargeGroupTakesTheTreeForAllReduce) {
  const Machine mc = nccl_machine();
  // 1024 ranks on 256 nodes (4 per node), node bandwidth 50 GB/s.
  // Ring: 2*1023 = 2046 steps, 2*255 = 510 of them between nodes:
  //   8 + (2046 - 510) * 2 + 510 * 10 = 8180 us.
  EXPECT_DOUBLE_EQ(nccl_ring_latency_us({8, 2, 10}, CollKind::all_reduce, 1024, 256), 8180);
  // Tree: 2 * ((1024/256 - 1) * 5 + log2(256) * 20) = 350 us.
  EXPECT_DOUBLE_EQ(nccl_tree_latency_us({0, 5, 20}, 1024, 256), 350);
  const double S = 8e6, moved = 2.0 * 1023 / 1024 * S;
  CollCost c = cost_collective(mc, CollKind::all_reduce, Group::data, 1024, 1, S);
  EXPECT_EQ(c.algorithm, "tree");
  EXPECT_EQ(c.nodes, 256);
  EXPECT_DOUBLE_EQ(c.alpha_us, 350);
  EXPECT_DOUBLE_EQ(c.bw_gbps, 25);
  EXPECT_DOUBLE_EQ(c.time_us, 350 + moved / 25e3);
  // Reduce-scatter and all-gather have only the ring: 8 + (1023 - 255) * 2 + 255 * 10 = 4094 us
  // (the linear term would say 2 us * 1024 = 2048 us for every kind).
  CollCost rs = cost_collective(mc, CollKind::reduce_scatter, Group::z, 1024, 1, S);
  EXPECT_EQ(rs.algorithm, "ring");
  EXPECT_DOUBLE_EQ(rs.alpha_us, 4094);
  EXPECT_DOUBLE_EQ(rs.time_us, 4094 + 1023.0 / 1024 * S / 50e3);
  // A huge buffer: the tree's lower bandwidth loses to the ring's once bytes dominate.
  EXPECT_EQ(cost_collective(mc, CollKind::all_reduce, Group::data, 1024, 1, 1e10).algorithm, "ring");
}

TEST(CommCost, MeasuredEntryLatencyBeatsTheNcclModel) {
  nlohmann::json j = test::synthetic_machine_json();
  j["comm"]["default"].erase("alpha_us_per_gpu");
  j["comm"]["default"]["latency"] = {
      {"ring", {{"base_us", 8}, {"intra_hop_us", 2}, {"inter_hop_us", 10}}}};
  j["comm"]["default"]["intra"][1]["alpha_us"] = 3;
  const Machine mc = machine_from_json(j, "m");
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::all_reduce, Group::x, 4, 1, 0).time_us, 3);
  EXPECT_DOUBLE_EQ(cost_collective(mc, CollKind::all_reduce, Group::x, 2, 1, 0).time_us, 8 + 2 * 2);
}
