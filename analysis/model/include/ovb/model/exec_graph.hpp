// The schedule of one iteration (ovb/gpt_schedule.hpp) as an execution graph: the nodes and
// dependencies that `ovb-model export-chakra` writes as Chakra execution traces (docs/chakra.md).
//
// One node per compute step (a kernel on the compute stream) and one per issue step (a collective
// on its stream), in schedule order. Waits and slot steps are not nodes; they are edges:
//   data_deps of a compute node: the compute node before it (the compute stream's order) and the
//     collective of every wait between the two;
//   data_deps of a collective node: the compute node before its issue and the collective of every
//     wait since that compute node (the issue follows the compute stream's work so far, waits
//     included), and its `deps` (the collectives it starts after);
//   ctrl_deps of a collective node: the collective issued before it on the same stream (each
//     stream runs its collectives in issue order).
// Slot steps add nothing: a slot is released by a step of the compute stream and taken again by a
// later one (a dW slot after a wait for the reduce-scatter reading it), so the order above holds
// them. Waits after the last compute node (the end of the step) need no edge: the iteration ends
// when every node has.
//
// Every rank of a grid has the same graph; ranks differ only in their communicator groups
// (CommGroups: each X/Y/Z/data group and the world, with members from the grid's rank layout).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ovb/gpt_plan.hpp"
#include "ovb/gpt_schedule.hpp"
#include "ovb/grid.hpp"
#include "ovb/model/machine.hpp"
#include "ovb/model/step_cost.hpp"

namespace ovb::model {

struct ExecNode {
  std::uint64_t id = 0;  // 1, 2, ... in schedule order
  bool collective = false;
  int step = -1;           // index in GptSchedule::steps
  std::string name;        // ovb::describe() of the step
  double duration_us = 0;  // compute: StepCoster; collective: its cost alone (cost_collective)
  GemmShape gemm;          // compute GEMMs
  int coll = -1;           // collective: id in GptSchedule::collectives
  std::vector<std::uint64_t> data_deps, ctrl_deps;  // ascending
};

struct ExecGraph {
  std::vector<ExecNode> nodes;
  int compute_nodes = 0, collective_nodes = 0;
};

// The graph of (sched) with the durations of the model on mc; grid: the schedule's grid (for the
// collectives' strides).
ExecGraph exec_graph(const GptSchedule& sched, const StepCoster& coster, const Machine& mc,
                     const Grid& grid);

// The communicator groups of a grid: every X, Y, Z and data group of more than one rank and the
// world, numbered from 1 (X groups first, in the order of their lowest rank, then Y, Z, data,
// world), members in the order of their coordinate along the group's dimension (the ring order).
struct CommGroup {
  int id = 0;
  Group group = Group::world;
  std::vector<int> ranks;
};
class CommGroups {
 public:
  explicit CommGroups(const Grid& grid);
  int id(Group g, int rank) const;  // throws Error for a group of size 1 (never issued over)
  const std::vector<CommGroup>& all() const { return groups_; }

 private:
  std::vector<CommGroup> groups_;
  std::array<std::vector<int>, 4> ids_;  // by Dim: each rank's group id (empty: size 1)
  int world_ = 0;                        // 0: a world of one rank
};

}  // namespace ovb::model
