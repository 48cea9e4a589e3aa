// Communication term of the model: the time of one collective from its kind, group size p, group
// stride ip and buffer size, with the ring volume of docs/metrics.md and the placement rule of
// docs/model-costs.md ("Communication"):
//   t = alpha + S * F(kind, p) / bw(kind, p, ip)
//   F = 2(p-1)/p all-reduce, (p-1)/p reduce-scatter / all-gather   (bytes each rank moves / S)
//   bw = intra(kind, p, ip)                          if ip * p <= ranks per node (group in a node)
//        B_node(kind, p, ip) / min(ip, ranks per node) otherwise (node bandwidth shared by the
//                                                      groups crossing the node boundary at once)
//   alpha = the matching table entry's alpha_us (measured), else NCCL's latency model when the
//           machine has one (`latency`: ring and tree, see nccl_latency_us), else
//           alpha_us_per_gpu * p (AxoNN's linear term).
// With NCCL's model an all-reduce takes the faster of ring and tree, as NCCL's tuner picks the
// algorithm of least predicted time.
#pragma once

#include <string>
#include <string_view>

#include "ovb/gpt_plan.hpp"
#include "ovb/grid.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

// Every group and collective kind, in the order of their enums (tables are indexed by them).
inline constexpr Group kGroups[] = {Group::x, Group::y, Group::z, Group::data, Group::world};
inline constexpr CollKind kKinds[] = {CollKind::all_reduce, CollKind::reduce_scatter,
                                      CollKind::all_gather};

enum class Placement { intra, inter };

// How one collective was costed (every intermediate, for `explain`).
struct CollCost {
  CollKind kind = CollKind::all_reduce;
  Group group = Group::x;
  int p = 1;
  int ip = 1;
  Placement placement = Placement::intra;
  int sharing = 1;     // groups sharing the node bandwidth (inter only)
  double bytes = 0;    // S of metrics.md
  double moved = 0;    // S * F: bytes each rank sends in the ring
  double bw_gbps = 0;  // bandwidth used
  double alpha_us = 0;
  double time_us = 0;  // alpha + moved / bw
  int nodes = 1;       // nodes the group spans
  std::string_view algorithm = "ring";  // "ring", "tree" (NCCL model) or "linear" (alpha * p)
};

// Bandwidth and latency of a (kind, p, ip) group on machine m.
struct LinkParams {
  Placement placement;
  int sharing;
  double bw_gbps;
  double alpha_us;                     // of the ring (or the entry's measured one)
  int nodes = 1;                       // nodes the group spans
  bool measured_alpha = false;         // alpha from a table entry
  const LatencyModel* nccl = nullptr;  // the machine's NCCL-like latency model, if any
};
LinkParams link_params(const Machine& m, CollKind kind, int p, int ip);

// Nodes spanned by a group of p ranks at stride ip: 1 when ip * p fits in a node, else
// p / (members per node), members per node = ranks_per_node / ip (at least 1).
int group_nodes(int ranks_per_node, int p, int ip);

// NCCL's latency of one collective over p ranks on `nodes` nodes (src/graph/tuning.cc):
//   ring: base + (steps - inter_steps) * intra_hop + inter_steps * inter_hop,
//         steps = 2(p-1) all-reduce, p-1 reduce-scatter / all-gather,
//         inter_steps = 0 on one node, else 2(nodes-1) all-reduce, nodes-1 otherwise;
//   tree (all-reduce only): base + 2 ((p/nodes - 1) intra_hop + floor(log2 nodes) inter_hop).
double nccl_ring_latency_us(const AlgoLatency& a, CollKind kind, int p, int nodes);
double nccl_tree_latency_us(const AlgoLatency& a, int p, int nodes);

// The stride of a group on a grid: 1 for the world, Grid::stride for a dimension.
int group_stride(const Grid& grid, Group g);

// Cost of a collective of `bytes` (S) over a (p, ip) group.
CollCost cost_collective(const Machine& m, CollKind kind, Group group, int p, int ip, double bytes);
// Cost of one op of the plan on `grid` (ip from the grid order).
CollCost cost_collective(const Machine& m, const Grid& grid, const CollOp& op);

std::string_view name_of(Placement p);  // "intra", "inter"

}  // namespace ovb::model
