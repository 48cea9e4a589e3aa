// The predicted iteration as a trace in the suite's own format (docs/trace-format.md, "Predicted
// traces"): the spans of simulate() written as one rank whose streams are tracks - compute
// spans and collectives as kernels (collectives with kind, group, bytes and ranks, so that
// `ovb-trace analyze` counts them as communication), the compute stream's exposed waits as
// synchronisations, the iteration, its phases and layers as GPU ranges. `ovb-trace analyze` then
// reports the model's terms: compute = compute + interference, exposed communication = exposed.
// Written by `ovb-model explain --timeline FILE`.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ovb/model/machine.hpp"
#include "ovb/model/predict.hpp"
#include "ovb/model/timeline.hpp"

namespace ovb::model {

// p's iteration replayed with its spans (simulate() with the list).
std::vector<Span> predicted_spans(const Prediction& p, const Machine& mc);

// Writes the trace to `path` ("-": standard output; OutputFile's rules). `context` goes into the
// file's context block, with "prediction" (summary_json(p)) and "ranks" (every rank of the grid
// runs this schedule) added. Throws Error / UsageError naming the file.
void write_timeline_trace(const std::string& path, const Prediction& p,
                          const std::vector<Span>& spans, nlohmann::json context);

}  // namespace ovb::model
