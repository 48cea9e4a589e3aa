// The schedule as an execution graph and the grid's communicator groups (see exec_graph.hpp).
#include "ovb/model/exec_graph.hpp"

#include <algorithm>
#include <array>

#include "ovb/error.hpp"
#include "ovb/model/comm_cost.hpp"

namespace ovb::model {

namespace {

void add_dep(std::vector<std::uint64_t>& deps, std::uint64_t id) {
  if (id != 0 && std::find(deps.begin(), deps.end(), id) == deps.end()) deps.push_back(id);
}

}  // namespace

ExecGraph exec_graph(const GptSchedule& sched, const StepCoster& coster, const Machine& mc,
                     const Grid& grid) {
  ExecGraph g;
  std::vector<std::uint64_t> coll_node(sched.collectives.size(), 0);
  std::array<std::uint64_t, 4> last_on_stream{};  // by StreamId
  std::uint64_t last_compute = 0;
  std::vector<int> waited;  // collectives waited for since last_compute
  for (std::size_t i = 0; i < sched.steps.size(); ++i) {
    const Step& s = sched.steps[i];
    if (s.kind == StepKind::wait) {
      waited.push_back(s.coll);
      continue;
    }
    if (s.kind != StepKind::compute && s.kind != StepKind::issue) continue;
    ExecNode n;
    n.id = g.nodes.size() + 1;
    n.step = static_cast<int>(i);
    n.name = describe(s, sched);
    add_dep(n.data_deps, last_compute);
    for (int c : waited) add_dep(n.data_deps, coll_node[static_cast<std::size_t>(c)]);
    if (s.kind == StepKind::compute) {
      n.duration_us = coster.compute_us(s);
      n.gemm = s.gemm;
      last_compute = n.id;
      waited.clear();
      ++g.compute_nodes;
    } else {
      n.collective = true;
      n.coll = s.coll;
      const CollOp& op = sched.collectives[static_cast<std::size_t>(s.coll)];
      n.duration_us = cost_collective(mc, grid, op).time_us;
      for (int d : s.deps) add_dep(n.data_deps, coll_node[static_cast<std::size_t>(d)]);
      std::uint64_t& prev = last_on_stream[static_cast<std::size_t>(s.stream)];
      add_dep(n.ctrl_deps, prev);
      prev = n.id;
      coll_node[static_cast<std::size_t>(s.coll)] = n.id;
      ++g.collective_nodes;
    }
    std::sort(n.data_deps.begin(), n.data_deps.end());
    g.nodes.push_back(std::move(n));
  }
  return g;
}

CommGroups::CommGroups(const Grid& grid) {
  const int world = grid.shape().world();
  int next = 1;
  for (Dim d : kAllDims) {
    if (grid.size(d) <= 1) continue;
    // Grid::group_id names a group by its lowest rank; the ids here are dense, in that order.
    std::vector<int>& ids = ids_[static_cast<std::size_t>(d)];
    ids.assign(static_cast<std::size_t>(world), 0);
    std::vector<int> by_lowest(static_cast<std::size_t>(world), 0);
    for (int r = 0; r < world; ++r) {
      int& id = by_lowest[static_cast<std::size_t>(grid.group_id(d, r))];
      if (id == 0) {
        id = next++;
        groups_.push_back({id, group_of(d), grid.group(d, r)});
      }
      ids[static_cast<std::size_t>(r)] = id;
    }
  }
  if (world > 1) {
    world_ = next;
    CommGroup all{next, Group::world, {}};
    for (int r = 0; r < world; ++r) all.ranks.push_back(r);
    groups_.push_back(std::move(all));
  }
}

int CommGroups::id(Group g, int rank) const {
  const int id = g == Group::world ? world_
                 : ids_[static_cast<std::size_t>(g)].empty()
                     ? 0
                     : ids_[static_cast<std::size_t>(g)][static_cast<std::size_t>(rank)];
  if (id == 0) throw Error("communicator group of size 1 asked for (no collective uses one)");
  return id;
}

}  // namespace ovb::model
