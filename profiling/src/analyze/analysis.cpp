// Overlap analysis of per-rank traces and its summaries across ranks (see analysis.hpp).
#include "analysis.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include "ovb/error.hpp"
#include "ovb/metrics.hpp"

namespace ovb::trace {

namespace {

// |U ∩ [lo, hi]| in O(log n) for a union U, through prefix sums of its lengths.
class CoverIndex {
 public:
  explicit CoverIndex(std::vector<Interval> u) : u_(std::move(u)), prefix_(u_.size() + 1, 0.0) {
    for (std::size_t i = 0; i < u_.size(); ++i)
      prefix_[i + 1] = prefix_[i] + (u_[i].end - u_[i].begin);
  }
  double covered(double lo, double hi) const { return hi > lo ? upto(hi) - upto(lo) : 0.0; }

 private:
  double upto(double x) const {  // |U ∩ (-inf, x]|
    const auto it = std::upper_bound(u_.begin(), u_.end(), x,
                                     [](double v, const Interval& i) { return v < i.begin; });
    const std::size_t k = static_cast<std::size_t>(it - u_.begin());
    if (k == 0) return 0.0;
    return prefix_[k - 1] + std::min(x, u_[k - 1].end) - u_[k - 1].begin;
  }
  std::vector<Interval> u_;
  std::vector<double> prefix_;
};

constexpr double kNsPerUs = 1000.0;

TraceOverlap to_us(TraceOverlap m) {
  for (double* v : {&m.span, &m.busy, &m.idle, &m.compute, &m.comm, &m.memory, &m.overlapped_comm,
                    &m.exposed_comm})
    *v /= kNsPerUs;
  return m;
}

}  // namespace

std::optional<double> CollectiveStats::algbw() const {
  if (!bytes || total_us <= 0) return std::nullopt;
  return metrics::algbw_gbps(*bytes, total_us * 1e-6);
}

RankReport analyze_rank(const RankTrace& t) {
  RankReport r;
  r.path = t.path;
  r.rank = t.rank;
  r.skipped = t.skipped;
  // Interval algebra in nanoseconds relative to the first event: integers, exact in doubles.
  std::int64_t t0 = std::numeric_limits<std::int64_t>::max();
  for (const ActivityEvent& a : t.activity) t0 = std::min(t0, a.begin_ns);
  for (const auto* v : {&t.cpu_ranges, &t.gpu_ranges})
    for (const RangeEvent& e : *v) t0 = std::min(t0, e.begin_ns);
  auto rel = [t0](std::int64_t v) { return static_cast<double>(v - t0); };

  std::vector<Interval> compute, comm, memory;
  std::map<std::int32_t, CollectiveStats> colls;
  for (const ActivityEvent& a : t.activity) {
    const Interval iv{rel(a.begin_ns), rel(a.end_ns)};
    CategoryStats& k = r.kernels[static_cast<std::size_t>(a.category)];
    k.count += 1;
    k.total_us += static_cast<double>(a.end_ns - a.begin_ns) / kNsPerUs;
    if (a.cls == EventClass::compute) compute.push_back(iv);
    if (a.cls == EventClass::memory) memory.push_back(iv);
    if (a.cls != EventClass::comm) continue;
    comm.push_back(iv);
    auto [it, added] = colls.try_emplace(a.coll);
    CollectiveStats& c = it->second;
    if (added) {
      c.kind = t.collectives[a.coll].kind;
      c.group = t.collectives[a.coll].group;
      c.bytes = 0.0;
    }
    ++c.count;
    c.total_us += static_cast<double>(a.end_ns - a.begin_ns) / kNsPerUs;
    if (a.bytes < 0 || !c.bytes)
      c.bytes.reset();  // one event without bytes: the total is unknown
    else
      *c.bytes += static_cast<double>(a.bytes);
  }
  r.overlap = to_us(trace_overlap(compute, comm, memory));
  r.serialization = serialization_stats(t);
  for (auto& [id, c] : colls) r.collectives.push_back(std::move(c));
  std::sort(r.collectives.begin(), r.collectives.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.group) < std::tie(b.kind, b.group);
  });

  // Ranges: GPU spans when the trace has them (they line up with the kernels), else CPU ranges.
  r.gpu_ranges = !t.gpu_ranges.empty();
  const auto& ranges = r.gpu_ranges ? t.gpu_ranges : t.cpu_ranges;
  const auto comm_union = interval_union(comm);
  const CoverIndex comm_index(comm_union);
  const CoverIndex exposed_index(interval_difference(comm_union, interval_union(compute)));
  std::vector<std::vector<Interval>> instances(t.range_names.size());
  std::vector<double> totals(t.range_names.size(), 0.0);
  for (const RangeEvent& e : ranges) {
    instances[e.name].push_back({rel(e.begin_ns), rel(e.end_ns)});
    totals[e.name] += static_cast<double>(e.end_ns - e.begin_ns) / kNsPerUs;
  }
  for (std::size_t n = 0; n < instances.size(); ++n) {
    if (instances[n].empty()) continue;
    RangeStats s{t.range_names[n],
                 t.range_categories[n],
                 static_cast<std::int64_t>(instances[n].size()),
                 totals[n],
                 0,
                 0};
    for (const Interval& piece : interval_union(instances[n])) {
      s.comm_us += comm_index.covered(piece.begin, piece.end) / kNsPerUs;
      s.exposed_comm_us += exposed_index.covered(piece.begin, piece.end) / kNsPerUs;
    }
    r.ranges.push_back(std::move(s));
  }
  std::sort(r.ranges.begin(), r.ranges.end(), [](const auto& a, const auto& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.name < b.name;
  });
  return r;
}

std::vector<RankReport> analyze_traces(const std::vector<std::string>& paths,
                                       std::ostream* progress, int warmup) {
  std::vector<RankReport> reports;
  std::map<int, std::string> seen;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(paths[i], ec);
    if (progress && !ec && size > (100u << 20))
      *progress << "ovb-trace: reading " << paths[i] << " (" << size / (1u << 20) << " MB, "
                << i + 1 << " of " << paths.size() << ")" << std::endl;
    RankTrace t = load_rank_trace(paths[i]);
    if (t.rank < 0) t.rank = static_cast<int>(i);
    if (const auto [it, added] = seen.try_emplace(t.rank, paths[i]); !added)
      throw UsageError("traces '" + it->second + "' and '" + paths[i] + "' are both of rank " +
                       std::to_string(t.rank));
    const SteadyState steady = find_steady_state(t, warmup);
    reports.push_back(analyze_rank(restrict_to(std::move(t), steady)));
    reports.back().steady = steady;
  }
  std::sort(reports.begin(), reports.end(),
            [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  return reports;
}

KernelBreakdown mean_breakdown(const std::vector<RankReport>& reports) {
  KernelBreakdown k{};
  for (const RankReport& r : reports)
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i].count += r.kernels[i].count / static_cast<double>(reports.size());
      k[i].total_us += r.kernels[i].total_us / static_cast<double>(reports.size());
    }
  return k;
}

// Collectives of several ranks summed per (kind, group).
std::vector<CollectiveStats> sum_collectives(const std::vector<RankReport>& reports) {
  std::map<std::pair<std::string, std::string>, CollectiveStats> all;
  for (const RankReport& r : reports)
    for (const CollectiveStats& c : r.collectives) {
      auto [it, added] = all.try_emplace({c.kind, c.group}, c);
      if (added) continue;
      it->second.count += c.count;
      it->second.total_us += c.total_us;
      it->second.bytes =
          it->second.bytes && c.bytes ? std::optional(*it->second.bytes + *c.bytes) : std::nullopt;
    }
  std::vector<CollectiveStats> out;
  for (auto& [k, c] : all) out.push_back(std::move(c));
  return out;
}

TraceOverlap mean_overlap(const std::vector<RankReport>& reports) {
  TraceOverlap m;
  if (reports.empty()) return m;
  for (const RankReport& r : reports) {
    m.span += r.overlap.span;
    m.busy += r.overlap.busy;
    m.idle += r.overlap.idle;
    m.compute += r.overlap.compute;
    m.comm += r.overlap.comm;
    m.memory += r.overlap.memory;
    m.overlapped_comm += r.overlap.overlapped_comm;
    m.exposed_comm += r.overlap.exposed_comm;
    m.overlap_pct += r.overlap.overlap_pct;
  }
  const double n = static_cast<double>(reports.size());
  for (double* v : {&m.span, &m.busy, &m.idle, &m.compute, &m.comm, &m.memory, &m.overlapped_comm,
                    &m.exposed_comm, &m.overlap_pct})
    *v /= n;
  return m;
}

SerializationStats total_serialization(const std::vector<RankReport>& reports) {
  SerializationStats s;
  for (const RankReport& r : reports) s += r.serialization;
  return s;
}

SkipCounts total_skipped(const std::vector<RankReport>& reports) {
  SkipCounts k;
  for (const RankReport& r : reports) {
    k.missing_fields += r.skipped.missing_fields;
    k.unknown_kind += r.skipped.unknown_kind;
    k.ignored += r.skipped.ignored;
  }
  return k;
}

}  // namespace ovb::trace
