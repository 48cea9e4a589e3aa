// `ovb-trace merge`: several per-rank traces combined into one file for Perfetto, each rank's
// processes renamed "rank R: <name>" (pids remapped so ranks never collide, sorted by rank), flow
// ids made unique per rank, and every rank's times moved onto one time base (the earliest
// baseTimeNanoseconds), so ranks line up as far as their clocks agree. Streams: two passes over
// each input (header, then events), nothing of a trace is held in memory.
#pragma once

#include <string>
#include <vector>

namespace ovb::trace {

struct MergeSummary {
  std::size_t events = 0;
  int ranks = 0;
};

// Throws UsageError for unreadable / malformed inputs or two inputs of one rank.
MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace ovb::trace
