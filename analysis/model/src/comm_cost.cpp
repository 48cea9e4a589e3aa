// Communication term: ring volume, placement-aware bandwidth and latency (see comm_cost.hpp).
#include "ovb/model/comm_cost.hpp"

#include <algorithm>
#include <cmath>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"

namespace ovb::model {

namespace {

// Entries usable for a stride: those for exactly this ip, else those for any ip (ip 0), else all.
template <class E>
std::vector<const E*> for_stride(const std::vector<E>& entries, int ip) {
  std::vector<const E*> exact, any, all;
  for (const E& e : entries) {
    if (e.ip == ip)
      exact.push_back(&e);
    else if (e.ip == 0)
      any.push_back(&e);
    all.push_back(&e);
  }
  return !exact.empty() ? exact : !any.empty() ? any : all;
}

// Bandwidth for group size p from entries sorted by p: exact match, else linear in log2(p)
// between the neighbours, clamped to the first/last entry outside the table.
struct Pick {
  double bw;
  double alpha_us;  // < 0 when not an exact match or the entry has none
};
template <class E, class Bw>
Pick pick_by_p(std::vector<const E*> v, int p, Bw bw_of) {
  std::sort(v.begin(), v.end(), [](const E* a, const E* b) { return a->p < b->p; });
  for (const E* e : v)
    if (e->p == p) return {bw_of(*e), e->alpha_us};
  if (p <= v.front()->p) return {bw_of(*v.front()), -1};
  if (p >= v.back()->p) return {bw_of(*v.back()), -1};
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i]->p > p) {
      const double x0 = std::log2(v[i - 1]->p), x1 = std::log2(v[i]->p), x = std::log2(p);
      const double w = (x - x0) / (x1 - x0);
      return {(1 - w) * bw_of(*v[i - 1]) + w * bw_of(*v[i]), -1};
    }
  }
  return {bw_of(*v.back()), -1};
}

const CommParams* kind_params(const Machine& m, CollKind k) {
  const auto& c = m.comm_kind[static_cast<int>(k)];
  return c ? &*c : nullptr;
}

}  // namespace

std::string_view name_of(Placement p) {
  return p == Placement::intra ? "intra" : "inter";
}

int group_nodes(int ranks_per_node, int p, int ip) {
  if (static_cast<long long>(ip) * p <= ranks_per_node) return 1;
  const int per_node = std::max(1, ranks_per_node / std::max(ip, 1));
  return (p + per_node - 1) / per_node;
}

double nccl_ring_latency_us(const AlgoLatency& a, CollKind kind, int p, int nodes) {
  const bool ar = kind == CollKind::all_reduce;
  const double steps = ar ? 2.0 * (p - 1) : p - 1.0;
  const double inter = nodes <= 1 ? 0.0 : ar ? 2.0 * (nodes - 1) : nodes - 1.0;
  return a.base_us + (steps - inter) * a.intra_hop_us + inter * a.inter_hop_us;
}

double nccl_tree_latency_us(const AlgoLatency& a, int p, int nodes) {
  const int depth = nodes > 1 ? static_cast<int>(std::floor(std::log2(nodes))) : 0;
  return a.base_us + 2.0 * ((p / std::max(nodes, 1) - 1) * a.intra_hop_us + depth * a.inter_hop_us);
}

LinkParams link_params(const Machine& m, CollKind kind, int p, int ip) {
  const CommParams* k = kind_params(m, kind);
  const CommParams& d = m.comm_default;
  const int rpn = m.ranks_per_node();
  LinkParams out{};
  out.nodes = group_nodes(rpn, p, ip);
  double alpha = -1;
  if (static_cast<long long>(ip) * p <= rpn) {
    out.placement = Placement::intra;
    out.sharing = 1;
    const auto& table = (k && !k->intra.empty()) ? k->intra : d.intra;
    const Pick pk = pick_by_p(for_stride(table, ip), p, [](const IntraEntry& e) { return e.gbps; });
    out.bw_gbps = pk.bw;
    alpha = pk.alpha_us;
  } else {
    out.placement = Placement::inter;
    out.sharing = std::min(ip, rpn);
    double node = 0;
    const auto& table = (k && !k->inter.empty()) ? k->inter : d.inter;
    if (!table.empty()) {
      const Pick pk =
          pick_by_p(for_stride(table, ip), p, [](const InterEntry& e) { return e.node_gbps; });
      node = pk.bw;
      alpha = pk.alpha_us;
    } else if (k && k->inter_node_gbps) {
      node = *k->inter_node_gbps;
    } else if (d.inter_node_gbps) {
      node = *d.inter_node_gbps;
    } else {
      throw UsageError("machine " + m.name + " has no inter-node bandwidth (comm.default." +
                       "inter_node_gbps), needed for a " + std::string(ovb::name_of(kind)) +
                       " over " + std::to_string(p) + " ranks with stride " + std::to_string(ip) +
                       " on " + std::to_string(rpn) + " ranks per node");
    }
    out.bw_gbps = node / out.sharing;
  }
  out.measured_alpha = alpha >= 0;
  out.nccl = (k && k->latency) ? &*k->latency : d.latency ? &*d.latency : nullptr;
  if (alpha < 0 && out.nccl) {
    alpha = nccl_ring_latency_us(out.nccl->ring, kind, p, out.nodes);
  } else if (alpha < 0) {
    const double per_gpu =
        (k && k->alpha_us_per_gpu) ? *k->alpha_us_per_gpu : d.alpha_us_per_gpu.value_or(0);
    alpha = per_gpu * p;
  }
  out.alpha_us = alpha;
  return out;
}

int group_stride(const Grid& grid, Group g) {
  return g == Group::world ? 1 : grid.stride(static_cast<Dim>(g));
}

CollCost cost_collective(const Machine& m, CollKind kind, Group group, int p, int ip,
                         double bytes) {
  CollCost c;
  c.kind = kind;
  c.group = group;
  c.p = p;
  c.ip = ip;
  c.bytes = bytes;
  if (p <= 1) return c;  // not issued
  const LinkParams l = link_params(m, kind, p, ip);
  c.placement = l.placement;
  c.sharing = l.sharing;
  c.bw_gbps = l.bw_gbps;
  c.alpha_us = l.alpha_us;
  c.nodes = l.nodes;
  c.algorithm = l.measured_alpha || l.nccl ? "ring" : "linear";
  c.moved = bytes * metrics::bus_factor(kind, p);
  c.time_us = c.alpha_us + c.moved / (c.bw_gbps * 1e3);  // GB/s = 1e3 bytes/us
  // NCCL's tuner runs the all-reduce as a tree when that is predicted faster (log-depth latency
  // between nodes, slightly lower bandwidth).
  if (kind == CollKind::all_reduce && !l.measured_alpha && l.nccl && l.nccl->tree) {
    const double bw = l.bw_gbps * l.nccl->tree_bw_factor;
    const double alpha = nccl_tree_latency_us(*l.nccl->tree, p, l.nodes);
    const double t = alpha + c.moved / (bw * 1e3);
    if (t < c.time_us) {
      c.algorithm = "tree";
      c.alpha_us = alpha;
      c.bw_gbps = bw;
      c.time_us = t;
    }
  }
  return c;
}

CollCost cost_collective(const Machine& m, const Grid& grid, const CollOp& op) {
  return cost_collective(m, op.kind, op.group, op.group_size, group_stride(grid, op.group),
                         op.bytes());
}

}  // namespace ovb::model
