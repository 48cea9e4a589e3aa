// Communication term of the model: the time of one collective from its kind, group size p, group
// stride ip and buffer size, with the ring volume of docs/metrics.md and the placement rule of
// docs/model.md ("Communication"):
//   t = alpha + S * F(kind, p) / bw(kind, p, ip)
//   F = 2(p-1)/p all-reduce, (p-1)/p reduce-scatter / all-gather   (bytes each rank moves / S)
//   bw = intra(kind, p, ip)                          if ip * p <= ranks per node (group in a node)
//        B_node(kind, p, ip) / min(ip, ranks per node) otherwise (node bandwidth shared by the
//                                                      groups crossing the node boundary at once)
//   alpha = the matching table entry's alpha_us, else alpha_us_per_gpu * p.
#pragma once

#include <string>

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
};

// Bandwidth and latency of a (kind, p, ip) group on machine m.
struct LinkParams {
  Placement placement;
  int sharing;
  double bw_gbps;
  double alpha_us;
};
LinkParams link_params(const Machine& m, CollKind kind, int p, int ip);

// The stride of a group on a grid: 1 for the world, Grid::stride for a dimension.
int group_stride(const Grid& grid, Group g);

// Cost of a collective of `bytes` (S) over a (p, ip) group.
CollCost cost_collective(const Machine& m, CollKind kind, Group group, int p, int ip, double bytes);
// Cost of one op of the plan on `grid` (ip from the grid order).
CollCost cost_collective(const Machine& m, const Grid& grid, const CollOp& op);

std::string_view name_of(Placement p);  // "intra", "inter"

}  // namespace ovb::model
