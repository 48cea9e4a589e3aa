// The nccl-tests-style table ovb-collective prints after Google Benchmark's output, so results
// can be put side by side with nccl-tests (all_reduce_perf etc.): one block per collective, dtype,
// group and CTA setting; one row per size with out-of-place and in-place columns.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "collective/coll_bench.hpp"
#include "harness/reporting.hpp"

namespace ovb::mb {

// points: the registered benchmarks by name (RunRecord::family). With repetitions, the median
// aggregate is shown. Time is time_max_us (what busbw uses).
void print_nccl_table(std::ostream& out, const std::vector<RunRecord>& records,
                      const std::map<std::string, CollPoint>& points);

}  // namespace ovb::mb
