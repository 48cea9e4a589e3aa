// Collectives in flight at the same time share the link that bounds them (the replay of
// timeline.cpp; the rules in docs/model-costs.md, "Overlap"). A fluid model: each collective is its
// latency term (alpha: no link) followed by its bandwidth term (moved / bw) on one link,
//  - a group inside a node: the rank's NVLink, of which it takes bw / the bandwidth of a
//    node-wide group (the machine's own intra figure), so that a pair on Perlmutter's
//    point-to-point NVLink (76 of 225 GB/s) leaves room for another pair;
//  - a group across nodes: the node's NICs, all of them (cost_collective() already divides the
//    node's bandwidth among the groups of one collective that cross it at once). Such a ring
//    also hops over NVLink, at the NIC's rate per rank (20 of 225 GB/s on Perlmutter, 47 of 370
//    on a DGX H100): not counted.
// While the bandwidth terms on a link ask for more than it has, they share it max-min fairly
// (equal bytes, a collective never above its stand-alone rate): k equal collectives each progress
// at 1/k. Rates are recomputed whenever a collective starts, ends its latency or ends. A
// collective that never shared its link ends exactly at start + duration, as without this file.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "ovb/model/comm_cost.hpp"
#include "ovb/model/machine.hpp"

namespace ovb::model {

enum class Link : std::uint8_t { nvlink, nic };

// How one collective uses the links when it runs alone.
struct LinkUse {
  double us = 0;          // its stand-alone time (CollCost::time_us)
  double latency_us = 0;  // the part of it that is latency (CollCost::alpha_us)
  Link link = Link::nvlink;
  double share = 1;  // fraction of the link its bandwidth term takes, (0, 1]
};
LinkUse link_use(const Machine& m, const CollCost& c);

// The collectives of one replay on the communication streams, in issue order (ids 0, 1, ...).
// Time only moves forward: the replay asks for an end or runs the links through a time only once
// every collective that could start before it has been added.
class LinkShare {
 public:
  void clear();
  // The next collective: on `stream`, starting at `ready` or when the stream's previous
  // collective and every one of `deps` has ended, its terms stretched by `stretch`.
  void add(int stream, double ready, const std::vector<int>& deps, const LinkUse& use,
           double stretch);
  void run_through(double t);  // every start and end at or before t
  double end(int id);          // runs the links until collective id has ended
  double start(int id) const { return flows_[static_cast<std::size_t>(id)].start; }  // -1: not yet
  // Its time in flight before t (after run_through(t)).
  double ran_before(int id, double t) const;
  // Whether it ever ran slower than alone (then its duration is no longer its cost).
  bool shared(int id) const { return flows_[static_cast<std::size_t>(id)].shared; }
  double duration(int id) const { return flows_[static_cast<std::size_t>(id)].duration; }

 private:
  struct Flow {
    double ready = 0, start = -1, end = -1;
    double duration = 0;                     // alone, stretched
    double latency_left = 0, work_left = 0;  // stretched microseconds
    double share = 1;
    double rate = 1;  // of its bandwidth term, while in flight
    Link link = Link::nvlink;
    bool shared = false;
    int deps_begin = 0, deps_end = 0;  // in deps_
  };
  static constexpr int kStreams = 4;
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  void plan();
  bool step(double limit);  // the next start or end, if at or before limit
  bool startable(const Flow& f) const;
  void set_rates();
  double event_at(const Flow& f) const;

  std::vector<Flow> flows_;
  std::vector<int> deps_;
  std::array<std::vector<int>, kStreams> queue_;  // by stream, in issue order
  std::array<std::size_t, kStreams> head_{};      // its first collective not ended
  double now_ = 0;
  bool planned_ = false;               // next_ and at_ hold for the state as it is
  double next_ = kNever;               // the next event
  std::array<double, kStreams> at_{};  // each stream head's next event, kNever if not in flight
};

}  // namespace ovb::model
