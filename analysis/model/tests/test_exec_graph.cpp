// The execution graph of the schedule (ovb/model/exec_graph.hpp) and the compute steps' costs
// (ovb/model/step_cost.hpp): the nodes are the schedule's compute and issue steps one for one, and
// every edge is recomputed here from the steps by a backward scan (the definition of
// exec_graph.hpp read the other way round); the steps' costs add up to the model's compute term;
// the communicator groups are the grid's groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "chakra_cases.hpp"
#include "ovb/error.hpp"
#include "ovb/model/exec_graph.hpp"
#include "ovb/model/graph_replay.hpp"

namespace ovb::model {
namespace {

using test::export_cases;

std::vector<std::uint64_t> sorted(std::set<std::uint64_t> s) {
  return {s.begin(), s.end()};
}

TEST(StepCost, AddsUpToTheComputeTerm) {
  const Machine mc = test::synthetic_machine();
  for (const auto& c : export_cases()) {
    const GptSchedule sched = gpt_schedule(c.m, c.o);
    const StepCoster coster(c.m, c.o, mc);
    double sum = 0;
    std::size_t n = 0;
    for (const Step& s : sched.steps)
      if (s.kind == StepKind::compute) {
        const double us = coster.compute_us(s);
        EXPECT_GE(us, 0) << c.name << ": " << s.op;
        sum += us;
        ++n;
      }
    const double total = coster.terms().total_us(c.m.layers, c.o.recompute);
    // Both are sums of the same nonnegative terms in another order: within n roundings of total.
    EXPECT_NEAR(sum, total, 4.0 * n * std::numeric_limits<double>::epsilon() * total) << c.name;
  }
}

TEST(StepCost, UnknownKernelIsAnError) {
  const auto c = export_cases().front();
  const StepCoster coster(c.m, c.o, test::synthetic_machine());
  Step s;
  s.op = "no_such_kernel";
  EXPECT_THROW(coster.compute_us(s), Error);
}

TEST(ExecGraph, EdgesAreTheSchedules) {
  const Machine mc = test::synthetic_machine();
  for (const auto& c : export_cases()) {
    SCOPED_TRACE(c.name);
    const GptSchedule sched = gpt_schedule(c.m, c.o);
    const Grid grid(c.o.grid, c.o.grid.world());
    const ExecGraph g = exec_graph(sched, StepCoster(c.m, c.o, mc), mc, grid);
    // Nodes: the compute and issue steps, in order.
    std::vector<std::uint64_t> node_of(sched.steps.size(), 0),
        issue_node(sched.collectives.size(), 0);
    std::size_t k = 0;
    int computes = 0, issues = 0;
    for (std::size_t i = 0; i < sched.steps.size(); ++i) {
      const Step& s = sched.steps[i];
      if (s.kind != StepKind::compute && s.kind != StepKind::issue) continue;
      ASSERT_LT(k, g.nodes.size());
      const ExecNode& n = g.nodes[k++];
      EXPECT_EQ(n.id, k);
      EXPECT_EQ(n.step, static_cast<int>(i));
      EXPECT_EQ(n.collective, s.kind == StepKind::issue);
      EXPECT_EQ(n.name, describe(s, sched));
      node_of[i] = n.id;
      if (s.kind == StepKind::issue) {
        issue_node[static_cast<std::size_t>(s.coll)] = n.id;
        ++issues;
      } else {
        ++computes;
      }
    }
    EXPECT_EQ(k, g.nodes.size());
    EXPECT_EQ(g.compute_nodes, computes);
    EXPECT_EQ(g.collective_nodes, issues);
    EXPECT_EQ(issues, static_cast<int>(sched.collectives.size()));
    // Edges, from each node's step backwards.
    for (const ExecNode& n : g.nodes) {
      const std::size_t i = static_cast<std::size_t>(n.step);
      std::set<std::uint64_t> data, ctrl;
      for (std::size_t j = i; j-- > 0;) {
        const Step& s = sched.steps[j];
        if (s.kind == StepKind::compute) {
          data.insert(node_of[j]);
          break;
        }
        if (s.kind == StepKind::wait) data.insert(issue_node[static_cast<std::size_t>(s.coll)]);
      }
      const Step& s = sched.steps[i];
      if (s.kind == StepKind::issue) {
        for (int d : s.deps) data.insert(issue_node[static_cast<std::size_t>(d)]);
        for (std::size_t j = i; j-- > 0;)
          if (sched.steps[j].kind == StepKind::issue && sched.steps[j].stream == s.stream) {
            ctrl.insert(node_of[j]);
            break;
          }
      }
      EXPECT_EQ(n.data_deps, sorted(data)) << n.name;
      EXPECT_EQ(n.ctrl_deps, sorted(ctrl)) << n.name;
      for (std::uint64_t d : n.data_deps) EXPECT_LT(d, n.id) << "not in topological order";
    }
    // Every collective is waited for before a later compute node depends on it, or at the end.
    for (std::size_t i = 0; i < sched.steps.size(); ++i) {
      const Step& s = sched.steps[i];
      if (s.kind != StepKind::wait) continue;
      auto next =
          std::find_if(sched.steps.begin() + static_cast<std::ptrdiff_t>(i), sched.steps.end(),
                       [](const Step& t) { return t.kind == StepKind::compute; });
      if (next == sched.steps.end()) continue;  // the end of the step: no edge needed
      const ExecNode& n =
          g.nodes[node_of[static_cast<std::size_t>(next - sched.steps.begin())] - 1];
      EXPECT_TRUE(std::binary_search(n.data_deps.begin(), n.data_deps.end(),
                                     issue_node[static_cast<std::size_t>(s.coll)]))
          << describe(s, sched);
    }
  }
}

TEST(CommGroups, AreTheGridsGroups) {
  for (const char* shape : {"2x2x2x2", "4x1x2x2:z,x,y", "1x1x1x1", "2x4x1x8:y,z,x"}) {
    SCOPED_TRACE(shape);
    const GridShape gs = GridShape::parse(shape);
    const Grid grid(gs, gs.world());
    const CommGroups groups(grid);
    std::set<int> ids;
    for (const CommGroup& c : groups.all()) {
      EXPECT_TRUE(ids.insert(c.id).second);
      EXPECT_GT(c.ranks.size(), 1u);
    }
    if (!ids.empty()) {
      EXPECT_EQ(*ids.begin(), 1);
    }
    for (int r = 0; r < gs.world(); ++r)
      for (Group g : {Group::x, Group::y, Group::z, Group::data, Group::world}) {
        const int size = g == Group::world ? gs.world() : gs.size(static_cast<Dim>(g));
        if (size == 1) {
          EXPECT_THROW(groups.id(g, r), Error);
          continue;
        }
        const int id = groups.id(g, r);
        const auto it = std::find_if(groups.all().begin(), groups.all().end(),
                                     [&](const CommGroup& c) { return c.id == id; });
        ASSERT_NE(it, groups.all().end());
        EXPECT_EQ(it->group, g);
        // Members: every rank whose coordinates equal r's but along the group's dimension, in the
        // order of that coordinate.
        std::vector<int> want;
        for (int q = 0; q < gs.world(); ++q) {
          bool same = true;
          for (Dim d : kAllDims)
            if (g != Group::world && d != static_cast<Dim>(g) &&
                grid.coords(q)[d] != grid.coords(r)[d])
              same = false;
          if (same) want.push_back(q);
        }
        if (g != Group::world)
          std::stable_sort(want.begin(), want.end(), [&](int a, int b) {
            return grid.coords(a)[static_cast<Dim>(g)] < grid.coords(b)[static_cast<Dim>(g)];
          });
        EXPECT_EQ(it->ranks, want) << "rank " << r << " group " << name_of(g);
      }
  }
}

}  // namespace
}  // namespace ovb::model

namespace ovb::model {
namespace {

// c1 (10 us) -> collectives k2 (5 us, stream A) and k3 (7 us, stream B), and c4 (3 us); c5 (1 us)
// after c4, k2 and k3.
ExecGraph hand_graph() {
  ExecGraph g;
  auto node = [&](bool coll, double us, std::vector<std::uint64_t> deps) {
    ExecNode n;
    n.id = g.nodes.size() + 1;
    n.collective = coll;
    n.duration_us = us;
    n.data_deps = std::move(deps);
    g.nodes.push_back(n);
  };
  node(false, 10, {});
  node(true, 5, {1});
  node(true, 7, {1});
  node(false, 3, {1});
  node(false, 1, {2, 3, 4});
  return g;
}

TEST(GraphReplay, StreamsAndOneQueue) {
  const ExecGraph g = hand_graph();
  // Streams: k2 10-15 and k3 10-17 beside c4 10-13; c5 17-18.
  EXPECT_DOUBLE_EQ(replay_us(g, {}), 18);
  // One queue: k3 waits for k2, 15-22; c5 22-23.
  EXPECT_DOUBLE_EQ(replay_us(g, {.one_comm_queue = true}), 23);
}

TEST(GraphReplay, ControlDependenciesOrderAStream) {
  ExecGraph g = hand_graph();
  g.nodes[2].ctrl_deps = {2};  // k3 after k2 on one stream: 15-22
  EXPECT_DOUBLE_EQ(replay_us(g, {}), 23);
}

TEST(GraphReplay, WholeMicroseconds) {
  ExecGraph g;
  for (int i = 0; i < 3; ++i) {
    ExecNode n;
    n.id = static_cast<std::uint64_t>(i + 1);
    n.duration_us = 0.4;
    if (i > 0) n.data_deps = {n.id - 1};
    g.nodes.push_back(n);
  }
  EXPECT_NEAR(replay_us(g, {}), 1.2, 1e-12);
  EXPECT_DOUBLE_EQ(replay_us(g, {.whole_microseconds = true}), 0);
}

}  // namespace
}  // namespace ovb::model
