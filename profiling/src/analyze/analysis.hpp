// The overlap analysis of per-rank traces: the metrics of docs/metrics.md ("Overlap in a
// trace", via ovb::trace_overlap) per rank and as a mean across ranks, per collective kind and
// group, per range (NVTX / ScopedRange name), and the kernel time per category (GEMM, attention,
// communication, optimizer, elementwise, memory) beside the idle time. JSON as results/SCHEMA.md
// "Trace analysis" (written by analysis_report.hpp).
#pragma once

#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "intervals.hpp"
#include "rank_trace.hpp"
#include "serialization.hpp"
#include "steady_state.hpp"

namespace ovb::trace {

struct CollectiveStats {
  std::string kind, group;
  std::int64_t count = 0;
  double total_us = 0;          // sum of the events' durations
  std::optional<double> bytes;  // sum of S over the events, when every event states it
  double mean_us() const { return count ? total_us / count : 0; }
  std::optional<double> algbw() const;  // GB/s = bytes / total time (metrics::algbw_gbps)
};

struct RangeStats {
  std::string name, category;
  std::int64_t count = 0;
  double total_us = 0;         // sum of the instances' durations
  double comm_us = 0;          // |U(comm) ∩ U(instances)|
  double exposed_comm_us = 0;  // |(U(comm) \ U(compute)) ∩ U(instances)|
};

// Kernel time of one category (classify.hpp KernelCategory): count and summed duration.
struct CategoryStats {
  double count = 0;  // events (a mean over ranks may be fractional)
  double total_us = 0;
};
using KernelBreakdown = std::array<CategoryStats, kKernelCategories>;  // by KernelCategory

struct RankReport {
  std::string path;
  int rank = 0;
  TraceOverlap overlap;     // in microseconds
  bool gpu_ranges = false;  // ranges are gpu_user_annotation spans (else CPU-side annotations)
  std::vector<CollectiveStats> collectives;  // sorted by kind, group
  std::vector<RangeStats> ranges;            // sorted by total_us, descending
  KernelBreakdown kernels{};                 // activity time per category; idle: overlap.idle
  SerializationStats serialization;          // the "streams serialized" finding's counts
  SkipCounts skipped;
  SteadyState steady;  // the iterations analysed (all of the trace when none are marked)
};

RankReport analyze_rank(const RankTrace& t);

// Ranks from distributedInfo; traces without one take their position among the inputs. Two
// traces of one rank: UsageError naming both files. With `progress`, files over 100 MB are named
// there as they are read (long runs print progress). Traces with marked iterations are analysed
// over their steady state only (steady_state.hpp; warmup < 0: the warm-up rule).
std::vector<RankReport> analyze_traces(const std::vector<std::string>& paths,
                                       std::ostream* progress = nullptr, int warmup = -1);

// Summaries across ranks, shared by the JSON and the text forms (analysis_report.hpp).
// Means over ranks of every overlap field and of each kernel category's count and time; the
// collectives summed per (kind, group); the skipped events summed.
TraceOverlap mean_overlap(const std::vector<RankReport>& reports);
KernelBreakdown mean_breakdown(const std::vector<RankReport>& reports);
std::vector<CollectiveStats> sum_collectives(const std::vector<RankReport>& reports);
SkipCounts total_skipped(const std::vector<RankReport>& reports);
SerializationStats total_serialization(const std::vector<RankReport>& reports);

}  // namespace ovb::trace
