// Interval algebra for trace analysis: unions, lengths and intersections of time intervals, and the
// per-rank overlap metrics of docs/metrics.md ("Overlap in a trace").
#pragma once

#include <vector>

namespace ovb {

struct Interval {
  double begin = 0;  // any time unit; the results are in the same unit
  double end = 0;
};

// The union as sorted, disjoint intervals; touching intervals merge; empty ones are dropped.
std::vector<Interval> interval_union(std::vector<Interval> v);

// |U(v)|, for v already a union (sorted, disjoint).
double total_length(const std::vector<Interval>& u);

// |U(a) ∩ U(b)| for two unions.
double intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// U(a) ∩ U(b) and U(a) \ U(b) for two unions, as unions (sorted, disjoint, non-empty intervals).
// E.g. exposed communication = interval_difference(U(comm), U(compute)).
std::vector<Interval> interval_intersection(const std::vector<Interval>& a,
                                            const std::vector<Interval>& b);
std::vector<Interval> interval_difference(const std::vector<Interval>& a,
                                          const std::vector<Interval>& b);

struct TraceOverlap {
  double span = 0;        // last end - first start, over all events
  double busy = 0;        // |U(all)|
  double idle = 0;        // span - busy
  double compute = 0;     // |U(compute)|
  double comm = 0;        // |U(comm)|
  double memory = 0;      // |U(memory)|
  double overlapped_comm = 0;  // |U(comm) ∩ U(compute)|
  double exposed_comm = 0;     // comm - overlapped comm
  double overlap_pct = 0;      // 100 * overlapped comm / comm (0 when there is no comm)
};

TraceOverlap trace_overlap(const std::vector<Interval>& compute, const std::vector<Interval>& comm,
                           const std::vector<Interval>& memory);

}  // namespace ovb
