// Calculon's predictions beside ovb-model validate's: the file that the outside script
// analysis/validation/calculon/run_calculon.py writes (Calculon's seconds per iteration of the
// published runs it can express), and Calculon's error on a validation row by ovb-model's rule.
#pragma once

#include <map>
#include <string>

#include "ovb/model/validate.hpp"

namespace ovb::model {

// Calculon's predicted seconds per iteration by run id ({"runs": [{"id",
// "predicted_iteration_s"}, ...]}); throws UsageError naming the field.
using SecondToolTimes = std::map<std::string, double>;
// analysis/validation/calculon_results.json of the source tree (beside the validation file).
std::string default_calculon_file();
SecondToolTimes load_calculon_results(const std::string& path);
// Sets row.calculon_s and row.calculon_error_pct when `times` has the row's run: the row's
// predicted FLOP count over Calculon's time against the published figure, i.e.
// 100 (published / Calculon - 1) in time, positive when Calculon is faster.
void add_second_tool(ValidationRow& row, const SecondToolTimes& times);

}  // namespace ovb::model
