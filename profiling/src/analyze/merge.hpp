// `ovb-trace merge`: several per-rank traces combined into one file for Perfetto, each rank's
// processes renamed "rank R: <name>" (pids remapped so ranks never collide, sorted by rank), flow
// ids made unique per rank, and every rank's times moved onto one time base (the earliest
// baseTimeNanoseconds), so ranks line up as far as their clocks agree. Streams: two passes over
// each input (header, then events), nothing of a trace is held in memory.
//
// Predicted and measured traces side by side: a trace whose ovbTracer.mode is "predicted"
// (`ovb-model explain --timeline`) is another source than the measured ones, so its rank 0 and a
// measured rank 0 are two processes, "predicted rank 0: ..." and "measured rank 0: ...". Its
// iteration is moved to start where the measured run's steady-state iteration of median duration
// starts (median_iteration() of the lowest measured rank, steady_state.hpp; that rank is read
// once more for it), or where the measured trace starts when it marks no iteration. Two traces of
// one rank from one source are still an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ovb::trace {

// Where a predicted trace was put on the measured run's clock (the merged file's "alignment").
struct MergeAlignment {
  std::string rule;   // "median steady-state iteration" or "trace start (no iteration marks)"
  int rank = 0;       // the measured rank it was taken from
  int iteration = 0;  // its index among that rank's marked iterations (from 0; -1: none marked)
  int iterations = 0, warmup = 0;
  std::int64_t begin_ns = 0;  // the measured iteration's start, on the merged file's time base
  std::int64_t measured_ns = 0, predicted_ns = 0;  // the two iterations' durations (0: unknown)
};

struct MergeSummary {
  std::size_t events = 0;
  int ranks = 0;      // measured ranks, or every input when all come from one source
  int predicted = 0;  // predicted traces beside measured ones
  std::optional<MergeAlignment> alignment;
};

// Throws UsageError for unreadable / malformed inputs or two inputs of one rank and source.
MergeSummary merge_traces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace ovb::trace
