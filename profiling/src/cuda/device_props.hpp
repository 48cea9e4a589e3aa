// deviceProperties entries of the trace header (Kineto's keys), read through the CUDA driver API,
// which every CUDA program has loaded - the injected library links nothing else of CUDA's.
#pragma once

#include <nlohmann/json.hpp>

namespace ovb::trace::cuda {

// {"id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "numSms", ...}; only "id" when
// the driver cannot say.
nlohmann::ordered_json device_properties(int ordinal);

}  // namespace ovb::trace::cuda
