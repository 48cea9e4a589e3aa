// Interval algebra for trace analysis (see intervals.hpp).
#include "intervals.hpp"

#include <algorithm>

namespace ovb {

std::vector<Interval> interval_union(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return !(i.end > i.begin); });
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.begin <= out.back().end)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

double total_length(const std::vector<Interval>& u) {
  double s = 0;
  for (const Interval& i : u) s += i.end - i.begin;
  return s;
}

double intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].begin, b[j].begin);
    const double hi = std::min(a[i].end, b[j].end);
    if (hi > lo) s += hi - lo;
    if (a[i].end < b[j].end) ++i; else ++j;
  }
  return s;
}

std::vector<Interval> interval_intersection(const std::vector<Interval>& a,
                                            const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].begin, b[j].begin);
    const double hi = std::min(a[i].end, b[j].end);
    if (hi > lo) out.push_back({lo, hi});
    if (a[i].end < b[j].end) ++i; else ++j;
  }
  return out;
}

std::vector<Interval> interval_difference(const std::vector<Interval>& a,
                                          const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t j = 0;
  for (const Interval& x : a) {
    double lo = x.begin;
    // Skip the parts of b that end before this interval starts; b is sorted, so they stay skipped.
    while (j < b.size() && b[j].end <= lo) ++j;
    for (std::size_t k = j; k < b.size() && b[k].begin < x.end; ++k) {
      if (b[k].begin > lo) out.push_back({lo, b[k].begin});
      lo = std::max(lo, b[k].end);
    }
    if (x.end > lo) out.push_back({lo, x.end});
  }
  return out;
}

TraceOverlap trace_overlap(const std::vector<Interval>& compute, const std::vector<Interval>& comm,
                           const std::vector<Interval>& memory) {
  TraceOverlap r;
  const auto uc = interval_union(compute);
  const auto um = interval_union(comm);
  const auto umem = interval_union(memory);
  std::vector<Interval> all;
  all.reserve(uc.size() + um.size() + umem.size());
  all.insert(all.end(), uc.begin(), uc.end());
  all.insert(all.end(), um.begin(), um.end());
  all.insert(all.end(), umem.begin(), umem.end());
  const auto ua = interval_union(all);
  if (ua.empty()) return r;
  r.span = ua.back().end - ua.front().begin;
  r.busy = total_length(ua);
  r.idle = r.span - r.busy;
  r.compute = total_length(uc);
  r.comm = total_length(um);
  r.memory = total_length(umem);
  r.overlapped_comm = intersection_length(um, uc);
  r.exposed_comm = r.comm - r.overlapped_comm;
  r.overlap_pct = r.comm > 0 ? 100.0 * r.overlapped_comm / r.comm : 0.0;
  return r;
}

}  // namespace ovb
