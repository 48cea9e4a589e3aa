// CUDA_DEVICE_MAX_CONNECTIONS against the streams a run uses: with 1, every stream of the process
// feeds one hardware queue, so a collective launched before a GEMM on another stream runs wholly
// before or after it - no overlap, and a high-priority communication stream cannot help
// (Megatron-LM sets 1 on purpose, for its launch order). gpt4d and ovb-overlap check it at start,
// warn, and record it in their result's context (results/SCHEMA.md "Context").
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ovb {

struct DeviceConnections {
  std::optional<int> value;  // the variable; nullopt when unset (the driver's default, 8)
  bool applies = false;      // a CUDA backend: hardware queues exist (host backend: n/a)
  int streams = 0;           // streams the run uses
  std::vector<std::string> warnings;
};

// env_value: the variable's text, nullptr when unset; backend: "cuda" or "host". Throws
// UsageError for a value that is not an integer 1..32 (the driver's range).
DeviceConnections check_device_connections(const char* env_value, std::string_view backend,
                                           int streams);

// Adds "device_max_connections" (the value, null when unset) and appends the warnings to
// "warnings" (created when absent) of a result's context.
void record_device_connections(nlohmann::json& context, const DeviceConnections& c);

}  // namespace ovb
