// The written forms of a trace analysis: its JSON (results/SCHEMA.md "Trace analysis") and the text
// table ovb-trace analyze prints (see analysis_report.hpp).
#include "analysis_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ovb::trace {

namespace {

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

// Counts of the "streams serialized" finding (serialization.hpp); the finding itself is
// `streams_serialized`, null when the trace could not tell (no launch calls).
nlohmann::json serialization_json(const SerializationStats& s) {
  return {{"comm_kernels", s.comm_kernels},
          {"with_launch", s.with_launch},
          {"in_flight_with_compute", s.in_flight},
          {"overlapped", s.overlapped},
          {"serialized", s.serialized},
          {"streams_serialized",
           s.checked() ? nlohmann::json(s.streams_serialized()) : nlohmann::json(nullptr)}};
}

// The findings of the analysis: what a reader should know before reading the numbers.
nlohmann::json findings_json(const std::vector<RankReport>& reports) {
  nlohmann::json out = nlohmann::json::array();
  const SerializationStats all = total_serialization(reports);
  if (all.streams_serialized()) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankReport& r : reports)
      if (r.serialization.streams_serialized()) ranks.push_back(r.rank);
    out.push_back({{"finding", "streams serialized"},
                   {"ranks", std::move(ranks)},
                   {"serialized", all.serialized},
                   {"in_flight_with_compute", all.in_flight},
                   {"message", serialization_note(all)}});
  }
  return out;
}

nlohmann::json steady_json(const SteadyState& s) {
  return {{"iterations_marked", s.iterations},
          {"warmup_excluded", s.warmup},
          {"iterations_analyzed",
           s.iterations == 0 ? nlohmann::json(nullptr) : nlohmann::json(s.analyzed())}};
}

}  // namespace

nlohmann::json report_json(const std::vector<RankReport>& reports,
                           const std::vector<std::string>& inputs) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankReport& r : reports) {
    nlohmann::json j = {
        {"rank", r.rank}, {"path", r.path}, {"steady_state", steady_json(r.steady)}};
    j.update(overlap_json(r.overlap));
    j["collectives"] = nlohmann::json::array();
    for (const CollectiveStats& c : r.collectives) j["collectives"].push_back(collective_json(c));
    j["kernel_breakdown"] = breakdown_json(r.kernels, r.overlap);
    j["serialization"] = serialization_json(r.serialization);
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
  }
  const SkipCounts skipped = total_skipped(reports);
  nlohmann::json summary = {{"ranks", reports.size()}};
  if (!reports.empty()) summary["steady_state"] = steady_json(reports.front().steady);
  summary.update(overlap_json(mean_overlap(reports)));
  summary["kernel_breakdown"] = breakdown_json(mean_breakdown(reports), mean_overlap(reports));
  summary["collectives"] = nlohmann::json::array();
  for (const CollectiveStats& c : sum_collectives(reports))
    summary["collectives"].push_back(collective_json(c));
  summary["serialization"] = serialization_json(total_serialization(reports));
  return {{"inputs", inputs},
          {"findings", findings_json(reports)},
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
  if (!reports.empty()) {
    const SteadyState& s = reports.front().steady;
    if (s.iterations > 0)
      os << "steady state: " << s.analyzed() << " of " << s.iterations
         << " marked iterations (the first " << s.warmup << " left out as warm-up)\n\n";
    else
      os << "no iteration marks: the whole trace, warm-up included\n\n";
  }
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
                  std::string(name_of(static_cast<KernelCategory>(i))).c_str(), c.count, c.total_us,
                  pct(c.total_us, kernel_total), pct(c.total_us, mean.span));
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
  if (const std::string note = serialization_note(total_serialization(reports)); !note.empty())
    os << "\n" << note << "\n";
  const SkipCounts k = total_skipped(reports);
  os << "\nevents skipped: " << k.missing_fields << " missing fields, " << k.unknown_kind
     << " of unknown kind; " << k.ignored << " ignored (metadata, CPU ops, flows, API calls)\n";
}

}  // namespace ovb::trace
