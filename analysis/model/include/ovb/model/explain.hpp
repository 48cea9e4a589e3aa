// One configuration term by term (ovb-model explain): every GEMM with its shape, throughput and
// source; attention and memory-bound work; every collective of one block and of the head with
// its group, stride, placement, bytes, bandwidth, latency and time; overlap (exposed time per
// group and kind, interference); memory per GPU; the total.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "ovb/model/predict.hpp"

namespace ovb::model {

std::string explain_text(const Prediction& p);
nlohmann::json explain_json(const Prediction& p);

}  // namespace ovb::model
