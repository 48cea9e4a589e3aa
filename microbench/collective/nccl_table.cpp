// nccl-tests-style table of ovb-collective results (see nccl_table.hpp).
#include "collective/nccl_table.hpp"

#include <cstdio>
#include <tuple>

#include "harness/comm_options.hpp"
#include "ovb/dtype.hpp"

namespace ovb::mb {

namespace {
// The record to show for a benchmark: its median aggregate, else its (last) plain run.
std::map<std::string, const RunRecord*> chosen(const std::vector<RunRecord>& records) {
  std::map<std::string, const RunRecord*> best;
  for (const RunRecord& r : records) {
    const bool median = r.aggregate && r.aggregate_name == "median";
    if (r.aggregate && !median) continue;
    const RunRecord*& slot = best[r.family];
    if (median || !slot || !slot->aggregate) slot = &r;
  }
  return best;
}

std::string cell(const RunRecord* r) {
  char buf[96];
  if (!r) return "          -       -       -       -";
  if (r->error) return "    skipped       -       -       -";
  const auto v = [&](const char* k) {
    const auto it = r->counters.find(k);
    return it == r->counters.end() ? 0.0 : it->second;
  };
  std::snprintf(buf, sizeof(buf), " %10.2f %7.2f %7.2f %7.0f", v("time_max_us"), v("algbw"),
                v("busbw"), v("wrong"));
  return buf;
}
}  // namespace

void print_nccl_table(std::ostream& out, const std::vector<RunRecord>& records,
                      const std::map<std::string, CollPoint>& points) {
  const auto shown = chosen(records);
  // Block key: kind, dtype, group, CTA text; row key: bytes; column: in place.
  using Block = std::tuple<int, int, std::string, std::string>;
  std::map<Block, std::map<std::size_t, std::pair<const RunRecord*, const RunRecord*>>> table;
  std::map<Block, const CollPoint*> block_point;
  std::vector<std::string> skipped;
  for (const auto& [name, p] : points) {
    const auto it = shown.find(name);
    if (it == shown.end()) continue;  // filtered out
    const Block b{static_cast<int>(p.kind), static_cast<int>(p.type), p.group.name(),
                  cta_text(p.cfg)};
    auto& row = table[b][p.bytes];
    (p.in_place ? row.second : row.first) = it->second;
    block_point[b] = &p;
    if (it->second->error) skipped.push_back(name + ": " + it->second->error_message);
  }
  for (const auto& [b, rows] : table) {
    const CollPoint& p = *block_point[b];
    int ranks = 0;
    double busbw_sum = 0;
    int busbw_n = 0;
    for (const auto& [bytes, cols] : rows)
      for (const RunRecord* r : {cols.first, cols.second})
        if (r && !r->error) {
          ranks = static_cast<int>(r->counters.count("ranks") ? r->counters.at("ranks") : 0);
          busbw_sum += r->counters.count("busbw") ? r->counters.at("busbw") : 0;
          ++busbw_n;
        }
    out << "#\n# " << name_of(p.kind) << "  dtype=" << name_of(p.type)
        << "  group=" << p.group.name() << " (" << ranks << " ranks)  " << cta_text(p.cfg) << "\n";
    out << "#                                        out-of-place                          "
           "in-place\n"
           "#       size         count    type   redop       time   algbw   busbw  #wrong       "
           "time   algbw   busbw  #wrong\n"
           "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)              "
           "(us)  (GB/s)  (GB/s)\n";
    for (const auto& [bytes, cols] : rows) {
      const RunRecord* any = cols.first ? cols.first : cols.second;
      const double count = any && any->counters.count("count") ? any->counters.at("count") : 0;
      char head[64];
      std::snprintf(head, sizeof(head), "%12zu  %12.0f  %6s  %6s", bytes, count,
                    std::string(name_of(p.type)).c_str(),
                    p.kind == CollKind::all_gather ? "none" : "sum");
      out << head << cell(cols.first) << cell(cols.second) << "\n";
    }
    char avg[64];
    std::snprintf(avg, sizeof(avg), "%.3f", busbw_n ? busbw_sum / busbw_n : 0.0);
    out << "# Avg bus bandwidth    : " << avg << "  (time: max over ranks)\n";
  }
  for (const std::string& s : skipped) out << "# skipped " << s << "\n";
  out.flush();
}

}  // namespace ovb::mb
