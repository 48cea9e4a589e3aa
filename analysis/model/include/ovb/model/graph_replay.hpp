// The time of an execution graph (exec_graph.hpp) replayed with its node durations: one compute
// node at a time, collectives either on their streams (several in flight, one per stream) or on a
// single queue (one collective in flight, as ASTRA-sim runs a rank's collectives), optionally with
// every duration rounded to whole microseconds (a Chakra trace's duration_micros). A node starts
// when its data and control dependencies have finished and its resource is free; among ready
// nodes the lowest id goes first. `ovb-model export-chakra` reports what ASTRA-sim's limits cost a
// configuration this way (docs/chakra.md, "What ASTRA-sim keeps of the overlaps"). No
// interference terms: this is the graph's critical path under the resource limits, not the
// model's prediction.
#pragma once

#include "ovb/model/exec_graph.hpp"

namespace ovb::model {

struct ReplayOptions {
  bool one_comm_queue = false;  // else one collective in flight per stream
  bool whole_microseconds = false;
};

double replay_us(const ExecGraph& g, const ReplayOptions& o);

}  // namespace ovb::model
