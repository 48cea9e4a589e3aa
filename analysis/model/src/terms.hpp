// Per (group, collective kind) communication terms, predicted and measured, shared by `ovb-model
// compare` (compare.cpp) and `gpt4d --predict` (run_prediction.cpp): the model's timeline terms
// and gpt4d's summary.collectives, both per iteration. Private to the model library.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>

#include "ovb/model/predict.hpp"

namespace ovb::model::detail {

using TermKey = std::pair<std::string, std::string>;  // (group, kind)

struct Term {
  double count = 0, bytes = 0, time_ms = 0, exposed_ms = 0;
};

// "z-allgather" is the Z group on its own communicator (gpt4d's all-gather stream); other names
// are the group's.
std::string group_name(std::string g);

// A number field of j, or dflt when absent or not a number.
double num(const nlohmann::json& j, const char* key, double dflt = 0);

// error_pct(predicted, measured), or null when nothing was measured.
nlohmann::json error_or_null(double predicted, double measured);

// The model's terms per iteration for every (group, kind) it issues (count > 0): calls, time
// alone, exposed time, and bytes summed over the plan's slots.
std::map<TermKey, Term> predicted_terms(const Prediction& p);

// gpt4d's summary.collectives summed per (group, kind); empty when it has none.
std::map<TermKey, Term> gpt4d_terms(const nlohmann::json& summary);

}  // namespace ovb::model::detail
