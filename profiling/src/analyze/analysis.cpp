// Overlap analysis of per-rank traces (see analysis.hpp).
#include "analysis.hpp"

#include <algorithm>
#include <cstdio>
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

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json overlap_json(const TraceOverlap& m) {
  return {{"span_us", m.span},
          {"busy_us", m.busy},
          {"idle_us", m.idle},
          {"compute_us", m.compute},
          {"comm_us", m.comm},
          {"memory_us", m.memory},
          {"overlapped_comm_us", m.overlapped_comm},
          {"exposed_comm_us", m.exposed_comm},
          {"overlap_pct", m.overlap_pct}};
}

nlohmann::json collective_json(const CollectiveStats& c) {
  return {{"kind", c.kind},
          {"group", c.group},
          {"count", c.count},
          {"total_us", c.total_us},
          {"mean_us", c.mean_us()},
          {"bytes", optional_json(c.bytes)},
          {"algbw", optional_json(c.algbw())}};
}

// {"gemm": {"count", "total_us", "pct", "span_pct"}, ..., "kernel_total_us", "idle_us",
// "idle_pct"}: pct of the summed activity time, span_pct of the span (several streams can make
// the categories' span_pct add up to more than 100).
nlohmann::json breakdown_json(const KernelBreakdown& k, const TraceOverlap& m) {
  double total = 0;
  for (const CategoryStats& c : k) total += c.total_us;
  auto pct = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
  nlohmann::json j;
  for (int i = 0; i < kKernelCategories; ++i) {
    const CategoryStats& c = k[static_cast<std::size_t>(i)];
    j[std::string(name_of(static_cast<KernelCategory>(i)))] = {
        {"count", c.count},
        {"total_us", c.total_us},
        {"pct", pct(c.total_us, total)},
        {"span_pct", pct(c.total_us, m.span)}};
  }
  j["kernel_total_us"] = total;
  j["idle_us"] = m.idle;
  j["idle_pct"] = pct(m.idle, m.span);
  return j;
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
                                       std::ostream* progress) {
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
    reports.push_back(analyze_rank(t));
  }
  std::sort(reports.begin(), reports.end(),
            [](const RankReport& a, const RankReport& b) { return a.rank < b.rank; });
  return reports;
}

nlohmann::json report_json(const std::vector<RankReport>& reports,
                           const std::vector<std::string>& inputs) {
  nlohmann::json ranks = nlohmann::json::array();
  SkipCounts skipped;
  for (const RankReport& r : reports) {
    nlohmann::json j = {{"rank", r.rank}, {"path", r.path}};
    j.update(overlap_json(r.overlap));
    j["collectives"] = nlohmann::json::array();
    for (const CollectiveStats& c : r.collectives) j["collectives"].push_back(collective_json(c));
    j["kernel_breakdown"] = breakdown_json(r.kernels, r.overlap);
    j["ranges_from"] = r.gpu_ranges ? "gpu_user_annotation" : "user_annotation";
    j["ranges"] = nlohmann::json::array();
    for (const RangeStats& s : r.ranges)
      j["ranges"].push_back({{"name", s.name},
                             {"category", s.category},
                             {"count", s.count},
                             {"total_us", s.total_us},
                             {"comm_us", s.comm_us},
                             {"exposed_comm_us", s.exposed_comm_us}});
    j["skipped"] = {{"missing_fields", r.skipped.missing_fields},
                    {"unknown_kind", r.skipped.unknown_kind},
                    {"ignored", r.skipped.ignored}};
    ranks.push_back(std::move(j));
    skipped.missing_fields += r.skipped.missing_fields;
    skipped.unknown_kind += r.skipped.unknown_kind;
    skipped.ignored += r.skipped.ignored;
  }
  nlohmann::json summary = {{"ranks", reports.size()}};
  summary.update(overlap_json(mean_overlap(reports)));
  summary["kernel_breakdown"] = breakdown_json(mean_breakdown(reports), mean_overlap(reports));
  summary["collectives"] = nlohmann::json::array();
  for (const CollectiveStats& c : sum_collectives(reports))
    summary["collectives"].push_back(collective_json(c));
  return {{"inputs", inputs},
          {"ranks", std::move(ranks)},
          {"summary", std::move(summary)},
          {"skipped",
           {{"missing_fields", skipped.missing_fields},
            {"unknown_kind", skipped.unknown_kind},
            {"ignored", skipped.ignored}}}};
}

void print_report(std::ostream& os, const std::vector<RankReport>& reports, int top_ranges) {
  char line[256];
  auto row = [&](const char* label, const TraceOverlap& m) {
    std::snprintf(line, sizeof line, "%6s %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %12.1f %8.1f\n",
                  label, m.span, m.busy, m.idle, m.compute, m.comm, m.overlapped_comm,
                  m.exposed_comm, m.overlap_pct);
    os << line;
  };
  std::snprintf(line, sizeof line, "%6s %12s %12s %12s %12s %12s %12s %12s %8s\n", "rank",
                "span_us", "busy_us", "idle_us", "compute_us", "comm_us", "overlap_us",
                "exposed_us", "overlap%");
  os << line;
  for (const RankReport& r : reports) row(std::to_string(r.rank).c_str(), r.overlap);
  if (reports.size() > 1) row("mean", mean_overlap(reports));

  // Where the time goes: activity per kernel category (mean over ranks) and the idle time.
  const TraceOverlap mean = mean_overlap(reports);
  const KernelBreakdown kb = mean_breakdown(reports);
  double kernel_total = 0;
  for (const CategoryStats& c : kb) kernel_total += c.total_us;
  std::snprintf(line, sizeof line, "\n%-28s %10s %12s %10s %8s\n",
                reports.size() > 1 ? "kernels (mean over ranks)" : "kernels", "count", "total_us",
                "% kernels", "% span");
  os << line;
  auto pct = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
  for (int i = 0; i < kKernelCategories; ++i) {
    const CategoryStats& c = kb[static_cast<std::size_t>(i)];
    std::snprintf(line, sizeof line, "%-28s %10.0f %12.1f %10.1f %8.1f\n",
                  std::string(name_of(static_cast<KernelCategory>(i))).c_str(), c.count,
                  c.total_us, pct(c.total_us, kernel_total), pct(c.total_us, mean.span));
    os << line;
  }
  std::snprintf(line, sizeof line, "%-28s %10s %12.1f %10s %8.1f\n", "idle (nothing running)", "",
                mean.idle, "", pct(mean.idle, mean.span));
  os << line;
  // Kernels of one category on several streams at once count once per stream: the share of the
  // span then passes 100, which reads as an error unless defined where it is printed.
  bool over = false;
  for (const CategoryStats& c : kb) over = over || pct(c.total_us, mean.span) > 100.0;
  os << "% span: the category's summed kernel time over the traced span_us"
     << (over ? "; above 100 where its kernels ran on several streams at once" : "") << "\n";

  const auto colls = sum_collectives(reports);
  if (!colls.empty()) {
    std::snprintf(line, sizeof line, "\n%-28s %8s %12s %10s %14s %10s\n", "collective (all ranks)",
                  "count", "total_us", "mean_us", "bytes", "algbw GB/s");
    os << line;
    for (const CollectiveStats& c : colls) {
      const std::string key = c.kind + " " + c.group;
      const auto bw = c.algbw();
      std::snprintf(line, sizeof line, "%-28s %8lld %12.1f %10.2f %14s %10s\n", key.c_str(),
                    static_cast<long long>(c.count), c.total_us, c.mean_us(),
                    c.bytes ? std::to_string(static_cast<long long>(*c.bytes)).c_str() : "-",
                    bw ? std::to_string(*bw).substr(0, 8).c_str() : "-");
      os << line;
    }
  }

  // Ranges summed over ranks, the largest first.
  std::map<std::string, RangeStats> ranges;
  for (const RankReport& r : reports)
    for (const RangeStats& s : r.ranges) {
      auto [it, added] = ranges.try_emplace(s.name, s);
      if (added) continue;
      it->second.count += s.count;
      it->second.total_us += s.total_us;
      it->second.comm_us += s.comm_us;
      it->second.exposed_comm_us += s.exposed_comm_us;
    }
  std::vector<RangeStats> sorted;
  for (auto& [n, s] : ranges) sorted.push_back(std::move(s));
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.total_us > b.total_us; });
  if (!sorted.empty() && top_ranges > 0) {
    std::snprintf(line, sizeof line, "\n%-40s %8s %12s %12s %12s\n", "range (all ranks)", "count",
                  "total_us", "comm_us", "exposed_us");
    os << line;
    for (std::size_t i = 0; i < sorted.size() && i < static_cast<std::size_t>(top_ranges); ++i) {
      const RangeStats& s = sorted[i];
      std::snprintf(line, sizeof line, "%-40.40s %8lld %12.1f %12.1f %12.1f\n", s.name.c_str(),
                    static_cast<long long>(s.count), s.total_us, s.comm_us, s.exposed_comm_us);
      os << line;
    }
    if (sorted.size() > static_cast<std::size_t>(top_ranges))
      os << "(" << sorted.size() - top_ranges << " more ranges in the JSON output)\n";
  }
  SkipCounts k;
  for (const RankReport& r : reports) {
    k.missing_fields += r.skipped.missing_fields;
    k.unknown_kind += r.skipped.unknown_kind;
    k.ignored += r.skipped.ignored;
  }
  os << "\nevents skipped: " << k.missing_fields << " missing fields, " << k.unknown_kind
     << " of unknown kind; " << k.ignored << " ignored (metadata, CPU ops, flows, API calls)\n";
}

}  // namespace ovb::trace
