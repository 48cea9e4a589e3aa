// Replay of an execution graph under resource limits (see graph_replay.hpp).
#include "ovb/model/graph_replay.hpp"

#include <cmath>
#include <functional>
#include <queue>
#include <set>
#include <utility>
#include <vector>

namespace ovb::model {

double replay_us(const ExecGraph& g, const ReplayOptions& o) {
  const std::size_t n = g.nodes.size();
  std::vector<int> missing(n, 0);
  std::vector<std::vector<std::size_t>> children(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ExecNode& e = g.nodes[i];
    for (const auto* deps : {&e.data_deps, &e.ctrl_deps})
      for (std::uint64_t d : *deps) {
        children[d - 1].push_back(i);
        ++missing[i];
      }
  }
  std::set<std::size_t> ready_compute, ready_comm;  // by id
  for (std::size_t i = 0; i < n; ++i)
    if (missing[i] == 0) (g.nodes[i].collective ? ready_comm : ready_compute).insert(i);
  using Event = std::pair<double, std::size_t>;  // finish time, node
  std::priority_queue<Event, std::vector<Event>, std::greater<>> running;
  bool compute_busy = false, comm_busy = false;
  double now = 0;
  auto duration = [&](std::size_t i) {
    const double d = g.nodes[i].duration_us;
    return o.whole_microseconds ? std::round(d) : d;
  };
  std::size_t done = 0;
  while (done < n) {
    if (!compute_busy && !ready_compute.empty()) {
      const std::size_t i = *ready_compute.begin();
      ready_compute.erase(ready_compute.begin());
      running.push({now + duration(i), i});
      compute_busy = true;
    }
    // Per stream: the control dependencies already keep one collective of a stream in flight.
    while (!ready_comm.empty() && !(o.one_comm_queue && comm_busy)) {
      const std::size_t i = *ready_comm.begin();
      ready_comm.erase(ready_comm.begin());
      running.push({now + duration(i), i});
      comm_busy = true;
    }
    if (running.empty()) break;  // a cycle (never in exec_graph's graphs): nothing can start
    const auto [t, i] = running.top();
    running.pop();
    now = t;
    ++done;
    if (g.nodes[i].collective)
      comm_busy = false;
    else
      compute_busy = false;
    for (std::size_t c : children[i])
      if (--missing[c] == 0) (g.nodes[c].collective ? ready_comm : ready_compute).insert(c);
  }
  return now;
}

}  // namespace ovb::model
