// The written forms of a trace analysis (analysis.hpp): the JSON of results/SCHEMA.md "Trace
// analysis" and the text table that `ovb-trace analyze` prints.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "analysis.hpp"

namespace ovb::trace {

// { "inputs", "ranks": [...], "summary": {...}, "skipped": {...} } (the caller adds "context").
nlohmann::json report_json(const std::vector<RankReport>& reports,
                           const std::vector<std::string>& inputs);

// Per-rank table, mean row, collectives and the top `top_ranges` ranges summed over ranks.
void print_report(std::ostream& os, const std::vector<RankReport>& reports, int top_ranges);

}  // namespace ovb::trace
